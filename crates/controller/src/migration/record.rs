//! Small status edits shared by the migration decision steps.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    PtahMigrationStatus,
    conditions::{ConditionType, Reason},
    migration::{MigrationOperationStatus, MigrationPhase},
};

use super::{
    action::{Action, Event},
    observed::Observed,
};
use crate::{
    conditions::{self, Posture, Status},
    operation::time::after,
};

/// A copy of the status to edit.
pub fn edit(o: &Observed<'_>) -> PtahMigrationStatus {
    o.status.clone()
}

/// Sets a condition at this pass's clock and generation.
pub fn cond(
    o: &Observed<'_>,
    s: &mut PtahMigrationStatus,
    t: ConditionType,
    st: Status,
    r: Reason,
    m: impl Into<String>,
) {
    conditions::set(&mut s.conditions, t, st, r, m, Some(o.meta.generation), o.now);
}

/// The phase an operation in progress shows: `Blocked` stays while a run is unresolved, since
/// only a person can unblock it and a re-reading of the history must not hide that.
pub fn busy_phase(o: &Observed<'_>, busy: MigrationPhase) -> MigrationPhase {
    if o.status.unresolved_run.is_some() && busy != MigrationPhase::Applying {
        MigrationPhase::Blocked
    } else {
        busy
    }
}

/// Sets the phase together with `Ready`.
pub fn phase(
    o: &Observed<'_>,
    s: &mut PtahMigrationStatus,
    p: MigrationPhase,
    ready: bool,
    r: Reason,
    m: impl Into<String>,
) {
    s.phase = Some(p);
    cond(o, s, ConditionType::Ready, Status::from_bool(ready), r, m);
}

/// How kstatus should read a phase: every phase is named, so a new one must be placed here.
pub fn posture(phase: Option<MigrationPhase>) -> Posture {
    use MigrationPhase as P;
    match phase {
        Some(P::InSync | P::Suspended) => Posture::Settled,
        Some(P::Blocked | P::Failed) => Posture::Stuck,
        Some(
            P::Pending
            | P::Resolving
            | P::Verifying
            | P::Reading
            | P::Planning
            | P::AwaitingApproval
            | P::Applying
            | P::VerifyingHistory,
        )
        | None => Posture::Working,
    }
}

/// Sets `Reconciling` and `Stalled` on `s` from its phase (see [`conditions::set_kstatus`]).
pub fn kstatus(o: &Observed<'_>, s: &mut PtahMigrationStatus) {
    conditions::set_kstatus(&mut s.conditions, posture(s.phase), o.meta.generation, o.now);
}

/// Writes `s` (with an optional Event and its kstatus conditions) unless it equals the recorded
/// status; then waits `idle`.
pub fn write_or_wait(
    o: &Observed<'_>,
    mut s: PtahMigrationStatus,
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

/// Moves the claim out and stages its Lease release (when it holds one) in the same write.
pub fn clear_claim(s: &mut PtahMigrationStatus, claim: &MigrationOperationStatus) {
    s.active_operation = None;
    if let Some(release) = crate::operation::claim::staged_release(claim, &claim.id) {
        s.pending_lock_release = Some(release);
    }
}

/// A `Time` of this pass.
pub fn now(o: &Observed<'_>) -> Time {
    Time(o.now)
}

/// A read-only operation (or an Apply refused before any SQL) failed: retried after
/// `failureRetryInterval`.
pub fn failed(o: &Observed<'_>, c: &MigrationOperationStatus, reason: Reason, why: &str) -> Action {
    let mut s = edit(o);
    clear_claim(&mut s, c);
    s.next_reconciliation_time = Some(Time(after(
        o.now,
        o.spec.execution.failure_retry_interval.as_duration(),
    )));
    phase(o, &mut s, MigrationPhase::Failed, false, reason, why);
    cond(
        o,
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::True,
        reason,
        why,
    );
    cond(o, &mut s, ConditionType::Progressing, Status::False, reason, why);
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(Event::warning(
            "OperationFailed",
            format!("{:?}: {why}", c.operation_type),
        )),
    }
}
