//! The one error type of this crate. Every variant names what a caller can act on; none ever
//! carries a credential (registry errors are reduced to their status and reason).

use std::path::PathBuf;

use oci_client::errors::{OciDistributionError, OciErrorCode};

/// Why an artifact operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reference text breaks a rule of `oci://` references.
    #[error("invalid reference: {0}")]
    Reference(#[from] ptah_ocireference::Error),
    /// The registry Secret does not grant this request its credentials: another registry, plain
    /// HTTP or a CA it does not name. Nothing was sent.
    #[error("{0}")]
    NotGranted(#[from] ptah_registrygrant::Refusal),
    /// The registry refused the credentials (or asked for some and got none).
    #[error("registry {registry} refused the credentials (401/403)")]
    Unauthorized {
        /// `host[:port]`.
        registry: String,
    },
    /// The TLS handshake failed: unknown CA, wrong name, or a server not speaking TLS.
    #[error("TLS with registry {registry} failed: {reason}")]
    Tls {
        /// `host[:port]`.
        registry: String,
        /// What rustls reported.
        reason: String,
    },
    /// The registry cannot be reached.
    #[error("cannot connect to registry {registry}: {reason}")]
    Connect {
        /// `host[:port]`.
        registry: String,
        /// The transport error.
        reason: String,
    },
    /// The operation ran out of time.
    #[error("registry {registry} did not answer in time")]
    Timeout {
        /// `host[:port]`.
        registry: String,
    },
    /// The manifest, tag or blob does not exist.
    #[error("not found: {what}")]
    NotFound {
        /// The reference or blob looked up.
        what: String,
    },
    /// Content does not hash to the digest that names it.
    #[error("digest mismatch for {what}: expected {expected}, got {actual}")]
    DigestMismatch {
        /// The manifest or layer.
        what: String,
        /// The digest asked for.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// A size or count limit was exceeded (from a descriptor or while reading).
    #[error("{what} exceeds the limit of {limit}")]
    LimitExceeded {
        /// What was counted or measured.
        what: String,
        /// The limit that applies.
        limit: u64,
    },
    /// A blob's length differs from its descriptor.
    #[error("{what}: the descriptor declares {declared} bytes but {actual} arrived")]
    SizeMismatch {
        /// The layer.
        what: String,
        /// The descriptor's size.
        declared: u64,
        /// Bytes received (at least).
        actual: u64,
    },
    /// A file path inside an artifact is not a safe relative path.
    #[error("unsafe path {path:?}: {reason}")]
    UnsafePath {
        /// The path (truncated, escaped).
        path: String,
        /// The rule it breaks.
        reason: &'static str,
    },
    /// A manifest, config or layer has an unexpected media type.
    #[error("wrong media type for {what}: expected {expected}, got {actual}")]
    WrongMediaType {
        /// The manifest, config or layer.
        what: String,
        /// The media type required.
        expected: String,
        /// The media type found.
        actual: String,
    },
    /// The artifact type (or the `io.stokaro.ptah.kind` annotation) is not the expected one.
    #[error("wrong artifact type in {field}: expected {expected}, got {actual}")]
    WrongArtifactType {
        /// `artifactType` or the annotation name.
        field: &'static str,
        /// The type required.
        expected: String,
        /// The type found (empty when absent).
        actual: String,
    },
    /// The manifest breaks another rule of Ptah artifacts.
    #[error("invalid manifest: {reason}")]
    InvalidManifest {
        /// The rule broken.
        reason: String,
    },
    /// The content to push or pulled is not a valid artifact of its kind.
    #[error("invalid artifact content: {reason}")]
    InvalidContent {
        /// What is wrong.
        reason: String,
    },
    /// The verification policy cannot be used.
    #[error("invalid verification policy: {reason}")]
    PolicyInvalid {
        /// What is wrong with it.
        reason: String,
    },
    /// Credentials from the environment or a Docker config are unusable (never shown).
    #[error("registry credentials: {reason}")]
    Credentials {
        /// What is wrong, without the secret.
        reason: String,
    },
    /// The CA bundle cannot be used.
    #[error("CA bundle {path}: {reason}")]
    CaBundle {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The `--out` destination cannot be used.
    #[error("destination {path}: {reason}")]
    Destination {
        /// The destination.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// Reading or writing a local file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Any other registry failure.
    #[error("registry {registry}: {reason}")]
    Registry {
        /// `host[:port]`.
        registry: String,
        /// Status and reason.
        reason: String,
    },
}

impl Error {
    /// A stable machine-readable code for JSON reports.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Reference(_) => "invalid_reference",
            Error::NotGranted(refusal) => refusal.code(),
            Error::Unauthorized { .. } => "unauthorized",
            Error::Tls { .. } => "tls",
            Error::Connect { .. } => "connect",
            Error::Timeout { .. } => "timeout",
            Error::NotFound { .. } => "not_found",
            Error::DigestMismatch { .. } => "digest_mismatch",
            Error::LimitExceeded { .. } => "limit_exceeded",
            Error::SizeMismatch { .. } => "size_mismatch",
            Error::UnsafePath { .. } => "unsafe_path",
            Error::WrongMediaType { .. } => "wrong_media_type",
            Error::WrongArtifactType { .. } => "wrong_artifact_type",
            Error::InvalidManifest { .. } => "invalid_manifest",
            Error::InvalidContent { .. } => "invalid_content",
            Error::PolicyInvalid { .. } => "policy_invalid",
            Error::Credentials { .. } => "credentials",
            Error::CaBundle { .. } => "ca_bundle",
            Error::Destination { .. } => "destination",
            Error::Io { .. } => "io",
            Error::Registry { .. } => "registry",
        }
    }

    /// Whether the artifact itself is bad (hostile or corrupt), as opposed to access or input.
    pub fn is_integrity(&self) -> bool {
        matches!(
            self,
            Error::DigestMismatch { .. }
                | Error::LimitExceeded { .. }
                | Error::SizeMismatch { .. }
                | Error::UnsafePath { .. }
                | Error::WrongMediaType { .. }
                | Error::WrongArtifactType { .. }
                | Error::InvalidManifest { .. }
        )
    }

    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.into();
        move |source| Error::Io { path, source }
    }

    /// Maps a failure of the capped-read HTTP client at `registry`.
    pub(crate) fn from_http(err: &reqwest::Error, registry: &str) -> Error {
        transport(
            err,
            err.status().map(|s| s.as_u16()),
            err.is_timeout(),
            registry.to_owned(),
        )
    }

    /// Maps an oci-client error for an operation on `what` at `registry`.
    pub(crate) fn from_oci(err: OciDistributionError, registry: &str, what: &str) -> Error {
        let registry = registry.to_owned();
        if let Some((expected, actual)) = digest_failure(&err) {
            return Error::DigestMismatch {
                what: what.to_owned(),
                expected,
                actual,
            };
        }
        match err {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => Error::Unauthorized { registry },
            OciDistributionError::RegistryError { envelope, .. } => {
                let codes: Vec<&OciErrorCode> = envelope.errors.iter().map(|e| &e.code).collect();
                if codes
                    .iter()
                    .any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied))
                {
                    Error::Unauthorized { registry }
                } else if codes.iter().any(|c| {
                    matches!(
                        c,
                        OciErrorCode::ManifestUnknown
                            | OciErrorCode::BlobUnknown
                            | OciErrorCode::NameUnknown
                            | OciErrorCode::NotFound
                    )
                }) {
                    Error::NotFound {
                        what: what.to_owned(),
                    }
                } else {
                    let reason = envelope
                        .errors
                        .iter()
                        .map(|e| format!("{:?}: {}", e.code, e.message))
                        .collect::<Vec<_>>()
                        .join("; ");
                    Error::Registry { registry, reason }
                }
            }
            OciDistributionError::ServerError { code: 401 | 403, .. } => Error::Unauthorized { registry },
            OciDistributionError::ServerError { code: 404, .. }
            | OciDistributionError::ImageManifestNotFoundError(_) => Error::NotFound {
                what: what.to_owned(),
            },
            OciDistributionError::ServerError { code, .. } => Error::Registry {
                registry,
                reason: format!("HTTP status {code}"),
            },
            OciDistributionError::RequestError(e) => {
                transport(&e, e.status().map(|s| s.as_u16()), e.is_timeout(), registry)
            }
            OciDistributionError::IoError(e) => match find_tls(&e) {
                Some(reason) => Error::Tls { registry, reason },
                None => Error::Registry {
                    registry,
                    reason: e.to_string(),
                },
            },
            other => Error::Registry {
                registry,
                reason: other.to_string(),
            },
        }
    }
}

