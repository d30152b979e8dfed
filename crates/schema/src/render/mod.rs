//! The planner's renderer: a [`SchemaDiff`] becomes ordered, classified statements for one dialect.
//!
//! Order: schemas → extensions → declared renames (tables, columns, then their indexes and
//! constraints) → policies that go or are rebuilt (dropped) → triggers and views
//! that go or are rebuilt (dropped, views in reverse dependency order) → enums (create, add
//! value, recreate) → domains (create, alter) → routines (create, replace) → sequences (create,
//! alter) → partitions detached (PostgreSQL) → tables (parents first, partitioned tables before
//! their partitions, without foreign keys) → added and modified columns → sequence owners →
//! indexes and index comments → constraints → foreign keys → partitions attached →
//! reference-row inserts and updates → views (dependency order) and triggers created →
//! row-level security, policies, revokes and grants → removals in reverse: row deletes (children
//! first), foreign keys, constraints, indexes, columns, tables, sequences, routines, domains,
//! enums. A modified index or constraint is dropped and created again in its own phase.

mod constraints;
mod domain;
mod indexes;
mod mysql;
mod partition;
mod postgres;
mod program;
mod rename;
mod reuse;
mod rows;
mod security;
mod sequence;
mod severity;
mod sql;
mod stored;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::diff::{ColumnAspect, Constraint, DiffCategory, Finding, SchemaDiff};
use crate::model::{Dialect, QualifiedName};
use crate::plan::{PlannedStatement, Severity};
use indexes::{add_constraint, create_index, drop_constraint, drop_index};
use rows::{delete_row, insert_row, update_row};
use sql::Sql;

pub use mysql::{ONLINE_INDEX, ONLINE_INPLACE, ONLINE_INSTANT};
pub use program::create_routine_statement;
pub use security::create_policy_statement;
pub use severity::is_narrowing;

/// Which server speaks the MySQL dialect; they differ in a few clauses (`DROP CHECK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MysqlFlavor {
    /// MySQL 8.
    #[default]
    Mysql,
    /// MariaDB 10.11+.
    Mariadb,
}

/// A transactional statement.
fn stmt(sql: String, severity: Severity, reason: &str) -> PlannedStatement {
    PlannedStatement {
        sql,
        severity,
        reason: reason.to_owned(),
        transactional: true,
    }
}

/// Which forms the statements take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Forms {
    /// A plan's: an existing table's writers go on where a form allows it (`CONCURRENTLY`).
    LockSafe,
    /// Every statement runs inside a transaction, as a probe's must.
    Transactional,
}

