//! A typed client for the HTTP API of Toxiproxy, the fault proxy `cargo xtask services up` runs in
//! front of PostgreSQL, MariaDB and both registries (`toxiproxy-server`, built from
//! `github.com/Shopify/toxiproxy/v2` at the version `matrix/kubernetes.json` pins).
//!
//! [`Toxiproxy`] lists, creates, deletes and resets proxies, enables and disables them, and adds
//! and removes [`Toxic`]s: latency, a hang (`timeout`), a reset (`reset_peer`), a cut after some
//! bytes (`limit_data`) and a bandwidth cap. Each change that a test must undo comes back as a
//! guard ([`ToxicGuard`], [`CutGuard`], [`ProxyGuard`]) that undoes it on an explicit call, or on
//! drop when the test forgot or panicked.
//!
//! Two behaviours of Toxiproxy the tests rely on:
//! - a toxic reaches the connections already open, but acts only when data flows through it:
//!   `reset_peer` on a connection that is waiting for a slow statement fires when the next bytes
//!   arrive (send another request on that connection);
//! - `reset_peer` sends a real TCP reset (`SO_LINGER` 0) only on connections opened after it was
//!   added; on a connection already open it closes with a FIN, which the client sees as the
//!   connection closing under it.
//!
//! **Counting connections.** Toxiproxy keeps no connection count: its proxy objects carry none, and
//! its optional Prometheus metrics count bytes, added when a connection ends. Tests count the
//! connections that arrived on the server side instead: PostgreSQL's `pg_stat_activity` (rows
//! with the `application_name` the test set), MariaDB's `information_schema.PROCESSLIST` (rows on
//! the test's own database; `SHOW GLOBAL STATUS LIKE 'Connections'` counts for the whole
//! server, which other tests share).

mod client;
mod guard;
mod toxic;

pub use client::{Proxy, ToxicState, Toxiproxy};
pub use guard::{CutGuard, ProxyGuard, ToxicGuard};
pub use ptah_testservices::proxies;
pub use toxic::{Stream, Toxic, ToxicKind};

/// The command that starts Toxiproxy with the other test services.
pub const UP_COMMAND: &str = ptah_testservices::UP_COMMAND;

/// What went wrong talking to Toxiproxy.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client for Toxiproxy: {0}")]
    Client(#[source] reqwest::Error),
    /// The (unused) TLS configuration the HTTP client insists on could not be made.
    #[error("cannot configure TLS for the HTTP client: {0}")]
    Tls(#[source] rustls::Error),
    /// Toxiproxy did not answer (not running, or another port).
    #[error("Toxiproxy at {url} does not answer ({source}); start it with `{UP_COMMAND}`")]
    Unreachable {
        /// The request's URL.
        url: String,
        /// The transport error.
        #[source]
        source: reqwest::Error,
    },
    /// Toxiproxy answered with an error status (404: no such proxy or toxic; 409: the name is
    /// taken).
    #[error("Toxiproxy refused {method} {path}: HTTP {status}: {message}")]
    Refused {
        /// The request's method.
        method: &'static str,
        /// The request's path.
        path: String,
        /// The HTTP status.
        status: u16,
        /// Toxiproxy's `error` text, or the body.
        message: String,
    },
    /// The answer was not the JSON this client expects.
    #[error("Toxiproxy's answer to {method} {path} is not the expected JSON: {source}")]
    Decode {
        /// The request's method.
        method: &'static str,
        /// The request's path.
        path: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// A guard could not undo its fault on drop (no runtime thread could be started).
    #[error("cannot undo a fault on drop: {0}")]
    Undo(#[source] std::io::Error),
}

impl Error {
    /// Is this Toxiproxy's 404 (no such proxy or toxic)?
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::Refused { status: 404, .. })
    }
}

/// The result of a Toxiproxy call.
pub type Result<T> = std::result::Result<T, Error>;