/// A reqwest failure: an HTTP status, TLS, timeout, connection, or something else.
fn transport(
    err: &(dyn std::error::Error + 'static),
    status: Option<u16>,
    is_timeout: bool,
    registry: String,
) -> Error {
    match status {
        Some(401 | 403) => return Error::Unauthorized { registry },
        Some(code) => {
            return Error::Registry {
                registry,
                reason: format!("HTTP status {code}"),
            };
        }
        None => {}
    }
    let text = chain_text(err);
    if let Some(reason) = find_tls(err) {
        return Error::Tls { registry, reason };
    }
    // Some connectors hide the rustls error behind their own boxes; its text is stable.
    for marker in [
        "invalid peer certificate",
        "received corrupt message",
        "peer is incompatible",
    ] {
        if let Some(at) = text.find(marker) {
            let reason = text[at..].to_owned();
            let reason = if marker == "received corrupt message" {
                format!("{reason} (the server does not speak TLS; is it a plain-HTTP registry?)")
            } else {
                reason
            };
            return Error::Tls { registry, reason };
        }
    }
    if is_timeout {
        Error::Timeout { registry }
    } else {
        Error::Connect {
            registry,
            reason: text,
        }
    }
}

/// Every message of `err`'s chain joined by `: `.
fn chain_text(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&e.to_string());
        current = e.source();
    }
    text
}

/// The rustls error somewhere in `err`'s chain (io::Error hides its payload from `source()`).
fn find_tls(err: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = current {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(describe_tls(tls));
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(inner) = io.get_ref()
            && let Some(found) = find_tls(inner)
        {
            return Some(found);
        }
        current = e.source();
    }
    None
}

fn describe_tls(err: &rustls::Error) -> String {
    match err {
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            format!("{err} (the server does not speak TLS; is it a plain-HTTP registry?)")
        }
        _ => err.to_string(),
    }
}

/// A digest verification failure anywhere in the chain, as (expected, actual).
fn digest_failure(err: &OciDistributionError) -> Option<(String, String)> {
    use oci_client::errors::DigestError;
    let from_digest = |d: &DigestError| match d {
        DigestError::VerificationError { expected, actual } => Some((expected.clone(), actual.clone())),
        _ => None,
    };
    match err {
        OciDistributionError::DigestError(d) => from_digest(d),
        OciDistributionError::IoError(io) => io
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<DigestError>())
            .and_then(from_digest),
        _ => None,
    }
}
