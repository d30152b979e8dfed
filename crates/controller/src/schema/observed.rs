//! Everything one decision looks at, gathered by the shell before it decides.
//!
//! These are plain values: the decision function never calls the API server, so every guarantee
//! can be tested by building an [`Observed`] by hand.

use jiff::Timestamp;
use ptah_api::{
    PtahSchemaSpec, PtahSchemaStatus,
    shared::{Epoch, ImmutableObjectReference, Sha256Digest},
};

pub use crate::operation::observed::{Binding, Finished, JobState, Meta, PolicyRead, Realm, ResultRead};

/// The plan `status.plan` names, as loaded and checked by the plan store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanState {
    /// No current plan.
    None,
    /// Loaded, Ready, every digest checked.
    Intact,
    /// Missing, replaced or failing a check: it can authorize nothing.
    Broken(String),
}

/// One PtahSchemaApproval naming this schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalView {
    /// The approval object.
    pub object: ImmutableObjectReference,
    /// The schema it names.
    pub schema_uid: String,
    /// The plan it names.
    pub plan: ImmutableObjectReference,
    /// The fingerprint it names.
    pub plan_fingerprint: Sha256Digest,
    /// The execution-binding epoch it copied, if any.
    pub execution_binding_id: Option<Epoch>,
    /// Stamped approver (by the admission webhook, or absent).
    pub approver: Option<ptah_api::shared::Approver>,
    /// When stamped.
    pub approved_at: Option<Timestamp>,
    /// Already spent on a dispatch.
    pub consumed: bool,
    /// Marked stale.
    pub stale: bool,
    /// Creation time, to pick the earliest of duplicates.
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
    pub spec: &'a PtahSchemaSpec,
    /// The recorded state.
    pub status: &'a PtahSchemaStatus,
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
    /// Approvals naming this schema.
    pub approvals: &'a [ApprovalView],
}
