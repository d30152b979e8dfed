//! Status blocks recorded by both resource families.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ConfigMapKeySelector, DatabaseEngine, Epoch, PinnedImage, SecretKeySelector, Sha256Digest};

/// The execution identity every result is bound to; a change retires plans and approvals.
///
/// The manager image and revision and the runner image are deliberately not part of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionBindingStatus {
    /// Random per transition; rotates whenever any other field changes (even back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<Epoch>,
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
    /// The runner result-frame protocol version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub runner_protocol_version: Option<i64>,
}

/// What an artifact reference resolved to and whether it passed verification.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSourceStatus {
    /// The reference as written in the spec when it was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub requested_reference: Option<String>,
    /// The digest-pinned reference every later operation uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub resolved_reference: Option<String>,
    /// The manifest digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<Sha256Digest>,
    /// The manifest media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub media_type: Option<String>,
    /// The artifact type the pinned manifest declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 255))]
    pub artifact_type: Option<String>,
    /// The manifest size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub size: Option<i64>,
    /// Whether the verification policy accepted this digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<bool>,
    /// UID of the verification-policy ConfigMap that was evaluated.
    #[serde(
        default,
        rename = "verificationPolicyUID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 128))]
    pub verification_policy_uid: Option<String>,
    /// Digest of the verification-policy bytes that were evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_policy_digest: Option<Sha256Digest>,
    /// When the reference was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<Time>,
    /// When the digest was verified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_at: Option<Time>,
}

/// The target an operation was dispatched against (engine and Secret key, never the URL).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationTarget {
    /// The engine as written when the operation was claimed.
    pub engine: DatabaseEngine,
    /// The Secret key with the connection URL.
    pub url_from: SecretKeySelector,
    /// The ConfigMap key with the database CA bundle, when the target names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_from: Option<ConfigMapKeySelector>,
}

/// A realm Lease still to be released once the durable write that needed it has landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingLockRelease {
    /// The realm identity whose Lease is held.
    pub coordination_digest: Sha256Digest,
    /// The operation that holds it.
    #[serde(rename = "operationID")]
    pub operation_id: Sha256Digest,
    /// The Lease duration the holder renews with (5s–24h1m).
    #[schemars(range(min = 5, max = 86460))]
    pub lease_duration_seconds: i64,
    /// The epoch of the Lease acquisition.
    pub lease_epoch: Epoch,
}

/// An operation refused before its main container started: by its fetch init container (the
/// artifact, or the registry Secret's grant) or for a Secret its Pod names that does not exist.
/// Until an input changes it keeps the operations that would be refused the same way from running
/// again (see `terminal`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationRefusal {
    /// The condition reason it was recorded with (`ArtifactRefused`, `SecretNotFound`, …).
    #[schemars(length(min = 1, max = 64))]
    pub reason: String,
    /// The code `ptah` reported (`size_mismatch`, `unsafe_path`, …), when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub code: Option<String>,
    /// What was refused, for a person: bounded, never a credential.
    #[schemars(length(max = 1024))]
    pub message: String,
    /// The artifact digest the refused operation was to fetch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<Sha256Digest>,
    /// The artifact itself was refused: nothing fetches this digest again until the resolved
    /// digest, the spec or the execution binding changes. Otherwise the next cycle retries, after
    /// its Resolve (a Secret may be created or fixed; the manager cannot watch Secrets).
    pub terminal: bool,
    /// The spec generation it was refused under.
    pub observed_generation: i64,
    /// The execution-binding epoch it was refused under.
    #[serde(rename = "executionBindingID")]
    pub execution_binding_id: Epoch,
    /// When it was refused.
    pub refused_at: Time,
}

/// The pinned source an operation was dispatched with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperationSource {
    /// The digest-pinned reference.
    #[schemars(length(min = 7, max = 1024))]
    pub resolved_reference: String,
    /// The manifest digest.
    pub digest: Sha256Digest,
    /// Registry credentials the fetch used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_auth_from: Option<super::RegistryAuthSpec>,
    /// Registry transport the fetch used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<super::TransportSpec>,
}

/// Status of an approval or acknowledgment: `Accepted`, `Consumed` and `Stale` conditions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, kube::KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DecisionStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Conditions, one per type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
}
