//! The planner's entry point: scope both schemas, diff them, refuse protected tables and partition
//! key changes, render.

use std::collections::BTreeSet;

use ptah_fingerprint::Fingerprint;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::diff::{ColumnAspect, DiffCategory, ExcludeSet, Finding, SchemaDiff, diff};
use crate::model::{Dialect, Literal, QualifiedName, Schema};
use crate::plan::{PLAN_FORMAT_VERSION, Plan, PlannedStatement, Severity};
use crate::render::{MysqlFlavor, findings, render};

/// What the planner manages and what it must not touch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// Glob patterns over `schema.table` and `table`; matching tables and enums are left out of
    /// both sides, so they are neither created nor dropped.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// `[schema.]table` names (ASCII case ignored) that no plan may drop, alter or change rows of.
    #[serde(default)]
    pub protected_tables: Vec<String>,
    /// MySQL or MariaDB, for the clauses they spell differently.
    #[serde(default)]
    pub mysql_flavor: MysqlFlavor,
}

/// Why no plan was produced.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    /// The plan would drop, alter or change rows of a protected table.
    #[error("refusing to plan: protected table {table} would be changed ({category})")]
    ProtectedTable {
        /// The table, as `schema.table` (or `table` on MySQL).
        table: String,
        /// The kind of change that touches it.
        category: DiffCategory,
    },
    /// A generated column would change in a way the server cannot carry out in place.
    #[error(
        "refusing to plan: column {column} of {table}: {reason}; drop the column in one plan and \
         declare it anew in the next"
    )]
    GeneratedColumn {
        /// The table, as `schema.table` (or `table` on MySQL).
        table: String,
        /// The column.
        column: String,
        /// What the server cannot do.
        reason: &'static str,
    },
    /// A table's partition key differs: PostgreSQL cannot change it in place, and the planner
    /// does not drop and recreate a table to do it.
    #[error(
        "refusing to plan: the partition key of {table} cannot change in place ({from} → {to}); create a new table and move the rows"
    )]
    PartitionKeyChanged {
        /// The table, as `schema.table`.
        table: String,
        /// The key now (`none`: not partitioned).
        from: String,
        /// The declared key (`none`: not partitioned).
        to: String,
    },
    /// A declared column rename whose old column has another type than the declared one.
    #[error(
        "refusing to plan: column {from} of {table} is renamed to {column} with another type; \
         rename it in one plan (same type) and change its type in the next"
    )]
    RenameChangesType {
        /// The table, as `schema.table` (or `table` on MySQL).
        table: String,
        /// The declared column name.
        column: String,
        /// The old column name.
        from: String,
    },
    /// The desired schema declares two reference rows with the same key in one table.
    #[error("table {table} declares two reference rows with the same key")]
    DuplicateRowKey {
        /// The table, as `schema.table` (or `table` on MySQL).
        table: String,
    },
    /// A rendered statement creates or changes a principal's credentials: text the artifact
    /// supplies verbatim (a view's or routine's body) can carry a second statement. The message
    /// names the statement, never its text, which holds the secret.
    #[error(
        "invalid_plan_output: statement {statement} of the plan sets a credential; such SQL is never planned or applied"
    )]
    CredentialBearing {
        /// 1-based number of the plan statement.
        statement: usize,
    },
}

/// A scoped diff with its drift summary, for callers that report drift without planning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    /// The differences.
    pub diff: SchemaDiff,
    /// Per category: count and highest severity (never values).
    pub findings: Vec<Finding>,
}

/// Compares `desired` with `actual` inside the management scope and summarizes the differences.
pub fn drift(desired: &Schema, actual: &Schema, dialect: Dialect, options: &PlanOptions) -> Drift {
    let scope = ExcludeSet::new(&options.exclude);
    let diff = diff(&scope.apply(desired), &scope.apply(actual));
    let findings = findings(&diff, dialect, options.mysql_flavor);
    Drift { diff, findings }
}

/// The plan that moves `actual` to `desired`, or a refusal when it would touch a protected table.
///
/// Whether destructive statements may run is not decided here: the plan records
/// [`Plan::destructive`] and the caller gates on it.
pub fn plan(
    desired: &Schema,
    actual: &Schema,
    dialect: Dialect,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    let to_fingerprint = ExcludeSet::new(&options.exclude).apply(desired).fingerprint();
    plan_for(to_fingerprint, desired, actual, dialect, options)
}

