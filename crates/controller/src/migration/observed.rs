//! Everything one PtahMigration decision looks at, gathered by the shell before it decides.

use jiff::Timestamp;
use ptah_api::{
    PtahMigrationPlanSpec, PtahMigrationSpec, PtahMigrationStatus,
    shared::{Approver, ImmutableObjectReference, Sha256Digest},
};

pub use crate::operation::observed::{Binding, Finished, JobState, Meta, PolicyRead, Realm, ResultRead};

/// The plan `status.plan` names, read uncached.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanState {
    /// No current plan.
    None,
    /// The plan object under the recorded name and UID.
    Present(Box<PtahMigrationPlanSpec>),
    /// Missing or replaced: it can authorize nothing.
    Broken(String),
}

/// One PtahMigrationApproval naming this migration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalView {
    /// The approval object.
    pub object: ImmutableObjectReference,
    /// The migration it names.
    pub migration_uid: String,
    /// The plan it names.
    pub plan: ImmutableObjectReference,
    /// The fingerprint it names.
    pub plan_fingerprint: Sha256Digest,
    /// The history fingerprint it names (stamped by admission when the approver left it out).
    pub history_fingerprint: Option<Sha256Digest>,
    /// Stamped approver.
    pub approver: Option<Approver>,
    /// Already spent on a dispatch.
    pub consumed: bool,
    /// Marked stale.
    pub stale: bool,
    /// Creation time, to pick the earliest of duplicates.
    pub created: Option<Timestamp>,
}

/// One PtahMigrationRunAcknowledgment naming this migration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcknowledgmentView {
    /// The acknowledgment object.
    pub object: ImmutableObjectReference,
    /// The migration it names.
    pub migration_uid: String,
    /// The unresolved run it acknowledges.
    pub operation_id: Sha256Digest,
    /// Stamped identity of the person who acknowledged.
    pub acknowledged_by: Option<Approver>,
    /// Already consumed.
    pub consumed: bool,
    /// Marked stale.
    pub stale: bool,
    /// Creation time.
    pub created: Option<Timestamp>,
}

/// The whole input of one decision.
#[derive(Clone, Debug)]
pub struct Observed<'a> {
    /// The clock of this pass.
    pub now: Timestamp,
    /// Identity and lifecycle metadata.
    pub meta: &'a Meta,
    /// The desired state.
    pub spec: &'a PtahMigrationSpec,
    /// The recorded state.
    pub status: &'a PtahMigrationStatus,
    /// The manager's execution binding.
    pub binding: &'a Binding,
    /// The realm and its census.
    pub realm: &'a Realm,
    /// The verification policy.
    pub policy: &'a PolicyRead,
    /// The active claim's Job.
    pub job: &'a JobState,
    /// The active claim's result.
    pub result: &'a ResultRead,
    /// The current plan.
    pub plan: &'a PlanState,
    /// Approvals naming this migration.
    pub approvals: &'a [ApprovalView],
    /// Run acknowledgments naming this migration.
    pub acknowledgments: &'a [AcknowledgmentView],
}

impl Observed<'_> {
    /// The current plan's spec, when it is present.
    pub fn plan_spec(&self) -> Option<&PtahMigrationPlanSpec> {
        match self.plan {
            PlanState::Present(p) => Some(p),
            _ => None,
        }
    }
}
