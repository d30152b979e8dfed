//! The one error type of the crate.

/// Why a rotation pass, or setting one up, failed.
#[derive(Debug, thiserror::Error)]
pub enum CertRotationError {
    /// A flag or configuration value is unusable; fix the flag.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// rcgen refused to generate a key or sign a certificate (a bug or an unusable SAN).
    #[error("cannot issue a certificate: {0}")]
    Issue(#[from] rcgen::Error),
    /// A Kubernetes API call failed; the pass is retried with back-off.
    #[error("{call}: {source}")]
    Api {
        /// Which call, with the object it addressed.
        call: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// Someone else changed the object between our read and our write; the next pass re-reads it.
    #[error(
        "{what} changed while it was being rotated (resourceVersion conflict); the next pass re-reads it"
    )]
    Conflict {
        /// The object, as `kind namespace/name`.
        what: String,
    },
    /// The Secret exists with another type, which is immutable; only deleting it lets us recreate it.
    #[error(
        "Secret {namespace}/{name} has type {found:?}, not kubernetes.io/tls; delete it and the rotator recreates it"
    )]
    WrongSecretType {
        /// The Secret's namespace.
        namespace: String,
        /// The Secret's name.
        name: String,
        /// The type it has.
        found: String,
    },
    /// The decision and the material disagree: a bug in this crate, never bad input.
    #[error("internal inconsistency: {0}")]
    Inconsistent(&'static str),
}

impl CertRotationError {
    /// Wraps a client error, naming the call.
    pub(crate) fn api(call: impl Into<String>, source: kube::Error) -> Self {
        CertRotationError::Api {
            call: call.into(),
            source,
        }
    }
}
