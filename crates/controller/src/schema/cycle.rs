//! With nothing in flight: which operation comes next, or which state to record.
//!
//! A cycle is Resolve (which verifies under the policy) → Plan (which reads the drift first),
//! ordered by the times recorded in status; Verify is a Job of its own only when the Resolve did
//! not verify. Then the approval gate. Blocked waits for an input to change or the next interval;
//! Failed waits for `failureRetryInterval`.

use std::time::Duration;

use jiff::Timestamp;
use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{SchemaOperationType as Op, SchemaPhase},
};

use super::{
    action::{Action, Event},
    gate,
    observed::{Observed, PolicyRead, Realm},
    record::{self, cond, edit, phase, write_or_wait},
    start,
};
use crate::conditions::Status;

/// The next step of an idle resource.
pub fn next(o: &Observed<'_>) -> Action {
    let idle = idle_wait(o);
    if o.spec.suspend {
        let mut s = edit(o);
        // Suspending is itself a spec change: kstatus reads the suspension as current only once
        // the status names this generation. Resuming changes the spec again, so the next cycle
        // still starts with a Resolve.
        s.observed_generation = Some(o.meta.generation);
        phase(
            o,
            &mut s,
            SchemaPhase::Suspended,
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
    if o.status.pending_observation.is_some() {
        return proof(o);
    }
    if let Some(a) = retire_binding(o) {
        return a;
    }
    match step(o) {
        Step::Wait(after) => Action::Wait { after, renew: None },
        Step::Refused => refused(o, idle),
        Step::Claim(op) => start::new_claim(o, op, false),
        Step::Gate { due } => match gate::gate(o, idle) {
            Action::Wait { .. } if due => start::new_claim(o, Op::Resolve, false),
            action => action,
        },
    }
}

/// When the next cycle is due (or a failure may be retried).
fn idle_wait(o: &Observed<'_>) -> Duration {
    let due = cycle_due_at(o);
    record::until(o.now, due)
}

fn cycle_due_at(o: &Observed<'_>) -> Timestamp {
    let s = o.status;
    if s.phase == Some(SchemaPhase::Failed) {
        let since = s.last_attempt_time.as_ref().map_or(o.now, |t| t.0);
        return record::after(since, o.spec.execution.failure_retry_interval.as_duration());
    }
    // The interval runs from the last step of the previous cycle, so a cycle longer than the
    // interval still completes (and reaches its gate) before the next one starts.
    let src = s.source.as_ref();
    let last = [
        src.and_then(|x| x.resolved_at.as_ref()),
        src.and_then(|x| x.verified_at.as_ref()),
        s.target.as_ref().and_then(|t| t.last_observed_at.as_ref()),
        s.last_successful_reconciliation.as_ref(),
    ]
    .into_iter()
    .flatten()
    .map(|t| t.0)
    .max();
    last.map_or(o.now, |t| record::after(t, o.spec.interval.as_duration()))
}

/// Refusals that block every Job: unsupported engine, realm not authorized or contested,
/// a verification policy that cannot be used.
fn refusal(o: &Observed<'_>, idle: Duration) -> Option<Action> {
    // A proof owed runs under the policy its Apply was authorized with.
    let policy = o.status.pending_observation.is_none().then_some(o.policy);
    let (reason, message, event) =
        crate::operation::refusal::refusal(o.realm, policy, o.spec.target.engine.as_str())?;
    // A proof owed is never abandoned because of a refusal; it keeps its Lease and runs first.
    if o.status.pending_observation.is_some() && !matches!(o.realm, Realm::UnsupportedEngine) {
        return None;
    }
    let mut s = edit(o);
    phase(o, &mut s, SchemaPhase::Blocked, false, reason, message.clone());
    if reason == Reason::UnsupportedEngine {
        cond(
            o,
            &mut s,
            ConditionType::EngineSupported,
            Status::False,
            reason,
            message.clone(),
        );
        s.plan = None;
    }
    Some(write_or_wait(o, s, Some(Event::warning(event, message)), idle))
}

/// A changed execution binding retires the plan (its approvals become stale on a later pass).
fn retire_binding(o: &Observed<'_>) -> Option<Action> {
    let recorded = o.status.execution_binding.as_ref().and_then(|b| b.epoch.as_ref());
    // A fresh resource records the binding with its first claim.
    if recorded.is_none_or(|r| *r == o.binding.epoch) {
        return None;
    }
    let mut s = edit(o);
    s.execution_binding = Some(o.binding.status());
    let event = if s.plan.take().is_some() {
        cond(
            o,
            &mut s,
            ConditionType::PlanReady,
            Status::False,
            Reason::ExecutionBindingChanged,
            "the executor, protocol or state version changed; the plan was retired",
        );
        Some(Event::normal(
            "PlanRetired",
            "the execution binding changed; the plan and its approvals are retired",
        ))
    } else {
        None
    };
    Some(Action::WriteStatus {
        status: Box::new(s),
        event,
    })
}

enum Step {
    Wait(Duration),
    /// A recorded refusal keeps the Plan from running (see [`refusal_holds`]).
    Refused,
    Claim(Op),
    Gate {
        due: bool,
    },
}

/// Where the cycle stands, from the recorded times.
fn step(o: &Observed<'_>) -> Step {
    let s = o.status;
    let src = s.source.as_ref();
    let resolved_at = src.and_then(|x| x.resolved_at.as_ref()).map(|t| t.0);
    let generation_moved = s.observed_generation != Some(o.meta.generation);
    let reference_moved =
        src.and_then(|x| x.requested_reference.as_deref()) != Some(o.spec.desired.oci_ref.as_str());
    let due = cycle_due_at(o) <= o.now;
    if s.phase == Some(SchemaPhase::Failed) && !due && !generation_moved {
        return Step::Wait(idle_wait(o));
    }
    let Some(resolved_at) = resolved_at else {
        return Step::Claim(Op::Resolve);
    };
    if generation_moved || reference_moved || s.phase == Some(SchemaPhase::Failed) {
        return Step::Claim(Op::Resolve);
    }
    // Mid-cycle the interval does not interrupt; at a rest point it starts the next cycle.
    let rest = |o: &Observed<'_>| {
        if due {
            Step::Claim(Op::Resolve)
        } else {
            Step::Wait(idle_wait(o))
        }
    };
    let policy = match o.policy {
        PolicyRead::Ok { uid, digest } => (uid, digest),
        PolicyRead::Refused(_) => return rest(o),
    };
    let verified_at = src.and_then(|x| x.verified_at.as_ref()).map(|t| t.0);
    let same_policy = src.is_some_and(|x| {
        x.verification_policy_uid.as_deref() == Some(policy.0.as_str())
            && x.verification_policy_digest.as_ref() == Some(policy.1)
    });
    let verify_current = same_policy && verified_at.is_some_and(|v| v >= resolved_at);
    if !verify_current {
        return Step::Claim(Op::Verify);
    }
    if src.and_then(|x| x.verified) != Some(true) {
        // Refused for this digest and this policy: blocked until either changes or the interval.
        return rest(o);
    }
    let verified_at = verified_at.unwrap_or(resolved_at);
    let observed_at = s
        .target
        .as_ref()
        .and_then(|t| t.last_observed_at.as_ref())
        .map(|t| t.0)
        .filter(|t| *t >= verified_at);
    let planned_at = s.last_successful_reconciliation.as_ref().map(|t| t.0);
    // A Plan reads the drift before it plans, so one Plan Job is both the cycle's observation
    // and its plan.
    let stale = match observed_at {
        None => true,
        Some(observed_at) => planned_at.is_none_or(|p| p < observed_at),
    };
    if stale {
        if s.phase == Some(SchemaPhase::Blocked) && blocked_at_plan(o) {
            return rest(o);
        }
        if refusal_holds(o) {
            return if due { rest(o) } else { Step::Refused };
        }
        return Step::Claim(Op::Plan);
    }
    Step::Gate { due }
}

/// Whether `status.refusal` still keeps the Plan, whose Pod fetches the artifact, from running:
/// a refused artifact for as long as its digest, the spec and the binding stay; a registry grant
/// or a missing Secret until the next cycle's Resolve.
fn refusal_holds(o: &Observed<'_>) -> bool {
    let src = o.status.source.as_ref();
    o.status.refusal.as_ref().is_some_and(|r| {
        crate::operation::prestart::holds(
            r,
            o.meta.generation,
            &o.binding.epoch,
            src.and_then(|x| x.digest.as_ref()),
            src.and_then(|x| x.resolved_at.as_ref()).map(|t| t.0),
        )
    })
}

/// The refusal that holds, shown as the phase it leaves the resource in (a Resolve since may have
/// moved the phase on); written only when that changes anything.
fn refused(o: &Observed<'_>, idle: Duration) -> Action {
    let Some(r) = &o.status.refusal else {
        return Action::Wait {
            after: idle,
            renew: None,
        };
    };
    let reason = r.reason.parse().unwrap_or(Reason::OperationFailed);
    let mut s = edit(o);
    phase(o, &mut s, SchemaPhase::Blocked, false, reason, r.message.clone());
    write_or_wait(o, s, None, idle)
}

/// A Plan refused this cycle (protected table): no re-plan within the cycle.
fn blocked_at_plan(o: &Observed<'_>) -> bool {
    crate::conditions::get(&o.status.conditions, ConditionType::PlanReady)
        .is_some_and(|c| c.reason == Reason::ProtectedTable.as_str())
}

/// The proof an Apply owes: a Plan (which reads the drift first) under the Apply's Lease; an
/// Observe claimed by an earlier manager is still followed by its Plan.
fn proof(o: &Observed<'_>) -> Action {
    let Some(p) = o.status.pending_observation.as_ref() else {
        return Action::Wait {
            after: record::POLL,
            renew: None,
        };
    };
    if o.spec.suspend {
        return Action::Wait {
            after: record::POLL,
            renew: None,
        };
    }
    let mut after = p.observe_after.as_ref().map_or(o.now, |t| t.0);
    // A failed step of the proof is retried after `failureRetryInterval`, like any failure: at
    // once, each retry would be another Job.
    if o.status.phase == Some(SchemaPhase::Failed) {
        after = after.max(cycle_due_at(o));
    }
    if after > o.now {
        return Action::Wait {
            after: record::until(o.now, after),
            renew: None,
        };
    }
    start::new_claim(o, Op::Plan, true)
}
