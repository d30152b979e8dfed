//! PostgreSQL statements.

use std::collections::BTreeSet;

use super::severity::{needs_using, type_change};
use super::sql::{Sql, identity_kind, identity_options, pg_column};
use super::stmt;
use crate::diff::{ColumnAspect, ColumnChange, Constraint};
use crate::model::{Column, Dialect, Extension, IdentityOptions, Index, QualifiedName, Table};
use crate::plan::{PlannedStatement, Severity};

pub(super) mod concurrent;
mod enums;
pub(super) mod validate;

pub(super) use enums::{change_enum, create_enum, drop_enum};

const SQL: Sql = Sql {
    dialect: Dialect::Postgres,
};

pub(super) fn create_schema(name: &str) -> PlannedStatement {
    let sql = format!("CREATE SCHEMA IF NOT EXISTS {}", SQL.ident(name));
    stmt(sql, Severity::Safe, "creates a schema")
}

pub(super) fn create_extension(ext: &Extension) -> PlannedStatement {
    let mut sql = format!("CREATE EXTENSION IF NOT EXISTS {}", SQL.ident(&ext.name));
    if let Some(schema) = &ext.schema {
        sql.push_str(&format!(" SCHEMA {}", SQL.ident(schema)));
    }
    if let Some(version) = &ext.version {
        sql.push_str(&format!(" VERSION {}", SQL.string(version)));
    }
    stmt(sql, Severity::Safe, "creates an extension")
}

fn alter_column(table: &QualifiedName, column: &str) -> String {
    format!(
        "ALTER TABLE {} ALTER COLUMN {}",
        SQL.qualified(table),
        SQL.ident(column)
    )
}

/// A table's PRIMARY KEY, UNIQUE and CHECK clauses, as CREATE TABLE and CREATE TABLE … PARTITION
/// OF take them (foreign keys come later).
pub(super) fn constraint_clauses(t: &Table) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(pk) = &t.primary_key {
        parts.push(format!(
            "CONSTRAINT {} PRIMARY KEY {}",
            SQL.ident(&pk.name),
            SQL.columns(&pk.columns)
        ));
    }
    for u in t.uniques.values() {
        parts.push(format!(
            "CONSTRAINT {} UNIQUE {}",
            SQL.ident(&u.name),
            SQL.columns(&u.columns)
        ));
    }
    for c in t.checks.values() {
        parts.push(format!(
            "CONSTRAINT {} CHECK ({})",
            SQL.ident(&c.name),
            c.expression
        ));
    }
    parts
}

/// CREATE TABLE with columns, primary key, uniques and checks (foreign keys come later), then comments.
pub(super) fn create_table(t: &Table, sequences: &BTreeSet<QualifiedName>) -> Vec<PlannedStatement> {
    let mut parts: Vec<String> = t
        .columns
        .iter()
        .map(|c| pg_column(&t.name, c, sequences))
        .collect();
    parts.extend(constraint_clauses(t));
    let sql = format!("CREATE TABLE {} ({})", SQL.qualified(&t.name), parts.join(", "));
    let mut out = vec![stmt(sql, Severity::Safe, "creates a table")];
    if t.comment.is_some() {
        out.push(table_comment(&t.name, t.comment.as_deref()));
    }
    for c in t.columns.iter().filter(|c| c.comment.is_some()) {
        out.push(column_comment(&t.name, c));
    }
    out
}

pub(super) fn drop_table(t: &Table) -> PlannedStatement {
    let sql = format!("DROP TABLE {}", SQL.qualified(&t.name));
    stmt(sql, Severity::Destructive, "drops a table and its rows")
}

pub(super) fn table_comment(table: &QualifiedName, comment: Option<&str>) -> PlannedStatement {
    let text = comment.map_or_else(|| "NULL".to_owned(), |c| SQL.string(c));
    let sql = format!("COMMENT ON TABLE {} IS {text}", SQL.qualified(table));
    stmt(sql, Severity::Safe, "sets a table comment")
}

fn column_comment(table: &QualifiedName, c: &Column) -> PlannedStatement {
    let text = c
        .comment
        .as_deref()
        .map_or_else(|| "NULL".to_owned(), |t| SQL.string(t));
    let sql = format!(
        "COMMENT ON COLUMN {}.{} IS {text}",
        SQL.qualified(table),
        SQL.ident(&c.name)
    );
    stmt(sql, Severity::Safe, "sets a column comment")
}

