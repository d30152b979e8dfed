//! Small status edits shared by the decision steps: phases, conditions, staged releases.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    PtahSchemaStatus,
    conditions::{ConditionType, Reason},
    schema::{SchemaOperationStatus, SchemaPhase},
};

use super::{
    action::{Action, Event},
    observed::Observed,
};
use crate::conditions::{self, Posture, Status};

pub use crate::operation::time::{POLL, after, until};

/// A copy of the status to edit, with `observedGeneration` untouched.
pub fn edit(o: &Observed<'_>) -> PtahSchemaStatus {
    o.status.clone()
}

/// Sets a condition on `s` at this pass's clock and generation.
pub fn cond(
    o: &Observed<'_>,
    s: &mut PtahSchemaStatus,
    t: ConditionType,
    st: Status,
    r: Reason,
    m: impl Into<String>,
) {
    conditions::set(&mut s.conditions, t, st, r, m, Some(o.meta.generation), o.now);
}

/// How kstatus should read a phase: every phase is named, so a new one must be placed here.
pub fn posture(phase: Option<SchemaPhase>) -> Posture {
    use SchemaPhase as P;
    match phase {
        Some(P::InSync | P::Suspended) => Posture::Settled,
        Some(P::Blocked | P::Failed) => Posture::Stuck,
        Some(
            P::Pending
            | P::Resolving
            | P::Verifying
            | P::Observing
            | P::Planning
            | P::ReadyToApply
            | P::AwaitingApproval
            | P::Applying
            | P::VerifyingConvergence,
        )
        | None => Posture::Working,
    }
}

/// Sets `Reconciling` and `Stalled` on `s` from its phase (see [`conditions::set_kstatus`]).
pub fn kstatus(o: &Observed<'_>, s: &mut PtahSchemaStatus) {
    conditions::set_kstatus(&mut s.conditions, posture(s.phase), o.meta.generation, o.now);
}

/// Writes `s` (with an optional Event and its kstatus conditions) unless it equals the recorded
/// status; then waits `idle`.
pub fn write_or_wait(
    o: &Observed<'_>,
    mut s: PtahSchemaStatus,
    event: Option<Event>,
    idle: Duration,
) -> Action {
    kstatus(o, &mut s);
    if &s == o.status {
        Action::Wait {
            after: idle,
            renew: None,
        }
    } else {
        Action::WriteStatus {
            status: Box::new(s),
            event,
        }
    }
}

/// Sets the phase together with `Ready` (and `Reconciling`-style detail in the reason).
pub fn phase(
    o: &Observed<'_>,
    s: &mut PtahSchemaStatus,
    p: SchemaPhase,
    ready: bool,
    r: Reason,
    m: impl Into<String>,
) {
    s.phase = Some(p);
    cond(o, s, ConditionType::Ready, Status::from_bool(ready), r, m);
}

/// Moves the claim out and stages its Lease release (when it holds one) in the same write.
pub fn clear_claim(
    s: &mut PtahSchemaStatus,
    claim: &SchemaOperationStatus,
    holder_op: Option<&ptah_api::shared::Sha256Digest>,
) {
    s.active_operation = None;
    stage_release(s, claim, holder_op);
}

/// Stages the release of the claim's Lease: performed only after this status is durable.
pub fn stage_release(
    s: &mut PtahSchemaStatus,
    claim: &SchemaOperationStatus,
    holder_op: Option<&ptah_api::shared::Sha256Digest>,
) {
    if let Some(release) = crate::operation::claim::staged_release(claim, holder_op.unwrap_or(&claim.id)) {
        s.pending_lock_release = Some(release);
    }
}

/// A `Time` of this pass.
pub fn now(o: &Observed<'_>) -> Time {
    Time(o.now)
}
