//! Versioned migrations in the reference CLI's native format, so a database can move between the
//! Go Ptah CLI and this executor without rewriting history.
//!
//! - [`Directory`]: `NNNNNNNNNN_desc[.checkpoint].(up|down).sql` files at any depth, both halves
//!   mandatory; [`SumFile`]: `ptah.sum` byte for byte.
//! - [`split()`]: a tokenizer-based statement splitter per dialect; [`parse_headers`]: per-file
//!   `-- +ptah` directives.
//! - [`Revision`]: rows of `schema_migrations`; [`status`], [`up`], [`baseline`], [`hash`]: the
//!   commands, all under the engine's shared `ptah_migrate` advisory lock where they write.
//!
//! This crate touches databases and must never depend on a Kubernetes client.

#![warn(missing_docs)]

mod dir;
mod error;
mod exec;
mod header;
mod plan;
mod report;
mod run;
mod split;
mod sum;
mod table;

pub use dir::{Directory, FileName, Migration, MigrationFile, SUM_FILE, Version, parse_file_name};
pub use error::Error;
pub use exec::Failure;
pub use header::{Headers, TxMode, parse_duration, parse_headers};
pub use plan::{
    ExecOrder, Reading, Script, SequenceEntry, check_expected, history_fingerprint, parse_expected, read,
    sequence_fingerprint,
};
pub use report::{
    AheadMigration, AppliedMigration, BaselineReport, ModifiedMigration, Outcome, PendingMigration,
    PlannedMigration, StatusReport, UpReport,
};
pub use run::{Target, UpOptions, baseline, hash, status, up};
pub use split::{Piece, PieceKind, SplitError, Statement, pieces, split};
pub use sum::{SumCheck, SumFile, h1, verify_directory};
pub use table::{Revision, TABLE, create_sql, read as read_revisions};
