//! Failures of the server itself; refusals of a request are [`crate::Verdict::Deny`], not errors.

use std::path::PathBuf;

/// Why the webhook server could not start or keep serving.
#[derive(Debug, thiserror::Error)]
pub enum AdmissionError {
    /// A certificate or key file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The PEM files do not hold a usable certificate chain and matching private key.
    #[error("invalid serving certificate in {dir}: {why}")]
    InvalidCertificate {
        /// The certificate directory.
        dir: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The TLS configuration could not be built.
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    /// The listening socket failed.
    #[error("webhook listener: {0}")]
    Listen(#[from] std::io::Error),
}
