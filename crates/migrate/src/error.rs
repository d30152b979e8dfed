//! The one error type of this crate; every variant names something a caller can act on.

use std::path::PathBuf;

use crate::Version;

/// Why a migration command could not do its work. No variant ever holds a database password.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file looks like a migration but its name does not follow `<digits>_desc.(up|down).sql` or `<digits>_desc.sql`.
    #[error("{path}: not a valid migration file name ({reason})")]
    BadFileName {
        /// The path relative to the directory.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A migration lacks its `up` or `down` half ("incomplete migrations found").
    #[error("incomplete migrations found: version {version} has no {missing} file")]
    Incomplete {
        /// The version.
        version: Version,
        /// `up` or `down`.
        missing: &'static str,
    },
    /// Two files claim the same version and direction.
    #[error("version {version} is defined twice: {first} and {second}")]
    DuplicateVersion {
        /// The version.
        version: Version,
        /// The first file.
        first: String,
        /// The second file.
        second: String,
    },
    /// Two files' versions are equal as numbers but written differently (`1_a`, `01_b`): no order exists.
    #[error(
        "version {version} is written two ways: {first} and {second}; rename one so that every \
         version is a distinct number"
    )]
    VersionCollision {
        /// The numeric version.
        version: Version,
        /// The first file.
        first: String,
        /// The second file.
        second: String,
    },
    /// A file that runs in one transaction holds a statement PostgreSQL cannot run in one.
    #[error(
        "{path}:{line}: {statement} cannot run inside a transaction block, and this file runs in \
         one; add `{header}` to the file's header (before its first statement)"
    )]
    NeedsNoTransaction {
        /// The file.
        path: String,
        /// 1-based line of the statement.
        line: usize,
        /// What the statement is, e.g. `CREATE INDEX CONCURRENTLY`.
        statement: &'static str,
        /// The header line that makes the file run without a transaction.
        header: &'static str,
    },
    /// `repair` was asked about a version that has no unfinished row.
    #[error(
        "version {version} cannot be repaired: its row is {state}; repair records a failed or \
         pending (dirty) version as applied or absent"
    )]
    NotRepairable {
        /// The version.
        version: Version,
        /// The row's state, or `missing`.
        state: String,
    },
    /// `ptah.sum` is not in the reference format (a usage error: exit 2).
    #[error("ptah.sum is malformed at line {line}: {reason}")]
    SumMalformed {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The directory has no `ptah.sum` but one was required.
    #[error("ptah.sum is missing in {}; run `ptah migrations hash`", dir.display())]
    SumMissing {
        /// The migration directory.
        dir: PathBuf,
    },
    /// The files no longer match `ptah.sum` (integrity drift: exit 1).
    #[error(
        "checksum mismatch: the migration directory does not match ptah.sum ({summary}); run `ptah migrations hash` if the change is intended"
    )]
    SumDrift {
        /// Which files were added, removed or changed.
        summary: String,
    },
    /// A `-- +ptah` header could not be read.
    #[error("{path}:{line}: {reason}")]
    Header {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The statement splitter could not find the end of a literal, comment or body.
    #[error("{path}:{line}: {reason}")]
    Split {
        /// The file.
        path: String,
        /// 1-based line of the construct that never ends.
        line: usize,
        /// What is unterminated.
        reason: String,
    },
    /// An `--expect-sequence` document could not be read.
    #[error("invalid expected sequence: {0}")]
    InvalidExpectedSequence(String),
    /// An option value (duration, version) is not valid.
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// Connecting or locking failed (the engine's own typed error).
    #[error(transparent)]
    Engine(#[from] ptah_engine::Error),
    /// A bookkeeping query on the revision table failed.
    #[error("revision table: {context}: {message}")]
    RevisionTable {
        /// What was being done.
        context: &'static str,
        /// The server's message.
        message: String,
    },
    /// A previous run left a row that is not `applied`; it must be repaired first.
    #[error(
        "version {version} is dirty (state {state:?}, {applied}/{total} statements applied); repair \
         the database, then record the outcome with `ptah migrations repair --version {version} \
         --as applied|absent --reason TEXT` before running again"
    )]
    Dirty {
        /// The dirty version.
        version: Version,
        /// Its state (`pending` or `failed`).
        state: String,
        /// Statements recorded as committed.
        applied: i64,
        /// Statements in the file.
        total: i64,
    },
    /// An applied migration's up file changed since it ran (its checksum differs from the row's).
    #[error(
        "version {version} was modified after it was applied (its checksum differs from schema_migrations)"
    )]
    Modified {
        /// The modified version.
        version: Version,
    },
    /// Pending versions lie below the current version under the `linear` execution order.
    #[error(
        "out-of-order migrations {versions:?} are below the current version {current}; use \
         --exec-order linear-skip or non-linear to proceed"
    )]
    OutOfOrder {
        /// The pending versions below the current one.
        versions: Vec<Version>,
        /// The current version.
        current: Version,
    },
    /// The selection computed under the lock differs from the approved sequence; nothing ran.
    #[error(
        "the pending migrations no longer match the expected sequence ({difference}); nothing was executed"
    )]
    SequenceMismatch {
        /// The first difference, in words.
        difference: String,
        /// Digest of the approved sequence.
        expected_digest: String,
        /// Digest of the sequence found now.
        actual_digest: String,
    },
    /// A second connection could take the lock this session holds: a transaction pooler is in between.
    #[error(
        "the migration lock is not exclusive: a second connection acquired it too (a transaction \
         pooler such as PgBouncer?); connect directly or allow an unverified lock explicitly"
    )]
    LockNotExclusive,
    /// Baseline refuses a revision table that already has rows (without force).
    #[error(
        "baseline refused: schema_migrations already has {rows} rows (use --force to add rows up to the version)"
    )]
    BaselineRefused {
        /// How many rows exist.
        rows: usize,
    },
}

