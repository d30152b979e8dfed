//! The evidence a plan is bound to, shared by schema and migration plans and their approvals.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Epoch, PinnedImage, Sha256Digest};

/// Pattern of a free-text identifier: no control characters, no leading or trailing whitespace.
/// Written with escapes that Go's RE2, ECMA-262 and Rust's `regex` read alike.
pub const PRINTABLE_TRIMMED_PATTERN: &str = r"^[^\x00-\x20\x7f](?:[^\x00-\x1f\x7f]*[^\x00-\x20\x7f])?$";

/// The execution and target identity a published plan was computed under.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanExecutionBinding {
    /// The verified artifact digest.
    pub artifact_digest: Sha256Digest,
    /// The realm identity.
    pub coordination_digest: Sha256Digest,
    /// The identity of the database the plan was read from.
    pub target_identity_digest: Sha256Digest,
    /// Fingerprint of `spec.policy`.
    pub policy_fingerprint: Sha256Digest,
    /// UID of the verification-policy ConfigMap.
    #[serde(rename = "verificationPolicyUID")]
    #[schemars(length(min = 1, max = 128))]
    pub verification_policy_uid: String,
    /// Digest of the verification-policy bytes.
    pub verification_policy_digest: Sha256Digest,
    /// The execution-binding epoch.
    #[serde(rename = "executionBindingID")]
    pub execution_binding_id: Epoch,
    /// The manager image that published the plan (recorded, not bound).
    #[schemars(length(min = 1, max = 512))]
    pub controller_image: String,
    /// The manager revision that published the plan (recorded, not bound).
    #[schemars(length(min = 1, max = 128), regex(pattern = PRINTABLE_TRIMMED_PATTERN))]
    pub controller_revision: String,
    /// The durable manager-state contract version.
    #[schemars(range(min = 1))]
    pub controller_state_version: i64,
    /// The Ptah executor version.
    #[schemars(length(min = 1, max = 128))]
    pub ptah_version: String,
    /// The digest-pinned executor image.
    pub executor_image: PinnedImage,
    /// The digest-pinned runner image (recorded, not bound).
    pub runner_image: PinnedImage,
    /// The runner protocol version.
    #[schemars(range(min = 1))]
    pub runner_protocol_version: i64,
}

/// Copies of a plan's bindings on an approval; the webhook fills omitted ones from the plan and
/// refuses conflicting ones.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalBindingCopies {
    /// The verified artifact digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_digest: Option<Sha256Digest>,
    /// The realm identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_digest: Option<Sha256Digest>,
    /// The identity of the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_identity_digest: Option<Sha256Digest>,
    /// Fingerprint of `spec.policy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_fingerprint: Option<Sha256Digest>,
    /// UID of the verification-policy ConfigMap.
    #[serde(
        default,
        rename = "verificationPolicyUID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 1, max = 128))]
    pub verification_policy_uid: Option<String>,
    /// Digest of the verification-policy bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_policy_digest: Option<Sha256Digest>,
    /// The execution-binding epoch.
    #[serde(
        default,
        rename = "executionBindingID",
        skip_serializing_if = "Option::is_none"
    )]
    pub execution_binding_id: Option<Epoch>,
    /// The manager image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 512))]
    pub controller_image: Option<String>,
    /// The manager revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), regex(pattern = PRINTABLE_TRIMMED_PATTERN))]
    pub controller_revision: Option<String>,
    /// The durable manager-state contract version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub controller_state_version: Option<i64>,
    /// The Ptah executor version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub ptah_version: Option<String>,
    /// The digest-pinned executor image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_image: Option<PinnedImage>,
    /// The digest-pinned runner image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_image: Option<PinnedImage>,
    /// The runner protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub runner_protocol_version: Option<i64>,
}
