//! The body of a delivery: the binding and the payload, in canonical JSON (RFC 8785, as
//! [`ptah_fingerprint::canonical_json`] writes it), sent with its sha256 in [`crate::DIGEST_HEADER`].
//!
//! Canonical means the receiver's own re-serialisation of what it parsed gives back exactly the
//! bytes it received: no unknown field, no field twice, no whitespace, no other order or number
//! spelling. So the stored bytes are the only reading of the result.

use std::str::FromStr as _;

use ptah_dataplane::{InvariantViolation, ResultPayload};
use ptah_fingerprint::{Digest, canonical_json};
use serde::{Deserialize, Serialize};

use crate::{BindingError, MAX_BODY_BYTES, ResultBinding};

/// What a runner delivers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultBody {
    /// The operation it is the result of; equal to the client certificate's.
    pub binding: ResultBinding,
    /// The result.
    pub payload: ResultPayload,
}

/// A body's bytes and their digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedBody {
    /// The canonical JSON.
    pub bytes: Vec<u8>,
    /// Its sha256.
    pub digest: Digest,
}

/// Why a body was refused. No variant quotes the body: it may hold a plan's SQL or row values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Larger than [`MAX_BODY_BYTES`].
    #[error("the body is {0} bytes, more than {MAX_BODY_BYTES}")]
    TooLarge(usize),
    /// The digest header is not `sha256:<64 lowercase hex>`.
    #[error("the digest header is not sha256:<64 lowercase hex>")]
    MalformedDigest,
    /// The digest header names other bytes.
    #[error("the body's sha256 is {actual}, the digest header says {declared}")]
    DigestMismatch {
        /// What the header said.
        declared: Digest,
        /// What the body hashes to.
        actual: Digest,
    },
    /// Not JSON of the body's shape (the JSON error's category and position only).
    #[error("the body is not a result body: {0}")]
    Malformed(String),
    /// Parses, but is not the canonical JSON of what it parses to.
    #[error("the body is not in canonical JSON")]
    NotCanonical,
    /// The binding breaks its bounds.
    #[error(transparent)]
    Binding(#[from] BindingError),
    /// The payload breaks an invariant of the runner protocol.
    #[error("the payload is invalid: {0}")]
    Payload(#[from] InvariantViolation),
    /// The payload is the result of another operation than its binding names.
    #[error("the payload is a {payload} result, the binding names {binding}")]
    OtherOperation {
        /// The payload's operation and id.
        payload: String,
        /// The binding's operation and id.
        binding: String,
    },
}

impl ResultBody {
    /// The canonical bytes to send and their digest; refuses a body a receiver would refuse.
    pub fn encode(&self) -> Result<EncodedBody, BodyError> {
        self.check()?;
        let bytes = canonical_json(self).map_err(|e| BodyError::Malformed(e.to_string()))?;
        if bytes.len() > MAX_BODY_BYTES {
            return Err(BodyError::TooLarge(bytes.len()));
        }
        let digest = Digest::of(&bytes);
        Ok(EncodedBody { bytes, digest })
    }

    /// Reads a received body: the size first, then the digest, then the shape, then canonical
    /// form, then the invariants.
    pub fn decode(bytes: &[u8], digest_header: &str) -> Result<Self, BodyError> {
        if bytes.len() > MAX_BODY_BYTES {
            return Err(BodyError::TooLarge(bytes.len()));
        }
        let declared = Digest::from_str(digest_header.trim()).map_err(|_| BodyError::MalformedDigest)?;
        let actual = Digest::of(bytes);
        if declared != actual {
            return Err(BodyError::DigestMismatch { declared, actual });
        }
        let body: ResultBody = serde_json::from_slice(bytes).map_err(|e| {
            BodyError::Malformed(format!(
                "{:?} at line {} column {}",
                e.classify(),
                e.line(),
                e.column()
            ))
        })?;
        if canonical_json(&body).map_err(|e| BodyError::Malformed(e.to_string()))? != bytes {
            return Err(BodyError::NotCanonical);
        }
        body.check()?;
        Ok(body)
    }

    fn check(&self) -> Result<(), BodyError> {
        self.binding.validate()?;
        self.payload.validate()?;
        let claim = &self.binding.claim;
        if self.payload.operation != claim.operation
            || self.payload.operation_id.as_ref() != Some(&claim.operation_id)
        {
            return Err(BodyError::OtherOperation {
                payload: format!(
                    "{} ({})",
                    self.payload.operation.as_str(),
                    self.payload
                        .operation_id
                        .as_ref()
                        .map_or("no id", |id| id.as_str())
                ),
                binding: format!("{} ({})", claim.operation.as_str(), claim.operation_id),
            });
        }
        Ok(())
    }
}