/// The statements for `diff`, in execution order.
pub fn render(diff: &SchemaDiff, dialect: Dialect, flavor: MysqlFlavor) -> Vec<PlannedStatement> {
    render_tagged(diff, dialect, flavor, Forms::LockSafe)
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

/// [`render`] with every statement in a form that runs inside a transaction: for the executor's
/// probes, which build the desired objects in a transaction they roll back.
pub fn render_in_transaction(
    diff: &SchemaDiff,
    dialect: Dialect,
    flavor: MysqlFlavor,
) -> Vec<PlannedStatement> {
    render_tagged(diff, dialect, flavor, Forms::Transactional)
        .into_iter()
        .map(|(_, s)| s)
        .collect()
}

/// The drift summary: per non-empty category, its count and the highest severity of its statements.
pub fn findings(diff: &SchemaDiff, dialect: Dialect, flavor: MysqlFlavor) -> Vec<Finding> {
    let tagged = render_tagged(diff, dialect, flavor, Forms::LockSafe);
    diff.counts()
        .into_iter()
        .map(|(category, count)| Finding {
            category,
            count,
            severity: tagged
                .iter()
                .filter(|(c, _)| *c == category)
                .map(|(_, s)| s.severity)
                .max()
                // No statement can change a partition key: the table must be rebuilt by hand.
                .unwrap_or(if category == DiffCategory::PartitionKeysModified {
                    Severity::Destructive
                } else {
                    Severity::Safe
                }),
        })
        .collect()
}

struct Out(Vec<(DiffCategory, PlannedStatement)>);

impl Out {
    fn push(&mut self, category: DiffCategory, s: PlannedStatement) {
        self.0.push((category, s));
    }

    fn extend(&mut self, category: DiffCategory, s: impl IntoIterator<Item = PlannedStatement>) {
        self.0.extend(s.into_iter().map(|s| (category, s)));
    }
}

fn render_tagged(
    diff: &SchemaDiff,
    dialect: Dialect,
    flavor: MysqlFlavor,
    forms: Forms,
) -> Vec<(DiffCategory, PlannedStatement)> {
    use DiffCategory as C;
    let pg = dialect == Dialect::Postgres;
    let sql = Sql { dialect };
    let mut out = Out(Vec::new());
    if pg {
        for n in &diff.namespaces_added {
            out.push(C::NamespacesAdded, postgres::create_schema(n));
        }
        for e in &diff.extensions_added {
            out.push(C::ExtensionsAdded, postgres::create_extension(e));
        }
    }
    // Everything after a rename names the objects by their new names.
    rename::renames(diff, sql, &mut out);
    if pg {
        security::drops(diff, &mut out);
    }
    program::drops(diff, sql, &mut out);
    if pg {
        for e in &diff.enums_added {
            out.push(C::EnumsAdded, postgres::create_enum(e));
        }
        for e in &diff.enums_modified {
            out.extend(C::EnumsModified, postgres::change_enum(e));
        }
    }
    if pg {
        domain::creates(diff, &mut out, false);
    }
    program::routines(diff, sql, &mut out);
    if pg {
        domain::creates(diff, &mut out, true);
    }
    if pg {
        sequence::creates(diff, &mut out);
        partition::detaches(diff, &mut out);
    }
    for t in &diff.tables_added {
        match dialect {
            Dialect::Postgres => out.extend(
                C::TablesAdded,
                partition::create_table(
                    t,
                    diff.partitions_over_default.contains(&t.name),
                    &diff.sequence_names,
                ),
            ),
            Dialect::Mysql => out.push(C::TablesAdded, mysql::create_table(t)),
        }
    }
    for c in &diff.table_comments_modified {
        let s = match dialect {
            Dialect::Postgres => postgres::table_comment(&c.table, c.to.as_deref()),
            Dialect::Mysql => mysql::table_comment(&c.table, c.to.as_deref()),
        };
        out.push(C::TableCommentsModified, s);
    }
    // Only MySQL tables have a default character set and collation.
    if dialect == Dialect::Mysql {
        for c in &diff.table_options_modified {
            out.push(C::TableOptionsModified, mysql::table_options(c));
        }
    }
    for c in &diff.columns_added {
        match dialect {
            Dialect::Postgres => out.extend(
                C::ColumnsAdded,
                postgres::add_column(&c.table, &c.column, &diff.sequence_names),
            ),
            Dialect::Mysql => out.push(
                C::ColumnsAdded,
                mysql::add_column(&c.table, &c.column, diff.online(&c.table)),
            ),
        }
    }
    for c in &diff.columns_modified {
        match dialect {
            Dialect::Postgres => {
                let mut statements = postgres::modify_column(c);
                let partitioned = diff.partitioned.contains(&c.table);
                if forms == Forms::LockSafe && postgres::validate::sets_not_null_alone(c, partitioned) {
                    statements.retain(|s| !s.sql.ends_with(" SET NOT NULL"));
                    statements.extend(postgres::validate::set_not_null(&c.table, &c.to.name));
                }
                out.extend(C::ColumnsModified, statements);
            }
            // MySQL has no identity: a change in it alone has nothing to say.
            Dialect::Mysql if c.changes.iter().all(|a| *a == ColumnAspect::Identity) => {}
            Dialect::Mysql => out.push(C::ColumnsModified, mysql::modify_column(c)),
        }
    }
    if pg {
        sequence::owners(diff, &mut out);
    }

    let reused = reuse::Reused::of(diff);
    reused.drops(diff, dialect, flavor, &mut out);
    // Indexes: those of new tables, then changed ones (drop + create), then new ones.
    for t in &diff.tables_added {
        for i in t.indexes.values() {
            // A new table has no writers to keep going.
            let mut s = stored::create_index(diff, dialect, &t.name, i);
            if let Some(plain) = s.sql.strip_suffix(ONLINE_INDEX) {
                s.sql = plain.to_owned();
            }
            out.push(C::TablesAdded, s);
        }
    }
    // On PostgreSQL an existing table's writers go on while its indexes change (concurrently);
    // their comments follow them out of the transaction.
    let concurrent = |table: &QualifiedName, i: &crate::model::Index| {
        pg && forms == Forms::LockSafe && postgres::concurrent::applies(i, diff.partitioned.contains(table))
    };
    let mut built_concurrently = std::collections::BTreeSet::new();
    for c in &diff.indexes_modified {
        // The old definition goes inside the transaction (briefly, in catalog order: a column
        // the plan drops there may take it along); the new one is built concurrently after it.
        out.push(
            C::IndexesModified,
            drop_index(dialect, &c.table, &c.from, diff.online(&c.table)),
        );
        if concurrent(&c.table, &c.to) {
            out.push(
                C::IndexesModified,
                postgres::concurrent::create_index(&c.table, &c.to),
            );
            built_concurrently.insert((c.table.clone(), c.to.name.clone()));
        } else {
            out.push(
                C::IndexesModified,
                stored::create_index(diff, dialect, &c.table, &c.to),
            );
        }
    }
    for c in &diff.indexes_added {
        if concurrent(&c.table, &c.index) {
            out.push(
                C::IndexesAdded,
                postgres::concurrent::create_index(&c.table, &c.index),
            );
            built_concurrently.insert((c.table.clone(), c.index.name.clone()));
            continue;
        }
        out.push(
            C::IndexesAdded,
            stored::create_index(diff, dialect, &c.table, &c.index),
        );
    }
    if !pg {
        stored::index_comment_rebuilds(diff, &mut out);
    }
    if pg {
        for t in &diff.tables_added {
            for (index, comment) in &t.index_comments {
                out.push(
                    C::TablesAdded,
                    postgres::index_comment(&t.name, index, Some(comment)),
                );
            }
        }
        for c in &diff.index_comments_modified {
            let mut s = postgres::index_comment(&c.table, &c.index, c.comment.as_deref());
            s.transactional = !built_concurrently.contains(&(c.table.clone(), c.index.clone()));
            out.push(C::IndexesModified, s);
        }
    }

    constraints::adds(diff, dialect, flavor, forms, &mut out);

    if pg {
        partition::attaches(diff, &mut out);
    }
    for r in &diff.rows_inserted {
        out.push(C::RowsInserted, insert_row(sql, r));
    }
    for r in &diff.rows_updated {
        out.push(C::RowsUpdated, update_row(sql, r));
    }

    program::creates(diff, sql, &mut out);
    if pg {
        security::creates(diff, &mut out);
    }

    // Removals, in reverse dependency order.
    for r in &diff.rows_deleted {
        out.push(C::RowsDeleted, delete_row(sql, r));
    }
    for c in diff
        .constraints_removed
        .iter()
        .filter(|c| c.constraint.is_foreign_key())
    {
        out.push(
            C::ConstraintsRemoved,
            drop_constraint(dialect, flavor, &c.table, &c.constraint),
        );
    }
    for (table, fk) in cyclic_foreign_keys(diff) {
        let c = Constraint::ForeignKey(fk.clone());
        out.push(C::TablesRemoved, drop_constraint(dialect, flavor, table, &c));
    }
    for c in diff
        .constraints_removed
        .iter()
        .filter(|c| !c.constraint.is_foreign_key() && !reused.constraint(&c.table, c.constraint.name()))
    {
        out.push(
            C::ConstraintsRemoved,
            drop_constraint(dialect, flavor, &c.table, &c.constraint),
        );
    }
    for c in diff
        .indexes_removed
        .iter()
        .filter(|c| !reused.index(&c.table, &c.index.name))
    {
        out.push(
            C::IndexesRemoved,
            drop_index(dialect, &c.table, &c.index, diff.online(&c.table)),
        );
    }
    for c in &diff.columns_removed {
        let s = match dialect {
            Dialect::Postgres => postgres::drop_column(&c.table, &c.column),
            Dialect::Mysql => mysql::drop_column(&c.table, &c.column),
        };
        out.push(C::ColumnsRemoved, s);
    }
    for t in &diff.tables_removed {
        let s = match dialect {
            Dialect::Postgres => postgres::drop_table(t),
            Dialect::Mysql => mysql::drop_table(t),
        };
        out.push(C::TablesRemoved, s);
    }
    if pg {
        sequence::drops(diff, &mut out);
    }
    program::routine_drops(diff, sql, &mut out);
    if pg {
        domain::drops(diff, &mut out);
        for e in &diff.enums_removed {
            out.push(C::EnumsRemoved, postgres::drop_enum(e));
        }
    }
    out.0
}

/// Foreign keys between dropped tables that point at a table dropped earlier (a cycle): they are
/// dropped first so every DROP TABLE succeeds.
fn cyclic_foreign_keys(diff: &SchemaDiff) -> Vec<(&QualifiedName, &crate::model::ForeignKey)> {
    let position: BTreeMap<&QualifiedName, usize> = diff
        .tables_removed
        .iter()
        .enumerate()
        .map(|(i, t)| (&t.name, i))
        .collect();
    let mut out = Vec::new();
    for (i, t) in diff.tables_removed.iter().enumerate() {
        for fk in t.foreign_keys.values() {
            if position.get(&fk.referenced_table).is_some_and(|j| *j < i) {
                out.push((&t.name, fk));
            }
        }
    }
    out
}