impl Error {
    /// True for errors about the caller's input or a refused gate rather than a failed execution.
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            Error::SumDrift { .. } | Error::SequenceMismatch { .. } | Error::RevisionTable { .. }
        )
    }

    /// A stable, machine-readable name for the variant (used in JSON reports).
    pub fn code(&self) -> &'static str {
        match self {
            Error::Io { .. } => "io",
            Error::BadFileName { .. } => "bad_file_name",
            Error::Incomplete { .. } => "incomplete_migrations",
            Error::DuplicateVersion { .. } => "duplicate_version",
            Error::VersionCollision { .. } => "version_collision",
            Error::NeedsNoTransaction { .. } => "needs_no_transaction",
            Error::NotRepairable { .. } => "not_repairable",
            Error::SumMalformed { .. } => "sum_malformed",
            Error::SumMissing { .. } => "sum_missing",
            Error::SumDrift { .. } => "sum_drift",
            Error::Header { .. } => "invalid_header",
            Error::Split { .. } => "unsplittable_sql",
            Error::InvalidExpectedSequence(_) => "invalid_expected_sequence",
            Error::InvalidValue(_) => "invalid_value",
            // Engine errors other than the connection's and the lock's were "database" before
            // the engine named its own; keep that code for them.
            Error::Engine(
                err @ (ptah_engine::Error::LockBusy { .. }
                | ptah_engine::Error::Connect { .. }
                | ptah_engine::Error::ConnectTimeout { .. }
                | ptah_engine::Error::TlsCaFile { .. }
                | ptah_engine::Error::TlsUnavailable { .. }
                | ptah_engine::Error::TlsUntrusted { .. }
                | ptah_engine::Error::TlsHostname { .. }
                | ptah_engine::Error::Tls { .. }),
            ) => err.code(),
            Error::Engine(_) => "database",
            Error::RevisionTable { .. } => "revision_table",
            Error::Dirty { .. } => "dirty",
            Error::Modified { .. } => "modified",
            Error::OutOfOrder { .. } => "out_of_order",
            Error::SequenceMismatch { .. } => "sequence_mismatch",
            Error::LockNotExclusive => "lock_not_exclusive",
            Error::BaselineRefused { .. } => "baseline_refused",
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }
}
