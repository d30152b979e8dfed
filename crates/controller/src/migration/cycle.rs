//! With nothing in flight: which operation comes next, or which state to record.
//!
//! A cycle is Resolve → Verify → History, ordered by the times recorded in status; then the
//! approval gate. After an Apply a second History reading settles the resource.

use std::time::Duration;

use jiff::Timestamp;
use ptah_api::{
    conditions::{ConditionType, Reason},
    migration::{MigrationOperationType as Op, MigrationPhase},
};

use super::{
    action::{Action, Event},
    gate,
    observed::{Observed, PolicyRead},
    record::{cond, edit, phase, write_or_wait},
    start,
};
use crate::{
    conditions::Status,
    operation::time::{after, until},
};

/// The next step of an idle migration.
pub fn next(o: &Observed<'_>) -> Action {
    let idle = until(o.now, due_at(o));
    if o.spec.suspend {
        let mut s = edit(o);
        // Suspending is itself a spec change: kstatus reads the suspension as current only once
        // the status names this generation. Resuming changes the spec again, so the next cycle
        // still starts with a Resolve.
        s.observed_generation = Some(o.meta.generation);
        phase(
            o,
            &mut s,
            MigrationPhase::Suspended,
            false,
            Reason::Suspended,
            "suspended: no new Jobs are created",
        );
        cond(
            o,
            &mut s,
            ConditionType::Suspended,
            Status::True,
            Reason::Suspended,
            "spec.suspend is true",
        );
        return write_or_wait(
            o,
            s,
            Some(Event::normal(
                "Suspended",
                "no new Jobs until spec.suspend is false",
            )),
            idle,
        );
    }
    if let Some(a) = refusal(o, idle) {
        return a;
    }
    if let Some(a) = retire_binding(o) {
        return a;
    }
    if let Some(a) = gate::decisions(o) {
        return a;
    }
    match step(o) {
        Step::Wait(after) => Action::Wait { after, renew: None },
        Step::Refused => refused(o, idle),
        Step::Claim(op) => start::new_claim(o, op, None),
        Step::Gate { due } => match gate::gate(o, idle) {
            Action::Wait { .. } if due => start::new_claim(o, Op::Resolve, None),
            action => action,
        },
    }
}

/// When the next cycle (or a failure's retry) is due: recorded by the step that rested.
fn due_at(o: &Observed<'_>) -> Timestamp {
    o.status.next_reconciliation_time.as_ref().map_or(o.now, |t| t.0)
}

/// Refusals that block every Job: unsupported engine, realm not authorized or contested, a
/// verification policy that cannot be used.
fn refusal(o: &Observed<'_>, idle: Duration) -> Option<Action> {
    let (reason, message, event) =
        crate::operation::refusal::refusal(o.realm, Some(o.policy), o.spec.target.engine.as_str())?;
    let mut s = edit(o);
    phase(o, &mut s, MigrationPhase::Blocked, false, reason, message.clone());
    cond(
        o,
        &mut s,
        ConditionType::Blocked,
        Status::True,
        reason,
        message.clone(),
    );
    Some(write_or_wait(o, s, Some(Event::warning(event, message)), idle))
}

/// A changed execution binding retires the plan; its approvals become stale on a later pass.
fn retire_binding(o: &Observed<'_>) -> Option<Action> {
    let recorded = o.status.execution_binding.as_ref().and_then(|b| b.epoch.as_ref());
    if recorded.is_none_or(|r| *r == o.binding.epoch) {
        return None;
    }
    let mut s = edit(o);
    s.execution_binding = Some(o.binding.status());
    s.history = None;
    let event = s.plan.take().map(|_| {
        Event::normal(
            "PlanRetired",
            "the execution binding changed; the plan and its approvals are retired",
        )
    });
    Some(Action::WriteStatus {
        status: Box::new(s),
        event,
    })
}

enum Step {
    Wait(Duration),
    /// A recorded refusal keeps the History reading from running (see [`refusal_holds`]).
    Refused,
    Claim(Op),
    Gate {
        due: bool,
    },
}

