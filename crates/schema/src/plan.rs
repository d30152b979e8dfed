//! The plan file: the ordered statements that move a database from one schema fingerprint to another.
//!
//! A plan is a stable, versioned contract (`format_version`): the operator stores its bytes,
//! approvals bind to them, and apply refuses it when the live schema no longer has `from_fingerprint`.

use ptah_fingerprint::Fingerprint;
use serde::{Deserialize, Serialize};

use crate::{Dialect, Schema};

/// The plan format this crate writes and reads.
pub const PLAN_FORMAT_VERSION: u32 = 1;

/// How risky a statement is; a plan's risk is its highest statement's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Additive; cannot lose data or fail on existing rows.
    Safe,
    /// Can fail on existing data or block writers, but loses nothing.
    Warning,
    /// Can lose data; needs explicit permission.
    Destructive,
}

/// One planned statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedStatement {
    /// The SQL, one statement, no trailing semicolon.
    pub sql: String,
    /// Its severity.
    pub severity: Severity,
    /// Why it has that severity, for people.
    pub reason: String,
    /// False for statements that must run outside a transaction (PostgreSQL `CONCURRENTLY`).
    pub transactional: bool,
}

/// The table lock one statement takes on a table that already holds rows, and their estimate:
/// what the statement does to the writers of a live table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatementLock {
    /// The 0-based index of the statement in the plan.
    pub statement: usize,
    /// The lock as the server names it (`pg_locks.mode`: `AccessExclusiveLock`, `ShareLock`…).
    pub lock: String,
    /// Whether writers of the table wait while it is held.
    pub blocks_writes: bool,
    /// The table, `schema.table`.
    pub table: String,
    /// The table's estimated rows (`pg_class.reltuples`, `information_schema.TABLES.TABLE_ROWS`);
    /// absent when the server has no estimate yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_rows: Option<u64>,
}

/// A plan file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Always [`PLAN_FORMAT_VERSION`].
    pub format_version: u32,
    /// The dialect the SQL is written for.
    pub dialect: Dialect,
    /// The fingerprint of the live schema the plan was computed against.
    pub from_fingerprint: Fingerprint,
    /// The fingerprint of the desired schema.
    pub to_fingerprint: Fingerprint,
    /// Object patterns left out of management.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Whether any statement is destructive.
    pub destructive: bool,
    /// The statements in execution order.
    pub statements: Vec<PlannedStatement>,
    /// The locks the statements take on existing tables (PostgreSQL; filled by the executor,
    /// which reads the table sizes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<StatementLock>,
}

impl Plan {
    /// Whether the plan has nothing to do (the only proof of convergence is such a plan).
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// The highest severity, `None` for an empty plan.
    pub fn highest_severity(&self) -> Option<Severity> {
        self.statements.iter().map(|s| s.severity).max()
    }
}

impl Schema {
    /// The schema's fingerprint: sha256 of its canonical JSON.
    pub fn fingerprint(&self) -> Fingerprint {
        // Every field is a string, number, bool, sequence or string-keyed map: serialization is infallible.
        Fingerprint::of(self).unwrap_or_else(|_| unreachable!("schema model serializes to JSON"))
    }

    /// Whether the schema declares nothing at all. A desired schema that is empty is refused where
    /// it is read (an empty artifact is almost always a mistake, and on PostgreSQL its management
    /// scope would be empty too, so it would plan nothing in silence).
    pub fn is_empty(&self) -> bool {
        *self == Schema::default()
    }
}