pub(super) fn add_column(
    table: &QualifiedName,
    c: &Column,
    sequences: &BTreeSet<QualifiedName>,
) -> Vec<PlannedStatement> {
    let sql = format!(
        "ALTER TABLE {} ADD COLUMN {}",
        SQL.qualified(table),
        pg_column(table, c, sequences)
    );
    let mut out = vec![if c.nullable {
        stmt(sql, Severity::Safe, "adds a nullable column")
    } else {
        stmt(
            sql,
            Severity::Warning,
            "adds a NOT NULL column: fails on existing rows without a default",
        )
    }];
    if c.comment.is_some() {
        out.push(column_comment(table, c));
    }
    out
}

pub(super) fn drop_column(table: &QualifiedName, c: &Column) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} DROP COLUMN {}",
        SQL.qualified(table),
        SQL.ident(&c.name)
    );
    stmt(sql, Severity::Destructive, "drops a column and its values")
}

/// One statement per changed aspect, ordered so each step is valid after the previous one.
pub(super) fn modify_column(change: &ColumnChange) -> Vec<PlannedStatement> {
    let (from, to) = (&change.from, &change.to);
    let has = |a: ColumnAspect| change.changes.contains(&a);
    let alter = alter_column(&change.table, &to.name);
    let mut out = Vec::new();
    if has(ColumnAspect::Generation) {
        match (&from.generated, &to.generated) {
            (Some(_), None) => out.push(stmt(
                format!("{alter} DROP EXPRESSION"),
                Severity::Warning,
                "stops computing a generated column: it keeps its values and becomes writable",
            )),
            // PostgreSQL 15 cannot make a column generated or change its expression in place; the
            // planner refuses those plans, and drift reports them at the cost of a rebuild.
            _ => {
                out.push(drop_column(&change.table, from));
                out.extend(add_column(&change.table, to, &BTreeSet::new()));
                return out;
            }
        }
    }
    // A default the server cannot cast with the column (text to an enum needs USING) goes before
    // the type changes and comes back after it.
    let recast_default =
        has(ColumnAspect::Type) && from.default.is_some() && needs_using(&from.data_type, &to.data_type);
    if recast_default || has(ColumnAspect::Default) && (to.default.is_none() || has(ColumnAspect::Type)) {
        out.push(stmt(
            format!("{alter} DROP DEFAULT"),
            Severity::Warning,
            "drops a column default",
        ));
    }
    if has(ColumnAspect::Identity) && from.identity.is_some() && to.identity.is_none() {
        out.push(stmt(
            format!("{alter} DROP IDENTITY"),
            Severity::Warning,
            "drops an identity",
        ));
    }
    if has(ColumnAspect::Type) {
        let target = SQL.data_type(&to.data_type);
        let mut sql = format!("{alter} TYPE {target}");
        // A new type without COLLATE would take that type's default collation.
        if let Some(c) = &to.collation {
            sql.push_str(&format!(" COLLATE {}", SQL.ident(c)));
        }
        if needs_using(&from.data_type, &to.data_type) {
            let col = SQL.ident(&to.name);
            let via = matches!(from.data_type, crate::model::DataType::Enum(_));
            sql.push_str(&format!(
                " USING {col}{}::{target}",
                if via { "::text" } else { "" }
            ));
        }
        let (severity, why) = type_change(&from.data_type, &to.data_type);
        out.push(stmt(sql, severity, why));
    }
    if has(ColumnAspect::Collation) && !has(ColumnAspect::Type) {
        let collation = to.collation.as_deref().unwrap_or("default");
        out.push(stmt(
            format!(
                "{alter} TYPE {} COLLATE {}",
                SQL.data_type(&to.data_type),
                SQL.ident(collation)
            ),
            Severity::Warning,
            "changes the column's collation: its indexes are rebuilt and its sort order changes",
        ));
    }
    if has(ColumnAspect::Nullability) {
        out.push(if to.nullable {
            stmt(
                format!("{alter} DROP NOT NULL"),
                Severity::Destructive,
                "drops NOT NULL",
            )
        } else {
            stmt(
                format!("{alter} SET NOT NULL"),
                Severity::Warning,
                "sets NOT NULL: fails on existing NULLs",
            )
        });
    }
    if let Some(d) = to
        .default
        .as_ref()
        .filter(|_| recast_default || has(ColumnAspect::Default))
    {
        let sql = format!("{alter} SET DEFAULT {}", SQL.default(d));
        out.push(stmt(sql, Severity::Safe, "sets a column default"));
    }
    if has(ColumnAspect::Identity) {
        match (from.identity, to.identity) {
            (None, Some(kind)) => {
                let options = to
                    .identity_options
                    .as_ref()
                    .map(|o| format!(" ({})", identity_options(o, "")))
                    .unwrap_or_default();
                out.push(stmt(
                    format!(
                        "{alter} ADD GENERATED {} AS IDENTITY{options}",
                        identity_kind(kind)
                    ),
                    Severity::Warning,
                    "makes the column an identity",
                ));
            }
            (Some(old), Some(kind)) => {
                let mut clauses = Vec::new();
                if old != kind {
                    clauses.push(format!("SET GENERATED {}", identity_kind(kind)));
                }
                if from.identity_options != to.identity_options {
                    // Back to the defaults is the defaults written out, for the column's type.
                    let options = to
                        .identity_options
                        .or_else(|| to.data_type.sequence_type().map(IdentityOptions::defaults));
                    if let Some(o) = options {
                        clauses.push(identity_options(&o, "SET "));
                    }
                }
                out.push(stmt(
                    format!("{alter} {}", clauses.join(" ")),
                    Severity::Warning,
                    "changes how the identity generates values",
                ));
            }
            _ => {}
        }
    }
    if has(ColumnAspect::Comment) {
        out.push(column_comment(&change.table, to));
    }
    out
}

