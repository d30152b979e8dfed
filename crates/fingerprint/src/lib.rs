//! Canonical JSON and sha256 content identities.
//!
//! Two identities exist and are kept apart by type: a [`Digest`] names raw bytes (an OCI blob, a
//! plan's content), a [`Fingerprint`] names a JSON document independent of how it was written
//! (key order, whitespace, number spelling). Both print as `sha256:<64 lowercase hex>`.

mod canonical;
mod scalar;
mod sha;
mod stream;

pub use canonical::{canonical_json, canonical_json_value};
pub use sha::{Digest, Fingerprint, Sha256};

/// Why a canonical form or an identity could not be produced or parsed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// The value could not be turned into JSON (for example a map with non-string keys).
    #[error("value is not representable as JSON: {0}")]
    NotJson(String),
    /// A float that JSON cannot carry (NaN or an infinity).
    #[error("number {0} has no JSON form")]
    NonFiniteNumber(String),
    /// The text is not `sha256:` followed by 64 lowercase hex digits.
    #[error("{0:?} is not a sha256 identity (want sha256:<64 lowercase hex>)")]
    InvalidIdentity(String),
}
