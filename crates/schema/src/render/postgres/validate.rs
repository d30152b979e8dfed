//! CHECK and FOREIGN KEY constraints added to tables that exist, without holding a lock over a
//! scan of their rows (issue 37): `ADD CONSTRAINT … NOT VALID` inside the transaction takes its
//! lock only for a catalog change, and `VALIDATE CONSTRAINT` after it scans the rows under `SHARE
//! UPDATE EXCLUSIVE` (and `ROW SHARE` on a referenced table), so writes go on. The executor runs
//! the validation alone after the commit, like `CREATE INDEX CONCURRENTLY`; when rows violate the
//! constraint it stays `NOT VALID`, the Apply fails on that statement, and the next plan validates
//! it again instead of rebuilding it.
//!
//! `SET NOT NULL` on a column of an existing table goes the same way, through a helper check
//! ([`set_not_null`]).
//!
//! Partitioned tables keep the plain form: PostgreSQL refuses `NOT VALID` constraints there.

use crate::diff::{ColumnAspect, ColumnChange, Constraint};
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

/// `SET NOT NULL` on a column of an existing table without a scan under `ACCESS EXCLUSIVE`: a
/// `CHECK (… IS NOT NULL) NOT VALID`, its validation (writes go on), then `SET NOT NULL`, which
/// PostgreSQL 12+ proves from the valid check instead of scanning, and the check dropped. All run
/// alone after the transaction, in order; the first drops a helper an interrupted run left.
pub(in crate::render) fn set_not_null(table: &QualifiedName, column: &str) -> Vec<PlannedStatement> {
    let t = SQL.qualified(table);
    let (c, check) = (
        SQL.ident(column),
        SQL.ident(&crate::names::not_null_check(column)),
    );
    let alone = |sql: String, severity, reason: &str| PlannedStatement {
        sql,
        severity,
        reason: reason.to_owned(),
        transactional: false,
    };
    vec![
        alone(
            format!("ALTER TABLE {t} DROP CONSTRAINT IF EXISTS {check}"),
            Severity::Safe,
            "drops the helper check an interrupted SET NOT NULL may have left",
        ),
        alone(
            format!("ALTER TABLE {t} ADD CONSTRAINT {check} CHECK ({c} IS NOT NULL) NOT VALID"),
            Severity::Safe,
            "adds a helper check for new rows only (NOT VALID)",
        ),
        alone(
            format!("ALTER TABLE {t} VALIDATE CONSTRAINT {check}"),
            Severity::Warning,
            "proves the column holds no NULL without blocking writes: fails on existing NULLs",
        ),
        alone(
            format!("ALTER TABLE {t} ALTER COLUMN {c} SET NOT NULL"),
            Severity::Warning,
            "sets NOT NULL, proven by the valid check instead of a scan",
        ),
        alone(
            format!("ALTER TABLE {t} DROP CONSTRAINT {check}"),
            Severity::Safe,
            "drops the helper check",
        ),
    ]
}

/// Whether `change` sets NOT NULL in the forms of [`set_not_null`]: only when nothing else of
/// the column changes that needs NOT NULL inside the transaction (an identity) or rewrites the
/// table anyway (a type), and not on a partitioned table.
pub(in crate::render) fn sets_not_null_alone(change: &ColumnChange, partitioned: bool) -> bool {
    use ColumnAspect as A;
    !partitioned
        && !change.to.nullable
        && change.changes.contains(&A::Nullability)
        && change
            .changes
            .iter()
            .all(|a| matches!(a, A::Nullability | A::Default | A::Comment))
}
