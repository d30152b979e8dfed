//! Database sessions for PostgreSQL and MySQL/MariaDB: URLs, connections, the shared advisory lock,
//! introspection into the schema model ([`inspect`]) and plan execution ([`apply`], [`verify`]).
//!
//! This crate touches databases and must never depend on a Kubernetes client (`cargo xtask
//! deps-check` enforces it). Every error it returns is free of credentials.

mod apply;
mod canon;
mod concurrent;
mod inspect;
mod lock;
mod mysql;
mod online;
mod postgres;
mod rehearse;
mod rows;
mod session;
mod size;
mod tls;
mod touched;
mod unmodelled;
mod url;

use std::time::Duration;

use ptah_fingerprint::Fingerprint;

pub use apply::{ApplyOptions, ApplyReport, apply, live_fingerprint, verify};
pub use inspect::{InspectScope, RowSelection, comparable, inspect, into_comparable, mysql_flavor};
pub use lock::{LOCK_NAME, fnv1a32, postgres_lock_key};
pub use rehearse::{Rehearsal, RehearsalOutcome, StatementTiming, rehearse};
pub use session::Session;
pub use size::estimated_rows;
pub use unmodelled::{Unmodelled, unmodelled};
pub use url::{DatabaseUrl, Dialect, TlsMode, dialect_name};

/// What went wrong talking to a database; no variant ever carries a password.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL is malformed or uses something this engine refuses.
    #[error("invalid database URL: {reason}")]
    InvalidUrl {
        /// Why, without the URL's password.
        reason: String,
    },
    /// The URL asks for multi-statement mode, which would let one string smuggle extra statements.
    #[error("invalid database URL: multi-statement mode is refused")]
    MultiStatements,
    /// The URL names several hosts; one realm is one physical database.
    #[error("invalid database URL: several hosts are refused; name exactly one")]
    SeveralHosts,
    /// A TLS mode that is not one of the four this engine knows, or one that would fall back to
    /// plaintext (`prefer`, `allow`, `PREFERRED`). The value is not repeated: a value that is no
    /// mode might be a misplaced secret.
    #[error(
        "invalid database URL: the TLS mode is refused; use disable, require, verify-ca or \
         verify-full (MySQL: DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY); a mode that falls \
         back to plaintext is never accepted"
    )]
    UnsupportedTls,
    /// The CA bundle cannot be read or holds no usable certificate.
    #[error("cannot use the CA bundle {path}: {reason}")]
    TlsCaFile {
        /// The bundle's path.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The URL asks for TLS and the server does not offer it.
    #[error("cannot connect to {target}: the URL asks for TLS ({mode}) but the server does not offer TLS")]
    TlsUnavailable {
        /// The redacted URL.
        target: String,
        /// The mode asked for.
        mode: &'static str,
    },
    /// The server's certificate does not chain to a trusted root.
    #[error(
        "cannot connect to {target}: the server's certificate is not trusted ({reason}); check --db-ca-file / PTAH_DB_CA_FILE"
    )]
    TlsUntrusted {
        /// The redacted URL.
        target: String,
        /// The verifier's reason.
        reason: String,
    },
    /// The certificate chains to a trusted root but names other hosts (`verify-full`).
    #[error(
        "cannot connect to {target}: the server's certificate is not valid for {host:?} (it names {presented})"
    )]
    TlsHostname {
        /// The redacted URL.
        target: String,
        /// The host that was dialled.
        host: String,
        /// The names the certificate carries.
        presented: String,
    },
    /// Another TLS failure (protocol version, alert).
    #[error("cannot connect to {target}: TLS failed: {message}")]
    Tls {
        /// The redacted URL.
        target: String,
        /// The TLS library's message.
        message: String,
    },
    /// The server could not be reached or refused the login.
    #[error("cannot connect to {target}: {message}")]
    Connect {
        /// The redacted URL.
        target: String,
        /// The driver's message, scrubbed of the password.
        message: String,
    },
    /// Connecting took longer than allowed.
    #[error("cannot connect to {target}: no answer within {after:?}")]
    ConnectTimeout {
        /// The redacted URL.
        target: String,
        /// The limit that passed.
        after: Duration,
    },
    /// Another session holds the shared advisory lock.
    #[error("the database is locked by another ptah session (waited {waited:?})")]
    LockBusy {
        /// How long this session waited.
        waited: Duration,
    },
    /// The server refused or failed a statement.
    #[error("database error: {0}")]
    Query(String),
    /// The live schema changed since the plan was computed; nothing was run.
    #[error(
        "the plan is stale: it was computed against {expected}, the database is now {actual}; plan again"
    )]
    StalePlan {
        /// The plan's `from_fingerprint`.
        expected: Fingerprint,
        /// The live schema's fingerprint.
        actual: Fingerprint,
    },
    /// The plan was written for another dialect than the session's.
    #[error("the plan is for {plan:?} but the database is {database:?}")]
    DialectMismatch {
        /// The plan's dialect.
        plan: Dialect,
        /// The session's dialect.
        database: Dialect,
    },
    /// A statement failed; `committed` lists exactly the statements whose effects remain.
    #[error(
        "statement {} of {total} failed ({} committed): {error}",
        index + 1,
        committed.len()
    )]
    ApplyFailed {
        /// The 0-based index of the failed statement in the plan.
        index: usize,
        /// The 0-based indexes of the statements that committed, in execution order.
        committed: Vec<usize>,
        /// The plan's statement count.
        total: usize,
        /// The server's message.
        error: String,
    },
    /// The server cannot parse a statement of the plan (a render bug): refused before any ran.
    #[error("statement {} of {total} does not parse on the server, nothing ran: {error}", index + 1)]
    Unparsable {
        /// The 0-based index of the statement in the plan.
        index: usize,
        /// The plan's statement count.
        total: usize,
        /// The server's message.
        error: String,
    },
    /// After applying, the database still differs from the desired schema.
    #[error("the database did not converge: a fresh plan still has {remaining} statement(s), first: {first}")]
    NotConverged {
        /// How many statements a fresh plan holds.
        remaining: usize,
        /// The first of them, for people.
        first: String,
    },
    /// The catalog holds something the engine cannot represent.
    #[error("cannot read {object}: {reason}")]
    Unsupported {
        /// The object, by name.
        object: String,
        /// What the engine cannot represent.
        reason: String,
    },
}

