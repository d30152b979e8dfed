//! Versioned migrations in the reference CLI's native format, so a database can move between the
//! Go Ptah CLI and this executor without rewriting history, and in the layouts people wrote for
//! golang-migrate (Mattermost's morph headers included), goose and dbmate, read as written.
//!
//! - [`Directory`]: `<digits>_desc[.checkpoint].(up|down).sql` pairs at any depth (ten digits in
//!   the reference's layout, any width up to 19 for golang-migrate's), both halves mandatory, and
//!   goose/dbmate single files `<digits>_desc.sql`; [`SumFile`]: `ptah.sum` byte for byte.
//! - [`split()`]: a tokenizer-based statement splitter per dialect (MySQL compound statements with
//!   or without `DELIMITER`); [`parse_headers`]: per-file `-- +ptah`, Atlas and morph directives.
//! - [`Revision`]: rows of `schema_migrations`; [`status`], [`up`], [`baseline`], [`hash`],
//!   [`repair`]: the commands, all under the engine's shared `ptah_migrate` advisory lock where
//!   they write.
//!
//! This crate touches databases and must never depend on a Kubernetes client.

#![warn(missing_docs)]

mod compound;
mod dir;
mod error;
mod exec;
mod header;
mod name;
mod plan;
mod repair;
mod report;
mod run;
mod script;
mod sections;
mod split;
mod sum;
mod table;
mod txcheck;

pub use dir::{Directory, Migration, MigrationFile, SUM_FILE};
pub use error::Error;
pub use exec::Failure;
pub use header::{Headers, TxMode, parse_duration, parse_headers};
pub use name::{FileName, MAX_VERSION_DIGITS, MigrationName, Part, Version, parse_file_name, parse_name};
pub use plan::{
    ExecOrder, Reading, SequenceEntry, check_expected, history_fingerprint, parse_expected, read,
    sequence_fingerprint,
};
pub use repair::{RecordAs, RepairOptions, RepairReport, repair};
pub use report::{
    AheadMigration, AppliedMigration, BaselineReport, ModifiedMigration, Outcome, PendingMigration,
    PlannedMigration, StatusReport, UpReport,
};
pub use run::{Target, UpOptions, baseline, hash, status, up};
pub use script::{Script, check_transactions};
pub use sections::{Sections, Tool, parse as parse_sections};
pub use split::{Piece, PieceKind, SplitError, Statement, pieces, split};
pub use sum::{SumCheck, SumFile, h1, verify_directory};
pub use table::{Revision, TABLE, create_sql, read as read_revisions};
pub use txcheck::{NonTransactional, non_transactional};
