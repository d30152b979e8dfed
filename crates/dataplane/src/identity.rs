//! The target identity: which physical database, as which user, under which session semantics a
//! database URL reaches, hashed to a [`Fingerprint`]. The manager computes it from the URL in the
//! realm's Secret; the runner recomputes it from the URL its Pod got and refuses to start `ptah`
//! when they differ.
//!
//! The URL is read by `ptah_dburl::DbUrl::parse`, the very reading the executor connects with, so
//! what is accepted, refused, and which host, port, database, user and TLS mode a URL names are
//! the same on both sides (the decisions are written in `crates/dburl/src/lib.rs`).
//!
//! In the identity: engine family, address family, host (ASCII-lowercased; a DNS trailing dot is
//! kept), port (default filled in), database (case kept), user and TLS mode (default `disable`).
//! Out of it: the password, timing knobs and `application_name`.

use std::collections::BTreeMap;

use ptah_dburl::{DbUrl, Engine};
use ptah_fingerprint::Fingerprint;
use serde::Serialize;

pub use ptah_dburl::Error as IdentityError;

/// The identity document's version; part of what is hashed.
pub const IDENTITY_VERSION: u32 = 1;

/// The normalised target of a database URL. The field names, their order and their values are
/// what is hashed: `tests/identity_pins.rs` pins digests so that none changes by accident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetIdentity {
    version: u32,
    engine: &'static str,
    address_family: &'static str,
    host: String,
    port: u16,
    database: String,
    user: String,
    tls: &'static str,
    /// Always empty: version 1 documents carried PostgreSQL `options`/`target_session_attrs`
    /// and MySQL `charset`/`collation` here, which the URL reading now refuses (the executor never
    /// applied them). The empty map stays so that every other URL keeps its version 1 digest.
    session_options: BTreeMap<String, String>,
    /// Not serialised: the engine family as a type, for [`TargetIdentity::engine`].
    #[serde(skip)]
    family: Engine,
}

impl TargetIdentity {
    /// Parses a database URL into its identity; refusals are typed and never carry the password.
    pub fn from_url(text: &str) -> Result<Self, IdentityError> {
        Ok(Self::of(&DbUrl::parse(text)?))
    }

    /// The identity of an already parsed URL.
    pub fn of(url: &DbUrl) -> Self {
        TargetIdentity {
            version: IDENTITY_VERSION,
            engine: url.engine().as_str(),
            address_family: url.host().family().as_str(),
            host: url.host().name().to_owned(),
            port: url.port(),
            database: url.database().to_owned(),
            user: url.user().to_owned(),
            tls: url.tls().as_str(),
            session_options: BTreeMap::new(),
            family: url.engine(),
        }
    }

    /// The engine family.
    pub fn engine(&self) -> Engine {
        self.family
    }

    /// The fingerprint over the identity's canonical JSON.
    pub fn digest(&self) -> Result<Fingerprint, ptah_fingerprint::Error> {
        Fingerprint::of(self)
    }
}
