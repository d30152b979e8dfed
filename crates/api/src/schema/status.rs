//! What the manager records about a PtahSchema.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{PendingBindingRetirement, PendingObservation, SchemaOperationStatus, SchemaTargetStatus};
use crate::schemaplan::PrivilegeChangeKind;
use crate::shared::{
    Approver, ArtifactSourceStatus, ExecutionBindingStatus, ImmutableObjectReference, OperationRefusal,
    PendingLockRelease, PinnedImage, PlanExecutionBinding, PlanSeverity, Sha256Digest,
};

/// The lifecycle phase of a PtahSchema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum SchemaPhase {
    /// Nothing has run yet.
    Pending,
    /// Resolving the reference to a digest.
    Resolving,
    /// Evaluating the verification policy.
    Verifying,
    /// Reading drift from the database.
    Observing,
    /// Computing a plan.
    Planning,
    /// A plan may be applied now.
    ReadyToApply,
    /// The plan waits for an approval.
    AwaitingApproval,
    /// Nothing changes until an input does.
    Blocked,
    /// An Apply is running.
    Applying,
    /// Proving the Apply converged with a fresh Observe and Plan.
    VerifyingConvergence,
    /// The database matches the desired state.
    InSync,
    /// No new Jobs are created.
    Suspended,
    /// A retryable fault; retried after failureRetryInterval.
    Failed,
}

/// The observed state of a PtahSchema.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct PtahSchemaStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The lifecycle phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<SchemaPhase>,
    /// The execution identity results are bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_binding: Option<ExecutionBindingStatus>,
    /// The resolved and verified artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ArtifactSourceStatus>,
    /// The observed target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<SchemaTargetStatus>,
    /// The current plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<CurrentPlanStatus>,
    /// The last plan proved applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<AppliedPlanStatus>,
    /// The post-Apply proof still owed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_observation: Option<PendingObservation>,
    /// A Lease still to release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_lock_release: Option<PendingLockRelease>,
    /// A retired epoch still to tidy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_binding_retirement: Option<PendingBindingRetirement>,
    /// The claim of the operation in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_operation: Option<SchemaOperationStatus>,
    /// An operation refused before it started, while it may still hold (see its `terminal`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<OperationRefusal>,
    /// When an operation was last attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempt_time: Option<Time>,
    /// When a reconciliation last succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_successful_reconciliation: Option<Time>,
    /// When the next cycle is due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_reconciliation_time: Option<Time>,
    /// Conditions, one per type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
}

/// The approval accepted for the current plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentPlanApproval {
    /// The approval object's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Its UID.
    #[schemars(length(min = 1, max = 128))]
    pub uid: String,
    /// Who approved.
    pub approver: Approver,
    /// When.
    pub approved_at: Time,
}

/// The current plan and everything it is bound to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentPlanStatus {
    /// The plan object's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Its UID.
    #[schemars(length(min = 1, max = 128))]
    pub uid: String,
    /// The plan fingerprint an approval must name.
    pub fingerprint: Sha256Digest,
    /// Digest of the plan document bytes.
    pub content_digest: Sha256Digest,
    /// Fingerprint of the observed database state.
    pub actual_state_fingerprint: Sha256Digest,
    /// Fingerprint of the desired state.
    pub desired_state_fingerprint: Sha256Digest,
    /// The execution and target bindings.
    #[serde(flatten)]
    pub binding: PlanExecutionBinding,
    /// Whether the plan is destructive.
    pub destructive: bool,
    /// Privilege changes in the plan (at most 16).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(merge_strategy = ListMerge::Set)]
    pub privilege_changes: Vec<PrivilegeChangeKind>,
    /// The plan's highest severity, when the operator read one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<PlanSeverity>,
    /// Number of statements.
    #[schemars(range(min = 0))]
    pub statement_count: i32,
    /// When the plan was published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
    /// The accepted approval, once there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<CurrentPlanApproval>,
    /// The plan's rehearsal on the dev database (`spec.dev`), when one is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rehearsal: Option<PlanRehearsal>,
}

/// How a plan's rehearsal on the dev database ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RehearsalOutcome {
    /// Every statement ran there and a fresh plan was empty.
    Passed,
    /// A statement failed, or the plan ran and did not reach the desired schema.
    Failed,
    /// Nothing was rehearsed: the dev database could not be reached or used.
    Inconclusive,
}

/// A plan's rehearsal on the dev database: the observed schema recreated there, the plan run, a
/// fresh plan required to be empty. Only a passed rehearsal lets the plan be approved or applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlanRehearsal {
    /// How it ended.
    pub outcome: RehearsalOutcome,
    /// The 1-based number of the statement that failed, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub failed_statement: Option<i32>,
    /// Why it failed or could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub message: Option<String>,
    /// Milliseconds each statement that ran took, in plan order (the first 256).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 256))]
    pub statement_millis: Vec<i64>,
    /// Their sum.
    #[schemars(range(min = 0))]
    pub total_millis: i64,
    /// Whether the dev database was put back as it was found.
    pub restored: bool,
}

/// The manager and runner that dispatched an Apply.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DispatchedBy {
    /// The manager image.
    #[schemars(length(min = 1, max = 512))]
    pub controller_image: String,
    /// The manager revision.
    #[schemars(length(min = 1, max = 128))]
    pub controller_revision: String,
    /// The runner image.
    pub runner_image: PinnedImage,
}

/// The last plan proved applied (written only after the post-Apply proof).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedPlanStatus {
    /// The applied plan.
    pub plan_ref: ImmutableObjectReference,
    /// Its fingerprint.
    pub plan_fingerprint: Sha256Digest,
    /// The execution and target bindings it ran under.
    #[serde(flatten)]
    pub binding: PlanExecutionBinding,
    /// Who dispatched it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatched_by: Option<DispatchedBy>,
    /// When the proof completed.
    pub completed_at: Time,
}
