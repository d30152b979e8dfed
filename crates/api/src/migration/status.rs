//! What the manager records about a PtahMigration.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::shared::{
    Approver, ArtifactSourceStatus, Epoch, ExecutionBindingStatus, ImmutableObjectReference,
    OperationRefusal, OperationSource, OperationTarget, PendingLockRelease, PodAdmissionSnapshot,
    Sha256Digest,
};

/// The lifecycle phase of a PtahMigration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MigrationPhase {
    /// Nothing has run yet.
    Pending,
    /// Resolving the reference to a digest.
    Resolving,
    /// Evaluating the verification policy.
    Verifying,
    /// Reading the revision table.
    Reading,
    /// Publishing a plan.
    Planning,
    /// The plan waits for an approval.
    AwaitingApproval,
    /// Nothing changes until an input (or a person) does.
    Blocked,
    /// An Apply is running.
    Applying,
    /// Reading the history again after an Apply.
    VerifyingHistory,
    /// Nothing is pending.
    InSync,
    /// No new Jobs are created.
    Suspended,
    /// A retryable fault.
    Failed,
}

/// The observed state of a PtahMigration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PtahMigrationStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The lifecycle phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<MigrationPhase>,
    /// Conditions, one per type (at most 16).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// The resolved and verified artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<ArtifactSourceStatus>,
    /// The execution identity results are bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_binding: Option<ExecutionBindingStatus>,
    /// The claim of the operation in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_operation: Option<MigrationOperationStatus>,
    /// The last history reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<MigrationHistoryStatus>,
    /// The current plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<ImmutableObjectReference>,
    /// The last run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<RunStatus>,
    /// A run whose outcome is partial or unknown; blocks until resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved_run: Option<UnresolvedRun>,
    /// How the last unresolved run was resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_run: Option<ResolvedRun>,
    /// A Lease still to release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_lock_release: Option<PendingLockRelease>,
    /// An operation refused before it started, while it may still hold (see its `terminal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<OperationRefusal>,
    /// When the next cycle is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_reconciliation_time: Option<Time>,
}

/// The operations a PtahMigration runs as Jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum MigrationOperationType {
    /// Resolve the reference to a digest.
    Resolve,
    /// Evaluate the verification policy.
    Verify,
    /// Read the revision table (no Lease).
    History,
    /// Apply the approved sequence (holds the realm Lease).
    Apply,
}

/// The claim: the one migration operation in flight.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MigrationOperationStatus {
    /// The operation.
    #[serde(rename = "type")]
    pub operation_type: MigrationOperationType,
    /// The operation ID.
    pub id: Sha256Digest,
    /// Fingerprint of the operation's inputs.
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
    /// The execution-binding epoch of the claim.
    #[serde(rename = "executionBindingID")]
    pub execution_binding_id: Epoch,
    /// The pinned source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<OperationSource>,
    /// The target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<OperationTarget>,
    /// The realm identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordination_digest: Option<Sha256Digest>,
    /// Apply: the approved plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_ref: Option<ImmutableObjectReference>,
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
    /// The admission envelope the Job was built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_snapshot: Option<PodAdmissionSnapshot>,
    /// Apply: Lease duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 5, max = 86460))]
    pub lease_duration_seconds: Option<i64>,
    /// Apply: Lease epoch persisted before dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_epoch: Option<Epoch>,
    /// Apply: the realm Lease changed hands while the Job ran; its result is never believed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_continuity_lost: Option<bool>,
    /// The database identity the operation is bound to, once a History reading learned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_identity_digest: Option<Sha256Digest>,
    /// Apply: the approval this dispatch spends (consumed before `dispatchStarted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_ref: Option<ImmutableObjectReference>,
}

/// A reading of the database's revision table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MigrationHistoryStatus {
    /// When it was read.
    pub observed_at: Time,
    /// Ptah's status contract version.
    #[schemars(range(min = 1))]
    pub contract_version: i32,
    /// The highest applied version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub current_version: Option<i64>,
    /// The checkpoint the history starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub checkpoint_version: Option<i64>,
    /// Applied migrations.
    #[schemars(range(min = 0))]
    pub applied_count: i32,
    /// Pending migrations (Ptah's own selection).
    #[schemars(range(min = 0))]
    pub pending_count: i32,
    /// Fingerprint of the reading.
    pub fingerprint: Sha256Digest,
    /// The database the reading came from.
    pub target_identity_digest: Sha256Digest,
    /// The table holds a dirty row.
    #[serde(default)]
    pub dirty: bool,
    /// Applied versions whose checksum changed (at most 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub modified_versions: Vec<i64>,
    /// Pending versions that sort before applied ones (at most 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub out_of_order_versions: Vec<i64>,
}

/// How a migration run ended, read from the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum RunOutcome {
    /// Nothing was pending.
    UpToDate,
    /// Every planned migration was applied.
    Applied,
    /// The run failed before changing anything.
    Failed,
    /// Some migrations were applied, then the run failed.
    Partial,
    /// Whether anything was applied is unknown.
    Unknown,
}

/// The last migration run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunStatus {
    /// How it ended.
    pub outcome: RunOutcome,
    /// Its Job.
    #[schemars(length(min = 1, max = 63))]
    pub job_name: String,
    /// Its Job's UID.
    #[serde(default, rename = "jobUID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub job_uid: Option<String>,
    /// When it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
    /// Versions applied (at most 256).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 256))]
    pub applied_versions: Vec<i64>,
    /// A short, credential-free message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub message: Option<String>,
}

/// The outcome of a run that stays unresolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum UnresolvedRunOutcome {
    /// Some migrations were applied, then the run failed.
    Partial,
    /// Whether anything was applied is unknown.
    Unknown,
}

/// A run never retried automatically: cleared by a matching history reading or an acknowledgment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnresolvedRun {
    /// How it ended.
    pub outcome: UnresolvedRunOutcome,
    /// Its operation ID (what an acknowledgment names).
    #[serde(rename = "operationID")]
    pub operation_id: Sha256Digest,
    /// Its Job.
    #[schemars(length(min = 1, max = 63))]
    pub job_name: String,
    /// Its Job's UID.
    #[serde(default, rename = "jobUID", skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 128))]
    pub job_uid: Option<String>,
    /// The plan it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_ref: Option<ImmutableObjectReference>,
    /// The database it ran against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_identity_digest: Option<Sha256Digest>,
    /// When it was recorded.
    pub recorded_at: Time,
}

/// How an unresolved run was resolved, and by whom.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedRun {
    /// The resolved run's operation ID.
    #[serde(rename = "operationID")]
    pub operation_id: Sha256Digest,
    /// The acknowledgment that resolved it, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledgment_ref: Option<ImmutableObjectReference>,
    /// Who acknowledged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged_by: Option<Approver>,
    /// When it was resolved.
    pub resolved_at: Time,
}
