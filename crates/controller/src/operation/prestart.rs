//! Operations refused before their main container started: by the fetch init container, whose
//! `ptah` writes its typed error as its termination message (`{"code":…,"message":…}`, see
//! `ptah_cli::termination`), or by the kubelet, which cannot create a container whose Secret (or
//! key) does not exist. Either way the main container, the only one that may hold a database
//! credential, never ran: nothing was read from or written to the database.
//!
//! This module only classifies what the Pod's status says; each family decides what a class
//! means for it, and [`holds`] says whether a recorded refusal still stands.

use jiff::Timestamp;
use ptah_api::{
    conditions::Reason,
    shared::{Epoch, OperationRefusal, Sha256Digest},
};
use serde::Deserialize;

use super::{
    action::Event,
    observed::{InitFailure, Stuck},
};

/// The codes of a refused artifact: those of `ptah_artifact::Error` whose `is_integrity()` holds,
/// and `invalid_content` (a pulled file that is not valid for its kind). The same bytes are
/// refused whichever registry serves them and however often.
pub const ARTIFACT_CODES: &[&str] = &[
    "digest_mismatch",
    "limit_exceeded",
    "size_mismatch",
    "unsafe_path",
    "wrong_media_type",
    "wrong_artifact_type",
    "invalid_manifest",
    "invalid_content",
];

/// The refusals of a registry Secret's grant, with their condition reasons.
pub const GRANT_CODES: &[(&str, Reason)] = &[
    ("registry_authority_mismatch", Reason::RegistryAuthorityMismatch),
    ("plain_http_not_granted", Reason::PlainHTTPNotGranted),
    ("ca_not_granted", Reason::CANotGranted),
];

/// The longest message kept (status and Event alike).
const MAX_MESSAGE_BYTES: usize = 1024;

/// What kind of refusal it is, which decides when the operation may run again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// The artifact itself was refused: never again for that digest, until it, the spec or the
    /// execution binding changes.
    Artifact,
    /// The registry Secret does not grant the request: retried at the next cycle (the Secret may
    /// be fixed, and the manager cannot watch Secrets).
    Grant,
    /// A Secret or a key the Pod names does not exist: retried at the next cycle.
    Secret,
    /// Anything else (the registry unreachable, credentials refused, a termination message that
    /// cannot be read): a failure, retried after `failureRetryInterval`.
    Failed,
}

/// One operation refused before its main container started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreStart {
    /// Its class.
    pub class: Class,
    /// The condition reason.
    pub reason: Reason,
    /// The code `ptah` reported, if it reported one.
    pub code: Option<String>,
    /// What happened, for a person: bounded, with names and codes only.
    pub message: String,
}

impl PreStart {
    /// The record that keeps the operation from running again while it holds; none for a failure
    /// retried after `failureRetryInterval`.
    pub fn record(
        &self,
        digest: Option<&Sha256Digest>,
        generation: i64,
        epoch: &Epoch,
        now: Timestamp,
    ) -> Option<OperationRefusal> {
        (self.class != Class::Failed).then(|| OperationRefusal {
            reason: self.reason.as_str().to_owned(),
            code: self.code.clone(),
            message: self.message.clone(),
            digest: digest.cloned(),
            terminal: self.class == Class::Artifact,
            observed_generation: generation,
            execution_binding_id: epoch.clone(),
            refused_at: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now),
        })
    }

    /// The Warning Event announcing it, `prefix` before its message.
    pub fn event(&self, prefix: &str) -> Event {
        let reason = match self.class {
            Class::Failed => "OperationFailed",
            _ => self.reason.as_str(),
        };
        Event::warning(reason, format!("{prefix}{}", self.message))
    }
}

/// ptah's termination line.
#[derive(Deserialize)]
struct Line {
    code: String,
    message: String,
}

/// Classifies the init container failure `f` by the code its termination message carries; a
/// message that is not ptah's line is a failure named by the exit code alone.
pub fn from_init(f: &InitFailure) -> PreStart {
    let line = f
        .message
        .as_deref()
        .and_then(|m| serde_json::from_str::<Line>(m.trim()).ok())
        .filter(|l| is_code(&l.code));
    let Some(line) = line else {
        return PreStart {
            class: Class::Failed,
            reason: Reason::OperationFailed,
            code: None,
            message: bounded(format!(
                "init container {} exited with code {} without a readable error",
                f.container, f.exit_code
            )),
        };
    };
    let grant = GRANT_CODES.iter().find(|(c, _)| *c == line.code);
    let (class, reason, what) = if ARTIFACT_CODES.contains(&line.code.as_str()) {
        (Class::Artifact, Reason::ArtifactRefused, "refused the artifact")
    } else if let Some((_, reason)) = grant {
        (Class::Grant, *reason, "was refused the registry credentials")
    } else {
        (
            Class::Failed,
            Reason::OperationFailed,
            "could not fetch the artifact",
        )
    };
    PreStart {
        class,
        reason,
        message: bounded(format!("{} {what}: {}: {}", f.container, line.code, line.message)),
        code: Some(line.code),
    }
}