/// Where the cycle stands, from the recorded times.
fn step(o: &Observed<'_>) -> Step {
    let s = o.status;
    let art = s.artifact.as_ref();
    let resolved_at = art.and_then(|x| x.resolved_at.as_ref()).map(|t| t.0);
    let generation_moved = s.observed_generation != Some(o.meta.generation);
    let reference_moved =
        art.and_then(|x| x.requested_reference.as_deref()) != Some(o.spec.artifact.oci_ref.as_str());
    let due = due_at(o) <= o.now;
    let failed = s.phase == Some(MigrationPhase::Failed);
    if failed && !due && !generation_moved {
        return Step::Wait(until(o.now, due_at(o)));
    }
    let Some(resolved_at) = resolved_at else {
        return Step::Claim(Op::Resolve);
    };
    if generation_moved || reference_moved || failed {
        return Step::Claim(Op::Resolve);
    }
    let rest = || {
        if due {
            Step::Claim(Op::Resolve)
        } else {
            Step::Wait(until(o.now, due_at(o)))
        }
    };
    let PolicyRead::Ok { uid, digest } = o.policy else {
        return rest();
    };
    let verified_at = art.and_then(|x| x.verified_at.as_ref()).map(|t| t.0);
    let same_policy = art.is_some_and(|x| {
        x.verification_policy_uid.as_deref() == Some(uid.as_str())
            && x.verification_policy_digest.as_ref() == Some(digest)
    });
    if !(same_policy && verified_at.is_some_and(|v| v >= resolved_at)) {
        return Step::Claim(Op::Verify);
    }
    if art.and_then(|x| x.verified) != Some(true) {
        return rest();
    }
    let verified_at = verified_at.unwrap_or(resolved_at);
    let read_at = s.history.as_ref().map(|h| h.observed_at.0);
    let ran_at = s
        .last_run
        .as_ref()
        .and_then(|r| r.finished_at.as_ref())
        .map(|t| t.0);
    let fresh = read_at.is_some_and(|r| r >= verified_at && ran_at.is_none_or(|ran| ran <= r));
    if !fresh {
        if refusal_holds(o) {
            return if due { rest() } else { Step::Refused };
        }
        return Step::Claim(Op::History);
    }
    Step::Gate { due }
}

/// Whether `status.refusal` still keeps the History reading, whose Pod fetches the artifact, from
/// running: a refused artifact for as long as its digest, the spec and the binding stay; a
/// registry grant or a missing Secret until the next cycle's Resolve.
fn refusal_holds(o: &Observed<'_>) -> bool {
    let art = o.status.artifact.as_ref();
    o.status.refusal.as_ref().is_some_and(|r| {
        crate::operation::prestart::holds(
            r,
            o.meta.generation,
            &o.binding.epoch,
            art.and_then(|x| x.digest.as_ref()),
            art.and_then(|x| x.resolved_at.as_ref()).map(|t| t.0),
        )
    })
}

/// The refusal that holds, shown as the phase it leaves the migration in (a Resolve since may
/// have moved the phase on); written only when that changes anything.
fn refused(o: &Observed<'_>, idle: Duration) -> Action {
    let Some(r) = &o.status.refusal else {
        return Action::Wait {
            after: idle,
            renew: None,
        };
    };
    let reason = r.reason.parse().unwrap_or(Reason::OperationFailed);
    let mut s = edit(o);
    phase(
        o,
        &mut s,
        MigrationPhase::Blocked,
        false,
        reason,
        r.message.clone(),
    );
    cond(
        o,
        &mut s,
        ConditionType::Blocked,
        Status::True,
        reason,
        r.message.clone(),
    );
    write_or_wait(o, s, None, idle)
}

/// The next cycle after a rest: `interval` from now.
pub fn next_cycle(o: &Observed<'_>) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
    k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(after(o.now, o.spec.interval.as_duration()))
}
