//! CHECK and FOREIGN KEY constraints added to tables that exist, without holding a lock over a
//! scan of their rows (issue 37): `ADD CONSTRAINT … NOT VALID` inside the transaction takes its
//! lock only for a catalog change, and `VALIDATE CONSTRAINT` after it scans the rows under `SHARE
//! UPDATE EXCLUSIVE` (and `ROW SHARE` on a referenced table), so writes go on. The executor runs
//! the validation alone after the commit, like `CREATE INDEX CONCURRENTLY`; when rows violate the
//! constraint it stays `NOT VALID`, the Apply fails on that statement, and the next plan validates
//! it again instead of rebuilding it.
//!
//! Partitioned tables keep the plain form: PostgreSQL refuses `NOT VALID` constraints there.

use crate::diff::Constraint;
use crate::model::QualifiedName;
use crate::plan::{PlannedStatement, Severity};

use super::SQL;

/// Whether `c`, added to an existing table, is added unvalidated and validated after.
pub(in crate::render) fn applies(c: &Constraint, partitioned: bool) -> bool {
    matches!(c, Constraint::Check(_) | Constraint::ForeignKey(_)) && !partitioned
}

/// `ADD CONSTRAINT … NOT VALID`, inside the transaction.
pub(in crate::render) fn add_not_valid(table: &QualifiedName, c: &Constraint) -> PlannedStatement {
    let plain = super::add_constraint(table, c);
    PlannedStatement {
        sql: format!("{} NOT VALID", plain.sql),
        severity: plain.severity,
        reason: "adds a constraint for new rows only (NOT VALID); existing rows are validated after the transaction"
            .to_owned(),
        transactional: true,
    }
}

/// `VALIDATE CONSTRAINT`, outside the transaction unless `transactional` (a probe's forms).
pub(in crate::render) fn validate(
    table: &QualifiedName,
    name: &str,
    transactional: bool,
) -> PlannedStatement {
    PlannedStatement {
        sql: format!(
            "ALTER TABLE {} VALIDATE CONSTRAINT {}",
            SQL.qualified(table),
            SQL.ident(name)
        ),
        severity: Severity::Warning,
        reason:
            "validates a constraint on existing rows without blocking writes: fails on rows that violate it"
                .to_owned(),
        transactional,
    }
}
