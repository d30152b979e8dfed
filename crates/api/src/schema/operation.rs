//! The durable records of a PtahSchema's operations: the claim, the owed proof, the retirement.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{DevDatabaseSpec, DispatchedBy, DriftSeverityPolicy};
use crate::shared::{
    Epoch, GoDuration, ImmutableObjectReference, OperationSource, OperationTarget, PodAdmissionSnapshot,
    Sha256Digest,
};

/// The operations a PtahSchema runs as Jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum SchemaOperationType {
    /// Resolve the reference to a digest (registry credentials only).
    Resolve,
    /// Evaluate the verification policy.
    Verify,
    /// Read drift from the database.
    Observe,
    /// Compute a plan (holds the realm Lease).
    Plan,
    /// Apply an approved plan (holds the realm Lease).
    Apply,
}

/// The claim: the one operation in flight, persisted before its Job exists.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaOperationStatus {
    /// The operation.
    #[serde(rename = "type")]
    pub operation_type: SchemaOperationType,
    /// The operation ID.
    pub id: Sha256Digest,
    /// Fingerprint of the operation's inputs, re-derived every pass.
    pub input_fingerprint: Sha256Digest,
    /// The deterministic Job name.
    #[schemars(length(min = 1, max = 63))]
    pub job_name: String,
    /// The Job's UID once read back.
    #[serde(default, rename = "jobUID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub job_uid: Option<String>,
    /// When the claim was made.
    pub started_at: Time,
    /// Attempt number (from 1).
    #[schemars(range(min = 1))]
    pub attempt: i32,
    /// The execution-binding epoch the claim was made under.
    #[serde(rename = "executionBindingID")]
    pub execution_binding_id: Epoch,
    /// The admission envelope the Job was built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_snapshot: Option<PodAdmissionSnapshot>,
    /// The snapshot was refreshed once before dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_snapshot_refreshed: Option<bool>,
    /// The `metadata.generation` the claim was made for: a durable result is bound to it, so a
    /// spec edit during the operation does not make its result undeliverable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub generation: Option<i64>,
    /// The sha256 of the enrolment token the claim's Job delivers its result with; absent when
    /// its result travels through the Pod log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_enrolment_digest: Option<Sha256Digest>,
    /// The single permitted Job create was committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_started: Option<bool>,
    /// The Job may not start its child after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_not_after: Option<Time>,
    /// The child must have finished by this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_not_after: Option<Time>,
    /// The Pod's termination grace period (1–300 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 300))]
    pub termination_grace_period_seconds: Option<i64>,
    /// The realm identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_digest: Option<Sha256Digest>,
    /// The database identity expected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_identity_digest: Option<Sha256Digest>,
    /// The target the Job was built against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<OperationTarget>,
    /// Observe/Plan: the exclusions used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub observation_exclude: Vec<String>,
    /// Observe/Plan: the protected tables used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub observation_protected_tables: Vec<String>,
    /// Observe/Plan: the drift severity used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_severity: Option<DriftSeverityPolicy>,
    /// Plan: the scratch database used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_dev: Option<DevDatabaseSpec>,
    /// Observe/Plan: the connect timeout used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_connect_timeout: Option<GoDuration>,
    /// Observe/Plan: the lock timeout used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_lock_timeout: Option<GoDuration>,
    /// Verify: the policy ConfigMap UID.
    #[serde(
        default,
        rename = "verificationPolicyUID",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(max = 128))]
    pub verification_policy_uid: Option<String>,
    /// Verify: the policy bytes digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification_policy_digest: Option<Sha256Digest>,
    /// The pinned source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<OperationSource>,
    /// Lease duration the holder renews with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 5, max = 86460))]
    pub lease_duration_seconds: Option<i64>,
    /// The Lease epoch persisted before dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_epoch: Option<Epoch>,
    /// The Lease changed hands after dispatch; the result is discarded unread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_continuity_lost: Option<bool>,
}

/// How the Apply that owes a proof ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PendingObservationOutcome {
    /// The report named the approved plan as applied.
    ApplySucceeded,
    /// The Apply may or may not have changed the database.
    OutcomeUnknown,
}

/// The source the proof must re-read.
pub type PendingObservationSource = OperationSource;

/// The durable post-Apply proof: an Observe+Plan under the Apply's Lease must report no changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingObservation {
    /// How the Apply ended.
    pub outcome: PendingObservationOutcome,
    /// The Apply's operation ID.
    #[serde(rename = "applyOperationID")]
    pub apply_operation_id: Sha256Digest,
    /// The Apply Job's name.
    #[schemars(length(min = 1, max = 63))]
    pub apply_job_name: String,
    /// The Apply Job's UID.
    #[serde(default, rename = "applyJobUID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub apply_job_uid: Option<String>,
    /// The admission envelope of the Apply Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_snapshot: Option<PodAdmissionSnapshot>,
    /// UIDs of the Apply Job's Pods (at most 8).
    #[serde(default, rename = "applyPodUIDs", skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub apply_pod_uids: Vec<String>,
    /// How many Pods the Apply Job ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub apply_pod_count: Option<i32>,
    /// The generation the Apply ran for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_generation: Option<i64>,
    /// The proof's Observe has completed; its Plan comes next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_completed: Option<bool>,
    /// The proof may not start before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe_after: Option<Time>,
    /// The applied plan.
    pub plan: ImmutableObjectReference,
    /// The applied plan's fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_fingerprint: Option<Sha256Digest>,
    /// Who dispatched the Apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatched_by: Option<DispatchedBy>,
    /// The target.
    pub target: OperationTarget,
    /// The realm identity.
    pub coordination_digest: Sha256Digest,
    /// The source.
    pub source: OperationSource,
    /// The scratch database for the proof's Plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dev: Option<DevDatabaseSpec>,
    /// Whether the proof needs a Plan (not only an Observe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_required: Option<bool>,
    /// Exclusions of the proof.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub exclude: Vec<String>,
    /// Protected tables of the proof.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 128))]
    pub protected_tables: Vec<String>,
    /// Drift severity of the proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_severity: Option<DriftSeverityPolicy>,
    /// Connect timeout of the proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<GoDuration>,
    /// Lock timeout of the proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_timeout: Option<GoDuration>,
    /// Lease duration (5–86460 s).
    #[schemars(range(min = 5, max = 86460))]
    pub lease_duration_seconds: i64,
    /// The Apply's Lease epoch, reused by the proof.
    pub lease_epoch: Epoch,
}

/// A retired epoch's leftovers, kept until tidied: its plan and the Job its claim dispatched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingBindingRetirement {
    /// The retired execution-binding epoch.
    #[serde(rename = "executionBindingID")]
    pub execution_binding_id: Epoch,
    /// The plan whose approvals are still to be marked stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<ImmutableObjectReference>,
    /// That plan's fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_fingerprint: Option<Sha256Digest>,
    /// The Job the retired claim dispatched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 63))]
    pub job_name: Option<String>,
    /// That Job's UID.
    #[serde(default, rename = "jobUID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub job_uid: Option<String>,
    /// The retired claim's operation ID.
    #[serde(default, rename = "operationID", skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<Sha256Digest>,
}