/// A container that cannot be created because a Secret (or a key of it) it names does not exist,
/// read from the kubelet's `CreateContainerConfigError` message; `None` for anything else.
pub fn from_stuck(s: &Stuck) -> Option<PreStart> {
    if s.reason != "CreateContainerConfigError" {
        return None;
    }
    let (secret, key) = missing_secret(&s.message)?;
    let what = match key {
        Some(key) => format!("Secret {secret:?} has no key {key:?}"),
        None => format!("Secret {secret:?} does not exist"),
    };
    Some(PreStart {
        class: Class::Secret,
        reason: Reason::SecretNotFound,
        code: None,
        message: bounded(format!(
            "{what}: container {} of Pod {} cannot start",
            s.container, s.pod
        )),
    })
}

/// Whether the recorded refusal `r` still keeps its operation from running: under the same spec
/// generation and execution binding, for an artifact refusal while `digest` is the refused one,
/// otherwise until a Resolve (the next cycle's first step) ran after it.
pub fn holds(
    r: &OperationRefusal,
    generation: i64,
    epoch: &Epoch,
    digest: Option<&Sha256Digest>,
    resolved_at: Option<Timestamp>,
) -> bool {
    if r.observed_generation != generation || &r.execution_binding_id != epoch {
        return false;
    }
    if r.terminal {
        return r.digest.is_some() && r.digest.as_ref() == digest;
    }
    resolved_at.is_none_or(|t| t <= r.refused_at.0)
}

/// When a claim whose Pod waits for a missing Secret may be settled: a read-only one at once
/// (`now`); a mutating one once its dispatch window has closed, plus the termination grace for
/// the skew between this clock and the node's, since its runner refuses to start the child after
/// `dispatch_not_after`; a mutating one without that deadline never (its Job's deadline ends it).
pub fn may_settle_at(
    mutating: bool,
    dispatch_not_after: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    now: Timestamp,
) -> Option<Timestamp> {
    if !mutating {
        return Some(now);
    }
    let grace = std::time::Duration::from_secs(super::claim::TERMINATION_GRACE_SECONDS.max(0) as u64);
    dispatch_not_after.map(|t| super::time::after(t.0, grace))
}

/// The Secret (and key) named by the kubelet's message: `secret "NAME" not found`, or
/// `couldn't find key KEY in Secret NAMESPACE/NAME`. Only names that are valid for their kind are
/// taken, so nothing but a name can reach the status.
fn missing_secret(message: &str) -> Option<(String, Option<String>)> {
    const KEY: &str = "couldn't find key ";
    if let Some(at) = message.find(KEY) {
        let (key, rest) = message[at + KEY.len()..].split_once(" in Secret ")?;
        let name = rest.split_whitespace().next()?.rsplit('/').next()?;
        return (is_secret_name(name) && is_key(key)).then(|| (name.to_owned(), Some(key.to_owned())));
    }
    let at = message.find("secret \"")?;
    let (name, rest) = message[at + "secret \"".len()..].split_once('"')?;
    (rest.starts_with(" not found") && is_secret_name(name)).then(|| (name.to_owned(), None))
}

/// A DNS subdomain, as every Secret name is.
fn is_secret_name(name: &str) -> bool {
    (1..=253).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// A Secret data key.
fn is_key(key: &str) -> bool {
    (1..=253).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
}

/// A short snake_case word, as every code of `ptah` is.
fn is_code(code: &str) -> bool {
    (1..=64).contains(&code.len())
        && code.starts_with(|c: char| c.is_ascii_lowercase())
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `text` without control characters, cut to [`MAX_MESSAGE_BYTES`] on a character boundary.
fn bounded(text: String) -> String {
    let mut clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if clean.len() > MAX_MESSAGE_BYTES {
        let mut at = MAX_MESSAGE_BYTES;
        while !clean.is_char_boundary(at) {
            at -= 1;
        }
        clean.truncate(at);
    }
    clean
}

#[cfg(test)]
mod tests;