/// `COMMENT ON INDEX`; an index lives in its table's schema.
pub(super) fn index_comment(table: &QualifiedName, index: &str, comment: Option<&str>) -> PlannedStatement {
    let text = comment.map_or_else(|| "NULL".to_owned(), |c| SQL.string(c));
    let name = QualifiedName::new(&table.schema, index);
    let sql = format!("COMMENT ON INDEX {} IS {text}", SQL.qualified(&name));
    stmt(sql, Severity::Safe, "sets an index comment")
}

pub(super) fn create_index(table: &QualifiedName, i: &Index) -> PlannedStatement {
    let mut sql = format!(
        "CREATE {}INDEX {} ON {}",
        if i.unique { "UNIQUE " } else { "" },
        SQL.ident(&i.name),
        SQL.qualified(table)
    );
    if let Some(method) = &i.method {
        sql.push_str(&format!(" USING {method}"));
    }
    sql.push_str(&format!(" {}", SQL.index_parts(&i.parts)));
    if !i.include.is_empty() {
        let include: Vec<String> = i.include.iter().map(|c| SQL.ident(c)).collect();
        sql.push_str(&format!(" INCLUDE ({})", include.join(", ")));
    }
    if i.nulls_not_distinct {
        sql.push_str(" NULLS NOT DISTINCT");
    }
    if !i.storage.is_empty() {
        // Each value quoted, which the server accepts for every parameter's type.
        let with: Vec<String> = i
            .storage
            .iter()
            .map(|p| match p.split_once('=') {
                Some((name, value)) => format!("{name}='{}'", value.replace('\'', "''")),
                None => p.clone(),
            })
            .collect();
        sql.push_str(&format!(" WITH ({})", with.join(", ")));
    }
    if let Some(predicate) = &i.predicate {
        sql.push_str(&format!(" WHERE {predicate}"));
    }
    if i.unique {
        stmt(
            sql,
            Severity::Warning,
            "creates a unique index: fails on duplicate rows",
        )
    } else {
        stmt(sql, Severity::Safe, "creates an index")
    }
}

pub(super) fn drop_index(table: &QualifiedName, i: &Index) -> PlannedStatement {
    let name = QualifiedName::new(table.schema.clone(), i.name.clone());
    let sql = format!("DROP INDEX {}", SQL.qualified(&name));
    if i.unique {
        stmt(
            sql,
            Severity::Destructive,
            "drops an index that enforces uniqueness",
        )
    } else {
        stmt(
            sql,
            Severity::Warning,
            "drops an index: queries using it slow down",
        )
    }
}

pub(super) fn add_constraint(table: &QualifiedName, c: &Constraint) -> PlannedStatement {
    let body = match c {
        Constraint::PrimaryKey(pk) => format!("PRIMARY KEY {}", SQL.columns(&pk.columns)),
        Constraint::Unique(u) => format!("UNIQUE {}", SQL.columns(&u.columns)),
        Constraint::Check(ch) => format!("CHECK ({})", ch.expression),
        Constraint::ForeignKey(fk) => SQL.foreign_key(fk),
    };
    let sql = format!(
        "ALTER TABLE {} ADD CONSTRAINT {} {body}",
        SQL.qualified(table),
        SQL.ident(c.name())
    );
    stmt(
        sql,
        Severity::Warning,
        "adds a constraint: fails on rows that violate it",
    )
}

pub(super) fn drop_constraint(table: &QualifiedName, c: &Constraint) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} DROP CONSTRAINT {}",
        SQL.qualified(table),
        SQL.ident(c.name())
    );
    stmt(sql, Severity::Destructive, "drops a constraint")
}
