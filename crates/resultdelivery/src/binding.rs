//! The operation a client certificate is good for, written into its only URI SAN as
//! `ptah-result://operator.ptah.run/v1/<base64url of the binding's canonical JSON>`.
//!
//! The receiver compares every field with the live claim, Job and Pod before it stores anything,
//! so a certificate outlives neither its operation nor its Pod.

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use ptah_dataplane::{Operation, OperationId};
use ptah_fingerprint::{Fingerprint, Sha256, canonical_json};
use serde::{Deserialize, Serialize};

/// The URI SAN's fixed beginning.
pub const URI_PREFIX: &str = "ptah-result://operator.ptah.run/v1/";

/// The longest URI SAN a receiver reads.
pub const MAX_URI_BYTES: usize = 4096;

/// The longest text field of a binding (a Kubernetes name is at most 253 bytes).
pub const MAX_FIELD_BYTES: usize = 253;

/// The kind of resource whose operation it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ResourceKind {
    /// A `PtahSchema`.
    PtahSchema,
    /// A `PtahMigration`.
    PtahMigration,
}

/// The resource an operation belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceRef {
    /// Its namespace.
    pub namespace: String,
    /// Its kind.
    pub kind: ResourceKind,
    /// Its name.
    pub name: String,
    /// Its UID.
    pub uid: String,
    /// The `metadata.generation` the claim was made for.
    pub generation: i64,
}

/// The claim an operation runs under: what the resource's `status.activeOperation` fixes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimRef {
    /// The claim's execution binding.
    pub execution_binding_id: String,
    /// The fingerprint of the operation's inputs.
    pub input_fingerprint: Fingerprint,
    /// The operation.
    pub operation: Operation,
    /// The claim's operation id.
    pub operation_id: OperationId,
}

/// A Job or a Pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObjectRef {
    /// Its name.
    pub name: String,
    /// Its UID.
    pub uid: String,
}

/// One operation of one resource, run by one Job in one Pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResultBinding {
    /// The resource.
    pub resource: ResourceRef,
    /// The claim.
    pub claim: ClaimRef,
    /// The claim's Job.
    pub job: ObjectRef,
    /// The Job's Pod that enrolled.
    pub pod: ObjectRef,
}

/// Why a binding or its URI was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindingError {
    /// A field is empty, too long or holds a control character.
    #[error("binding field {field} is {why}")]
    Field {
        /// The field's JSON name.
        field: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The generation is not positive.
    #[error("binding generation {0} is not positive")]
    Generation(i64),
    /// The URI is not `ptah-result://operator.ptah.run/v1/<base64url>`.
    #[error("the URI SAN is not a ptah result binding ({0})")]
    NotABindingUri(&'static str),
    /// The URI's payload is not a binding (the JSON error's category and position only).
    #[error("the URI SAN holds no binding: {0}")]
    Malformed(String),
    /// The binding decodes, but not from its canonical JSON.
    #[error("the URI SAN's binding is not in canonical JSON")]
    NotCanonical,
}

impl ResultBinding {
    /// Checks every field's bounds.
    pub fn validate(&self) -> Result<(), BindingError> {
        let fields: [(&'static str, &str); 9] = [
            ("resource.namespace", &self.resource.namespace),
            ("resource.name", &self.resource.name),
            ("resource.uid", &self.resource.uid),
            ("claim.executionBindingId", &self.claim.execution_binding_id),
            ("job.name", &self.job.name),
            ("job.uid", &self.job.uid),
            ("pod.name", &self.pod.name),
            ("pod.uid", &self.pod.uid),
            ("claim.operationId", self.claim.operation_id.as_str()),
        ];
        for (field, value) in fields {
            let why = if value.is_empty() {
                "empty"
            } else if value.len() > MAX_FIELD_BYTES && field != "claim.operationId" {
                "longer than 253 bytes"
            } else if value.chars().any(char::is_control) {
                "holding a control character"
            } else {
                continue;
            };
            return Err(BindingError::Field { field, why });
        }
        if self.resource.generation < 1 {
            return Err(BindingError::Generation(self.resource.generation));
        }
        Ok(())
    }

    /// The certificate's URI SAN.
    pub fn to_uri(&self) -> Result<String, BindingError> {
        self.validate()?;
        let json = canonical(self)?;
        Ok(format!("{URI_PREFIX}{}", URL_SAFE_NO_PAD.encode(json)))
    }

    /// Reads a URI SAN back; refuses anything [`ResultBinding::to_uri`] would not have written.
    pub fn from_uri(uri: &str) -> Result<Self, BindingError> {
        if uri.len() > MAX_URI_BYTES {
            return Err(BindingError::NotABindingUri("too long"));
        }
        let encoded = uri
            .strip_prefix(URI_PREFIX)
            .ok_or(BindingError::NotABindingUri("wrong scheme, host or version"))?;
        let json = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| BindingError::NotABindingUri("not unpadded base64url"))?;
        let binding: ResultBinding = serde_json::from_slice(&json)
            .map_err(|e| BindingError::Malformed(format!("{:?} at column {}", e.classify(), e.column())))?;
        binding.validate()?;
        if canonical(&binding)? != json {
            return Err(BindingError::NotCanonical);
        }
        Ok(binding)
    }

    /// The common beginning of the names of this operation's records ([`stem`]).
    pub fn record_stem(&self) -> String {
        stem(
            &self.resource.namespace,
            &self.resource.uid,
            self.claim.operation_id.as_str(),
            &self.job.name,
        )
    }
}

/// The common beginning of the names of an operation's records,
/// `ptah-result-<sha256 of [namespace, uid, operationId, job name]>`: one per operation and Job,
/// whichever replica writes them, and known to the manager from its claim alone.
pub fn stem(namespace: &str, resource_uid: &str, operation_id: &str, job_name: &str) -> String {
    let key = [namespace, resource_uid, operation_id, job_name];
    // An array of strings always has a canonical form.
    let bytes = canonical_json(&key).unwrap_or_default();
    format!("ptah-result-{}", Sha256::of(&bytes).hex())
}

fn canonical(binding: &ResultBinding) -> Result<Vec<u8>, BindingError> {
    // Strings, an integer, identities and unit enums: serialization cannot fail.
    canonical_json(binding).map_err(|e| BindingError::Malformed(e.to_string()))
}
