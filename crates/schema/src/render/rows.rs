//! Reference-row statements (INSERT, UPDATE, DELETE of declared rows). Apart from the schema
//! statements because they change data, not structure, and are the same text on both dialects.

use super::sql::Sql;
use super::stmt;
use crate::diff::RowChange;
use crate::plan::{PlannedStatement, Severity};

pub(super) fn insert_row(sql: Sql, r: &RowChange) -> PlannedStatement {
    let columns: Vec<String> = r.values.iter().map(|(c, _)| sql.ident(c)).collect();
    let values: Vec<String> = r.values.iter().map(|(_, v)| sql.literal(v)).collect();
    let text = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        sql.qualified(&r.table),
        columns.join(", "),
        values.join(", ")
    );
    stmt(text, Severity::Safe, "inserts a declared reference row")
}

pub(super) fn update_row(sql: Sql, r: &RowChange) -> PlannedStatement {
    let set: Vec<String> = r
        .values
        .iter()
        .map(|(c, v)| format!("{} = {}", sql.ident(c), sql.literal(v)))
        .collect();
    let text = format!(
        "UPDATE {} SET {} WHERE {}",
        sql.qualified(&r.table),
        set.join(", "),
        sql.key_predicate(&r.key)
    );
    stmt(
        text,
        Severity::Warning,
        "overwrites values of a declared reference row",
    )
}

pub(super) fn delete_row(sql: Sql, r: &RowChange) -> PlannedStatement {
    let text = format!(
        "DELETE FROM {} WHERE {}",
        sql.qualified(&r.table),
        sql.key_predicate(&r.key)
    );
    stmt(
        text,
        Severity::Destructive,
        "deletes a reference row no longer declared",
    )
}
