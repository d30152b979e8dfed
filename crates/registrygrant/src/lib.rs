//! What a registry Secret grants its credentials to, and the check that runs in the operation
//! Pod before any request carries them.
//!
//! An author writes `desired.ociRef` and `transport`; a platform team writes the registry Secret.
//! The Secret, not the spec, says where its credentials may go: the key `registry` names the one
//! authority (`host[:port]`), `allowPlainHTTP: "true"` lets them travel without TLS, and
//! `caSHA256` names the only CA bundle they may be sent under. An author can point a resource at
//! any host, but the credentials follow only the grant (docs/security.md, "Registry grants").
//!
//! The workload mounts the grant keys next to the credentials; the runner (Resolve, Verify) and
//! `ptah` itself (the fetch init containers) call [`Grant::check`] before they start a child or
//! open a connection. A refusal names the Secret key to add, never a value of the Secret.

mod authority;
mod dockerconfig;

pub use authority::{authorities_match, normalize_authority};
pub use dockerconfig::only_entry_for;

use ptah_fingerprint::Digest;

/// The Secret key naming the one registry authority (`host[:port]`) the credentials are for.
pub const KEY_REGISTRY: &str = "registry";
/// The Secret key that, set to `"true"`, lets the credentials travel over plain HTTP.
pub const KEY_ALLOW_PLAIN_HTTP: &str = "allowPlainHTTP";
/// The Secret key holding `sha256:<hex>` of the only CA bundle the credentials may be sent under.
pub const KEY_CA_SHA256: &str = "caSHA256";

/// How the container got its credentials (`environment` or `docker-config`); set by the workload
/// on every container that talks to a registry with credentials. Its presence turns the check on:
/// the standalone CLI, run by the owner of its own environment, has no grant to follow.
pub const ENV_MODE: &str = "PTAH_REGISTRY_GRANT_MODE";
/// The value of [`KEY_REGISTRY`], filled by the kubelet from the Secret.
pub const ENV_REGISTRY: &str = "PTAH_REGISTRY_GRANT";
/// The value of [`KEY_ALLOW_PLAIN_HTTP`], filled by the kubelet from the Secret.
pub const ENV_ALLOW_PLAIN_HTTP: &str = "PTAH_REGISTRY_PLAIN_HTTP_GRANT";
/// The value of [`KEY_CA_SHA256`], filled by the kubelet from the Secret.
pub const ENV_CA_SHA256: &str = "PTAH_REGISTRY_CA_SHA256_GRANT";

/// [`ENV_MODE`] for username/password or token variables.
pub const MODE_ENVIRONMENT: &str = "environment";
/// [`ENV_MODE`] for a mounted Docker `config.json`.
pub const MODE_DOCKER_CONFIG: &str = "docker-config";

/// How the credentials reached the container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Variables from the Secret's username/password or token keys: `registry` is required.
    Environment,
    /// A mounted Docker config: its `auths` key names the authority, `registry` may narrow it.
    DockerConfig,
}

/// What the Secret grants. Built from the variables the kubelet filled; never holds a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    mode: Mode,
    registry: Option<String>,
    allow_plain_http: bool,
    ca_sha256: Option<String>,
}

/// One connection about to carry the credentials.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The authority the reference names (`host[:port]`).
    pub authority: &'a str,
    /// Whether the connection is plain HTTP.
    pub plain_http: bool,
    /// The CA bundle the connection trusts besides the system roots, if any.
    pub ca_bundle: Option<&'a [u8]>,
}

/// Why credentials may not be sent; each carries the code the frame and the condition use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The Secret names no registry, or another one than the reference.
    #[error("{0}")]
    RegistryAuthorityMismatch(String),
    /// Plain HTTP was asked for and the Secret does not allow it.
    #[error("{0}")]
    PlainHttpNotGranted(String),
    /// A CA bundle the Secret does not name.
    #[error("{0}")]
    CaNotGranted(String),
    /// A grant variable that is not one of its accepted values.
    #[error("{0}")]
    Malformed(String),
}

impl Refusal {
    /// The snake_case code (`registry_authority_mismatch`, `plain_http_not_granted`,
    /// `ca_not_granted`, `registry_grant_malformed`).
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::RegistryAuthorityMismatch(_) => "registry_authority_mismatch",
            Refusal::PlainHttpNotGranted(_) => "plain_http_not_granted",
            Refusal::CaNotGranted(_) => "ca_not_granted",
            Refusal::Malformed(_) => "registry_grant_malformed",
        }
    }
}