/// [`plan`] with the plan's `to_fingerprint` given: the fingerprint of the document `desired` was
/// made from, inside the management scope, which a caller can hash while it reads the database
/// (`desired` may be that document in the server's spelling, whose own fingerprint differs).
pub fn plan_for(
    to_fingerprint: Fingerprint,
    desired: &Schema,
    actual: &Schema,
    dialect: Dialect,
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    let scope = ExcludeSet::new(&options.exclude);
    let desired = scope.apply(desired);
    let actual = scope.apply(actual);
    check_row_keys(&desired)?;
    // Hashing the live schema's canonical JSON costs as much as the diff at a thousand tables and
    // needs nothing from it: it runs on a second thread meanwhile.
    std::thread::scope(|threads| {
        let from_fingerprint = threads.spawn(|| actual.fingerprint());
        let statements = planned_statements(&desired, &actual, dialect, options)?;
        let from_fingerprint = from_fingerprint
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok(Plan {
            format_version: PLAN_FORMAT_VERSION,
            dialect,
            from_fingerprint,
            to_fingerprint,
            exclude: options.exclude.clone(),
            destructive: statements.iter().any(|s| s.severity == Severity::Destructive),
            statements,
            locks: Vec::new(),
        })
    })
}

/// The checked, rendered statements of the plan from `actual` to `desired` (both in scope).
fn planned_statements(
    desired: &Schema,
    actual: &Schema,
    dialect: Dialect,
    options: &PlanOptions,
) -> Result<Vec<PlannedStatement>, PlanError> {
    let diff = diff(desired, actual);
    if let Some(c) = diff.rename_conflicts.first() {
        return Err(PlanError::RenameChangesType {
            table: c.table.to_string(),
            column: c.column.clone(),
            from: c.from.clone(),
        });
    }
    if let Some(c) = diff.partition_keys_modified.first() {
        let text = |k: &Option<String>| k.clone().unwrap_or_else(|| "none".to_owned());
        return Err(PlanError::PartitionKeyChanged {
            table: c.table.to_string(),
            from: text(&c.from),
            to: text(&c.to),
        });
    }
    check_protected(&diff, &options.protected_tables)?;
    check_generated(&diff, dialect)?;
    let statements = render(&diff, dialect, options.mysql_flavor);
    check_credentials(&statements, dialect)?;
    Ok(statements)
}

/// Refuses a plan with a credential-bearing statement before it is written anywhere: the plan
/// travels in the Plan Pod's result frame, so the operator's own refusal of it would come after
/// the secret had reached a log. A statement the classifier cannot tokenize is left to the
/// operator, which refuses it (fail closed) without the planner guessing.
fn check_credentials(statements: &[PlannedStatement], dialect: Dialect) -> Result<(), PlanError> {
    match statements
        .iter()
        .position(|s| crate::classify::is_credential_bearing(&s.sql, dialect) == Ok(true))
    {
        Some(i) => Err(PlanError::CredentialBearing { statement: i + 1 }),
        None => Ok(()),
    }
}

fn check_protected(diff: &SchemaDiff, protected: &[String]) -> Result<(), PlanError> {
    if protected.is_empty() {
        return Ok(());
    }
    for (table, category) in diff.touched_tables() {
        if protected.iter().any(|p| is_named(&table, p)) {
            return Err(PlanError::ProtectedTable {
                table: table.to_string(),
                category,
            });
        }
    }
    Ok(())
}

/// PostgreSQL (before 17) cannot make an existing column generated nor change its expression;
/// MySQL and MariaDB cannot switch a generated column between STORED and VIRTUAL. A drop and an add
/// would silently drop the column's indexes and constraints, so such a plan is refused instead.
fn check_generated(diff: &SchemaDiff, dialect: Dialect) -> Result<(), PlanError> {
    for change in &diff.columns_modified {
        if !change.changes.contains(&ColumnAspect::Generation) {
            continue;
        }
        let reason = match (dialect, &change.from.generated, &change.to.generated) {
            (Dialect::Postgres, None, Some(_)) => Some("PostgreSQL cannot make an existing column generated"),
            (Dialect::Postgres, Some(_), Some(_)) => {
                Some("PostgreSQL cannot change a generation expression in place")
            }
            (Dialect::Mysql, Some(a), Some(b)) if a.stored != b.stored => {
                Some("MySQL and MariaDB cannot switch a generated column between STORED and VIRTUAL")
            }
            _ => None,
        };
        if let Some(reason) = reason {
            return Err(PlanError::GeneratedColumn {
                table: change.table.to_string(),
                column: change.to.name.clone(),
                reason,
            });
        }
    }
    Ok(())
}

fn check_row_keys(desired: &Schema) -> Result<(), PlanError> {
    for table in desired.tables.values() {
        let Some(rows) = &table.rows else { continue };
        let mut seen = BTreeSet::new();
        for row in &rows.rows {
            let key: Vec<Option<&Literal>> = rows.key.iter().map(|k| row.get(k)).collect();
            if !seen.insert(key) {
                return Err(PlanError::DuplicateRowKey {
                    table: table.name.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Whether `entry` (`table` or `schema.table`, ASCII case ignored) names `table`.
fn is_named(table: &QualifiedName, entry: &str) -> bool {
    let entry = entry.trim();
    entry.eq_ignore_ascii_case(&table.name) || entry.eq_ignore_ascii_case(&table.to_string())
}
