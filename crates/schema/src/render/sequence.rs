//! PostgreSQL sequence statements: created (and altered) before the tables whose defaults draw
//! from them, given their owner once the owning column exists, dropped after the tables.

use super::sql::Sql;
use super::{Out, stmt};
use crate::diff::{DiffCategory as C, SchemaDiff};
use crate::model::{Dialect, Sequence};
use crate::plan::{PlannedStatement, Severity};

const SQL: Sql = Sql {
    dialect: Dialect::Postgres,
};

/// Creates the sequences added and alters the options of the ones changed.
pub(super) fn creates(diff: &SchemaDiff, out: &mut Out) {
    for s in &diff.sequences_added {
        let sql = format!("CREATE SEQUENCE {} {}", SQL.qualified(&s.name), options(s));
        out.push(C::SequencesAdded, stmt(sql, Severity::Safe, "creates a sequence"));
        if s.comment.is_some() {
            out.push(C::SequencesAdded, comment(s));
        }
    }
    for c in &diff.sequences_modified {
        if !same_options(&c.from, &c.to) {
            let sql = format!("ALTER SEQUENCE {} {}", SQL.qualified(&c.to.name), options(&c.to));
            out.push(
                C::SequencesModified,
                stmt(
                    sql,
                    Severity::Warning,
                    "changes a sequence's options: the values it hands out change (its current value stays)",
                ),
            );
        }
        if c.from.comment != c.to.comment {
            out.push(C::SequencesModified, comment(&c.to));
        }
    }
}

/// `OWNED BY` for new sequences and changed owners; runs once the owning columns exist.
pub(super) fn owners(diff: &SchemaDiff, out: &mut Out) {
    let added = diff
        .sequences_added
        .iter()
        .filter(|s| s.owned_by.is_some())
        .map(|s| (C::SequencesAdded, s));
    let changed = diff
        .sequences_modified
        .iter()
        .filter(|c| c.from.owned_by != c.to.owned_by)
        .map(|c| (C::SequencesModified, &c.to));
    for (category, s) in added.chain(changed) {
        out.push(category, owned_by(s));
    }
}

/// Drops the sequences no longer declared.
pub(super) fn drops(diff: &SchemaDiff, out: &mut Out) {
    for s in &diff.sequences_removed {
        let sql = format!("DROP SEQUENCE {}", SQL.qualified(&s.name));
        out.push(
            C::SequencesRemoved,
            stmt(
                sql,
                Severity::Destructive,
                "drops a sequence and its current value",
            ),
        );
    }
}

fn same_options(a: &Sequence, b: &Sequence) -> bool {
    (a.data_type, a.start, a.increment, a.min, a.max, a.cache, a.cycle)
        == (b.data_type, b.start, b.increment, b.min, b.max, b.cache, b.cycle)
}

/// Every option, resolved: what is written is what the catalog will hold.
fn options(s: &Sequence) -> String {
    format!(
        "AS {} INCREMENT BY {} MINVALUE {} MAXVALUE {} START WITH {} CACHE {} {}",
        s.data_type.sql(),
        s.increment,
        s.min,
        s.max,
        s.start,
        s.cache,
        if s.cycle { "CYCLE" } else { "NO CYCLE" }
    )
}

fn owned_by(s: &Sequence) -> PlannedStatement {
    let target = match &s.owned_by {
        Some(o) => format!("{}.{}", SQL.qualified(&o.table), SQL.ident(&o.column)),
        None => "NONE".to_owned(),
    };
    let sql = format!("ALTER SEQUENCE {} OWNED BY {target}", SQL.qualified(&s.name));
    stmt(
        sql,
        Severity::Safe,
        "ties a sequence to the column it is dropped with",
    )
}

fn comment(s: &Sequence) -> PlannedStatement {
    let text = s
        .comment
        .as_deref()
        .map_or_else(|| "NULL".to_owned(), |c| SQL.string(c));
    let sql = format!("COMMENT ON SEQUENCE {} IS {text}", SQL.qualified(&s.name));
    stmt(sql, Severity::Safe, "sets a sequence comment")
}
