//! The documents `status`, `up` and `baseline` return; the CLI wraps them with `format_version`.

use ptah_fingerprint::Fingerprint;
use serde::Serialize;

use crate::{Failure, Revision, SequenceEntry, SumCheck, TxMode, Version};

/// An applied migration as `status` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct AppliedMigration {
    /// The version.
    pub version: Version,
    /// The description recorded in the row.
    pub description: String,
    /// When it was applied (UTC).
    pub applied_at: String,
    /// The body's wall time.
    pub execution_time_ms: i64,
    /// The recorded checksum.
    pub checksum: String,
}

/// A pending migration as `status` reports it.
#[derive(Debug, Clone, Serialize)]
pub struct PendingMigration {
    /// The version.
    pub version: Version,
    /// The digits as written in the file name, when they are not the reference's ten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_version: Option<String>,
    /// The description.
    pub description: String,
    /// Hex sha256 of the up file.
    pub checksum: String,
    /// How it would run.
    pub transaction: TxMode,
    /// How many statements the up file has.
    pub statements: usize,
    /// The up file, relative to the directory.
    pub file: String,
}

/// An applied migration whose file changed afterwards.
#[derive(Debug, Clone, Serialize)]
pub struct ModifiedMigration {
    /// The version.
    pub version: Version,
    /// The checksum recorded when it ran.
    pub recorded_checksum: String,
    /// The checksum of the file now.
    pub file_checksum: String,
}

/// A row whose version the directory lacks (the database is ahead).
#[derive(Debug, Clone, Serialize)]
pub struct AheadMigration {
    /// The version.
    pub version: Version,
    /// The recorded description.
    pub description: String,
    /// The recorded state.
    pub state: String,
}

/// The answer of `status`.
#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    /// `postgresql` or `mysql`.
    pub dialect: &'static str,
    /// The target, password masked.
    pub database_url: String,
    /// How the directory's integrity was established.
    pub sum: SumCheck,
    /// Whether `schema_migrations` exists.
    pub revision_table: bool,
    /// The highest applied version.
    pub current_version: Option<Version>,
    /// Applied rows.
    pub applied_migrations: Vec<AppliedMigration>,
    /// Directory migrations not applied (out-of-order ones included).
    pub pending_migrations: Vec<PendingMigration>,
    /// Pending versions below the current version.
    pub out_of_order_migrations: Vec<Version>,
    /// Applied migrations whose file changed.
    pub modified_migrations: Vec<ModifiedMigration>,
    /// Rows the directory has no file for.
    pub ahead_migrations: Vec<AheadMigration>,
    /// A row a previous run left unfinished.
    pub dirty_revision: Option<Revision>,
    /// Migrations in the directory.
    pub total_migrations: usize,
    /// True when anything is pending.
    pub has_pending_changes: bool,
    /// Fingerprint of the revision rows.
    pub history_fingerprint: Fingerprint,
    /// What a default `up` would run; absent when it would refuse (see `blocked`).
    pub pending_sequence: Option<Vec<SequenceEntry>>,
    /// Fingerprint of `pending_sequence`.
    pub pending_sequence_fingerprint: Option<Fingerprint>,
    /// Why `up` would refuse, if it would.
    pub blocked: Option<String>,
}

/// How `up` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// Nothing was pending.
    UpToDate,
    /// Every selected migration was applied.
    Applied,
    /// A migration failed and nothing of it stayed committed.
    Failed,
    /// A migration failed after some of its statements committed.
    Partial,
    /// A dry run: the selection is in `planned`, nothing ran.
    Planned,
}

/// A migration a dry run would run.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedMigration {
    /// The version.
    pub version: Version,
    /// The digits as written in the file name, when they are not the reference's ten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_version: Option<String>,
    /// The description.
    pub description: String,
    /// How it would run.
    pub transaction: TxMode,
    /// Its statements, in order.
    pub statements: Vec<String>,
}

/// The answer of `up`.
#[derive(Debug, Clone, Serialize)]
pub struct UpReport {
    /// How it ended.
    pub outcome: Outcome,
    /// Versions applied by this run, in order.
    pub applied_versions: Vec<Version>,
    /// The failed migration, if any (its row stays dirty).
    pub failure: Option<Failure>,
    /// The selection that was (or would be) run.
    pub sequence: Vec<SequenceEntry>,
    /// Fingerprint of `sequence`.
    pub sequence_fingerprint: Fingerprint,
    /// The highest applied version afterwards.
    pub current_version: Option<Version>,
    /// Fingerprint of the revision rows afterwards.
    pub history_fingerprint: Fingerprint,
    /// The statements of a dry run.
    pub planned: Option<Vec<PlannedMigration>>,
}

/// The answer of `baseline`.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineReport {
    /// The baseline version.
    pub version: Version,
    /// Versions recorded as applied by this run.
    pub baselined_versions: Vec<Version>,
    /// Fingerprint of the revision rows afterwards.
    pub history_fingerprint: Fingerprint,
}