impl Error {
    /// A stable, machine-readable name for the variant (the CLI's JSON `error.code`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidUrl { .. }
            | Error::MultiStatements
            | Error::SeveralHosts
            | Error::UnsupportedTls => "invalid_url",
            Error::TlsCaFile { .. } => "tls_ca_file",
            Error::TlsUnavailable { .. } => "tls_unavailable",
            Error::TlsUntrusted { .. } => "tls_untrusted",
            Error::TlsHostname { .. } => "tls_hostname_mismatch",
            Error::Tls { .. } => "tls",
            Error::Connect { .. } | Error::ConnectTimeout { .. } => "connect",
            Error::LockBusy { .. } => "lock_busy",
            Error::DialectMismatch { .. } => "dialect_mismatch",
            Error::Unsupported { .. } => "unsupported",
            Error::StalePlan { .. } => "stale_plan",
            Error::NotConverged { .. } => "not_converged",
            Error::ApplyFailed { .. } => "apply_failed",
            Error::Unparsable { .. } => "unparsable_plan",
            Error::Query(_) => "database",
        }
    }

    /// True when the command ran and found or caused a failure, false for a refusal before
    /// anything ran (configuration, connection, a gate).
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Error::StalePlan { .. }
                | Error::NotConverged { .. }
                | Error::ApplyFailed { .. }
                | Error::Query(_)
        )
    }

    pub(crate) fn postgres(err: tokio_postgres::Error) -> Error {
        Error::Query(postgres_message(&err))
    }

    pub(crate) fn mysql(err: mysql_async::Error) -> Error {
        Error::Query(err.to_string())
    }
}

/// The server's own message: a `tokio_postgres::Error` displays a server error only as "db error".
pub(crate) fn postgres_message(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => err.to_string(),
    }
}
