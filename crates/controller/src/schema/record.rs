//! Small status edits shared by the decision steps: phases, conditions, staged releases.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    PtahSchemaStatus,
    conditions::{ConditionType, Reason},
    schema::{SchemaOperationStatus, SchemaPhase},
    shared::PendingLockRelease,
};

use super::{
    action::{Action, Event},
    observed::Observed,
};
use crate::conditions::{self, Status};

/// How long a pass waits when it only watches something progress.
pub const POLL: Duration = Duration::from_secs(5);

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

/// Writes `s` (with an optional Event) unless it equals the recorded status; then waits `idle`.
pub fn write_or_wait(o: &Observed<'_>, s: PtahSchemaStatus, event: Option<Event>, idle: Duration) -> Action {
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
    if let (Some(epoch), Some(digest), Some(duration)) = (
        &claim.lease_epoch,
        &claim.coordination_digest,
        claim.lease_duration_seconds,
    ) {
        s.pending_lock_release = Some(PendingLockRelease {
            coordination_digest: digest.clone(),
            operation_id: holder_op.unwrap_or(&claim.id).clone(),
            lease_duration_seconds: duration,
            lease_epoch: epoch.clone(),
        });
    }
}

/// `t + d`, saturating at `t` on overflow (never in practice: durations are bounded by the CRD).
pub fn after(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| t.checked_add(d).ok())
        .unwrap_or(t)
}

/// How long until `t`, at least one second.
pub fn until(now: Timestamp, t: Timestamp) -> Duration {
    Duration::try_from(now.duration_until(t))
        .unwrap_or(Duration::ZERO)
        .max(Duration::from_secs(1))
}

/// A `Time` of this pass.
pub fn now(o: &Observed<'_>) -> Time {
    Time(o.now)
}