/// The authority (`host[:port]`) an `oci://` reference names.
pub fn reference_authority(reference: &str) -> Result<String, Refusal> {
    let parsed: ptah_ocireference::Reference = reference
        .parse()
        .map_err(|e| Refusal::Malformed(format!("the reference cannot carry credentials: {e}")))?;
    Ok(parsed.registry().to_owned())
}

impl Grant {
    /// The grant the environment carries, or `None` when [`ENV_MODE`] is unset (no grant is
    /// enforced). Empty variables count as unset: the kubelet leaves an optional key's variable
    /// out, and an empty value grants nothing.
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Option<Grant>, Refusal> {
        let get = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let mode = match get(ENV_MODE).as_deref() {
            None => return Ok(None),
            Some(MODE_ENVIRONMENT) => Mode::Environment,
            Some(MODE_DOCKER_CONFIG) => Mode::DockerConfig,
            Some(_) => {
                return Err(Refusal::Malformed(format!(
                    "{ENV_MODE} must be {MODE_ENVIRONMENT} or {MODE_DOCKER_CONFIG}"
                )));
            }
        };
        let allow_plain_http = match get(ENV_ALLOW_PLAIN_HTTP).as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                return Err(Refusal::Malformed(format!(
                    "the registry Secret's key {KEY_ALLOW_PLAIN_HTTP} must be \"true\" or \"false\""
                )));
            }
        };
        Ok(Some(Grant {
            mode,
            registry: get(ENV_REGISTRY).map(|r| r.trim().to_owned()),
            allow_plain_http,
            ca_sha256: get(ENV_CA_SHA256).map(|c| c.trim().to_owned()),
        }))
    }

    /// A grant built in code (tests, and callers that read the keys themselves).
    pub fn new(mode: Mode, registry: Option<&str>, allow_plain_http: bool, ca_sha256: Option<&str>) -> Grant {
        Grant {
            mode,
            registry: registry.map(str::to_owned),
            allow_plain_http,
            ca_sha256: ca_sha256.map(str::to_owned),
        }
    }

    /// How the credentials reached the container.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Checks a request to the registry of `reference` (an `oci://` reference).
    pub fn check_reference(
        &self,
        reference: &str,
        plain_http: bool,
        ca_bundle: Option<&[u8]>,
    ) -> Result<(), Refusal> {
        self.check(&Request {
            authority: &reference_authority(reference)?,
            plain_http,
            ca_bundle,
        })
    }

    /// Whether `request` may carry the credentials. Every rule is checked before any connection.
    pub fn check(&self, request: &Request<'_>) -> Result<(), Refusal> {
        match (&self.registry, self.mode) {
            (None, Mode::Environment) => {
                return Err(Refusal::RegistryAuthorityMismatch(format!(
                    "the registry Secret does not name the registry its credentials are for: add the key \
                     {KEY_REGISTRY} with the authority (host[:port]) of the reference, {}",
                    request.authority
                )));
            }
            (None, Mode::DockerConfig) => {}
            (Some(granted), _) => {
                if !authorities_match(granted, request.authority, request.plain_http) {
                    return Err(Refusal::RegistryAuthorityMismatch(format!(
                        "the registry Secret grants its credentials to another registry than {}, the one the \
                         reference names; no request was sent. Point the reference at the granted registry, \
                         or use a Secret whose key {KEY_REGISTRY} names {}",
                        request.authority, request.authority
                    )));
                }
            }
        }
        if request.plain_http && !self.allow_plain_http {
            return Err(Refusal::PlainHttpNotGranted(format!(
                "transport.plainHTTP would send the registry credentials in clear text, and the registry \
                 Secret does not allow it: add the key {KEY_ALLOW_PLAIN_HTTP}: \"true\" to the Secret, or use TLS"
            )));
        }
        if let Some(bundle) = request.ca_bundle {
            let actual = Digest::of(bundle).to_string();
            match self.ca_sha256.as_deref() {
                None => {
                    return Err(Refusal::CaNotGranted(format!(
                        "transport.caFrom names a CA bundle, and the registry Secret does not grant one: add the \
                         key {KEY_CA_SHA256} with the bundle's digest, {actual}"
                    )));
                }
                Some(granted) if granted != actual => {
                    return Err(Refusal::CaNotGranted(format!(
                        "the CA bundle transport.caFrom names has the digest {actual}, which the registry \
                         Secret's key {KEY_CA_SHA256} does not grant; no request was sent"
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
