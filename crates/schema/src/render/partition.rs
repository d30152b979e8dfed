//! PostgreSQL partitioning statements: a partitioned table is created with its key, a partition
//! as `PARTITION OF` its parent (after it: tables come in [`crate::diff::fk_order`]); partitions
//! leave their parents before the tables change and join them after, once their columns and
//! constraints are what the parent needs.

use std::collections::BTreeSet;

use super::sql::Sql;
use super::{Out, postgres, stmt};
use crate::diff::{DiffCategory as C, PartitionChange, SchemaDiff};
use crate::model::{Dialect, PartitionOf, QualifiedName, Table};
use crate::plan::{PlannedStatement, Severity};

const SQL: Sql = Sql {
    dialect: Dialect::Postgres,
};

/// Creates a table: a partition as `PARTITION OF` its parent (its columns are the parent's), a
/// partitioned table with its `PARTITION BY`. `over_default`: the parent has a default partition
/// that creating this one scans.
pub(super) fn create_table(
    t: &Table,
    over_default: bool,
    sequences: &BTreeSet<QualifiedName>,
) -> Vec<PlannedStatement> {
    let Some(of) = &t.partition_of else {
        let mut out = postgres::create_table(t, sequences);
        if let (Some(key), Some(first)) = (&t.partition_by, out.first_mut()) {
            first.sql.push_str(&format!(" PARTITION BY {key}"));
        }
        return out;
    };
    let parts = postgres::constraint_clauses(t);
    let mut sql = format!(
        "CREATE TABLE {} PARTITION OF {}",
        SQL.qualified(&t.name),
        SQL.qualified(&of.parent)
    );
    if !parts.is_empty() {
        sql.push_str(&format!(" ({})", parts.join(", ")));
    }
    sql.push_str(&format!(" {}", of.bound));
    if let Some(key) = &t.partition_by {
        sql.push_str(&format!(" PARTITION BY {key}"));
    }
    let created = if over_default {
        stmt(
            sql,
            Severity::Warning,
            "creates a partition: the server scans the parent's default partition under lock and refuses when it holds rows of the new bound",
        )
    } else {
        stmt(sql, Severity::Safe, "creates a partition")
    };
    let mut out = vec![created];
    if t.comment.is_some() {
        out.push(postgres::table_comment(&t.name, t.comment.as_deref()));
    }
    out
}

/// Detaches the partitions that become plain tables or move (before the tables change).
pub(super) fn detaches(diff: &SchemaDiff, out: &mut Out) {
    for c in &diff.partitions_detached {
        if let Some(from) = &c.from {
            out.push(
                C::PartitionsDetached,
                detach(
                    &c.table,
                    from,
                    "detaches a partition: its rows leave the parent's queries",
                ),
            );
        }
    }
    for c in &diff.partitions_modified {
        if let Some(from) = &c.from {
            out.push(
                C::PartitionsModified,
                detach(
                    &c.table,
                    from,
                    "detaches a partition to attach it with its declared bound",
                ),
            );
        }
    }
}

/// Attaches the plain tables that become partitions and the moved partitions (after the tables
/// change, so their columns and constraints fit the parent).
pub(super) fn attaches(diff: &SchemaDiff, out: &mut Out) {
    let attach_all = |changes: &[PartitionChange], category: C, out: &mut Out| {
        for c in changes {
            if let Some(to) = &c.to {
                out.push(category, attach(&c.table, to));
            }
        }
    };
    attach_all(&diff.partitions_attached, C::PartitionsAttached, out);
    attach_all(&diff.partitions_modified, C::PartitionsModified, out);
}

fn detach(table: &QualifiedName, from: &PartitionOf, reason: &str) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} DETACH PARTITION {}",
        SQL.qualified(&from.parent),
        SQL.qualified(table)
    );
    stmt(sql, Severity::Warning, reason)
}

fn attach(table: &QualifiedName, to: &PartitionOf) -> PlannedStatement {
    let sql = format!(
        "ALTER TABLE {} ATTACH PARTITION {} {}",
        SQL.qualified(&to.parent),
        SQL.qualified(table),
        to.bound
    );
    stmt(
        sql,
        Severity::Warning,
        "attaches a partition: the server scans it and refuses a row outside the bound, locking the table",
    )
}
