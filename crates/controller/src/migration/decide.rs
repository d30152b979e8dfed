//! The PtahMigration decision: one step from (spec, status, observed children). Pure.
//!
//! The durable order mirrors the schema family's: a staged Lease release first, the finalizer
//! before any claim, a claim supervised before anything new starts. A dispatched Apply is never
//! discarded and never replayed: what cannot be proved becomes `status.unresolvedRun`.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    conditions::{ConditionType, Reason},
    migration::{MigrationOperationStatus, MigrationOperationType as Op, UnresolvedRunOutcome},
};

use super::{
    action::{Action, Event, Renewal},
    claim, cycle, gate,
    observed::Observed,
    record::{self, cond, edit, write_or_wait},
    settle,
};
use crate::{
    conditions::Status,
    operation::{
        Supervision,
        claim::holder,
        prestart::PreStart,
        supervise,
        time::{POLL, running_poll},
    },
};

/// The one step to take now, every status it writes carrying its kstatus conditions.
pub fn decide(o: &Observed<'_>) -> Action {
    let mut action = step(o);
    action.edit_statuses(|s| record::kstatus(o, s));
    action
}

fn step(o: &Observed<'_>) -> Action {
    if let Some(release) = &o.status.pending_lock_release {
        let mut s = edit(o);
        s.pending_lock_release = None;
        return Action::ReleaseLease {
            release: release.clone(),
            holder: holder(&o.meta.uid, &release.operation_id),
            status: Box::new(s),
        };
    }
    if !o.meta.deleting && !o.meta.has_finalizer {
        return Action::AddFinalizer;
    }
    if let Some(c) = &o.status.active_operation {
        return supervise_claim(o, c);
    }
    if o.meta.deleting {
        if let Some(run) = &o.status.unresolved_run {
            let mut s = edit(o);
            s.unresolved_run = None;
            let note = format!(
                "the record of unresolved run {} (Job {}) is discarded with the resource; check the database by hand",
                run.operation_id.as_str(),
                run.job_name
            );
            return Action::WriteStatus {
                status: Box::new(s),
                event: Some(Event::warning("UnresolvedRunDiscarded", note)),
            };
        }
        return if o.meta.has_finalizer {
            Action::RemoveFinalizer
        } else {
            Action::Wait {
                after: Duration::from_secs(3600),
                renew: None,
            }
        };
    }
    cycle::next(o)
}

/// An Apply dispatched before a suspension, a deletion or an execution-binding change: its
/// result is never read, the run is recorded as unresolved once its Job is terminal.
fn stopped_since_dispatch(o: &Observed<'_>, c: &MigrationOperationStatus) -> Option<&'static str> {
    if c.execution_binding_id != o.binding.epoch {
        Some("the execution binding changed while the Apply was dispatched; its result is not read")
    } else if o.spec.suspend {
        Some("the migration was suspended while the Apply was dispatched; its result is not read")
    } else if o.meta.deleting {
        Some("the migration is being deleted while the Apply was dispatched; its result is not read")
    } else {
        None
    }
}

fn supervise_claim(o: &Observed<'_>, c: &MigrationOperationStatus) -> Action {
    let apply = c.operation_type == Op::Apply;
    let unknown = |why: &str| settle::unresolved(o, c, UnresolvedRunOutcome::Unknown, why);
    match supervise(c, o.binding, o.job, o.result) {
        Supervision::BeforeDispatch => before_dispatch(o, c),
        Supervision::JobLost(why) if apply => match may_still_write_until(c) {
            // An unseen Pod of the lost Job may still run: keep the claim and its Lease until its
            // execution deadline has passed, so nothing can overlap it.
            Some(until) if until > o.now => Action::Wait {
                after: crate::operation::time::until(o.now, until),
                renew: renewal(o, c),
            },
            _ => unknown(why),
        },
        Supervision::JobLost(why) => reclaim(o, c, why),
        Supervision::Adopt(uid) => {
            let mut s = edit(o);
            if let Some(claim) = s.active_operation.as_mut() {
                claim.job_uid = Some(uid.to_owned());
            }
            Action::AdoptJob { status: Box::new(s) }
        }
        Supervision::Running(Some(stuck)) => {
            let refused = stuck.to_string();
            let mut s = edit(o);
            cond(
                o,
                &mut s,
                ConditionType::Progressing,
                Status::False,
                Reason::PodAdmissionRefused,
                refused.clone(),
            );
            write_or_wait(o, s, Some(Event::warning("PodAdmissionRefused", refused)), POLL)
        }
        Supervision::SecretMissing(missing) => secret_missing(o, c, &missing),
        Supervision::Refused(refused) => super::refused::refused(o, c, &refused, false),
        Supervision::Running(None) => Action::Wait {
            after: running_poll(c.lease_duration_seconds),
            renew: renewal(o, c),
        },
        Supervision::AwaitResult => Action::Wait {
            after: POLL,
            renew: renewal(o, c),
        },
        Supervision::ContinuityLost if apply => unknown("the realm Lease changed hands while the Apply ran"),
        Supervision::ContinuityLost => {
            reclaim(o, c, "the realm Lease changed hands; the result is discarded")
        }
        Supervision::ScheduleCleanup => Action::ScheduleJobCleanup,
        Supervision::Unattributable(why) if apply => unknown(&why),
        Supervision::Unattributable(why) => record::failed(o, c, Reason::OperationFailed, &why),
        Supervision::Unbound(_, why) if apply => unknown(&why),
        Supervision::Unbound(reason, why) => record::failed(o, c, reason, &why),
        Supervision::Bound(payload) => match stopped_since_dispatch(o, c).filter(|_| apply) {
            Some(why) => unknown(why),
            None => {
                let mut action = settle::settle(o, c, payload);
                // Its main container ran, so its fetch succeeded: no refusal of it stands.
                if matches!(c.operation_type, Op::History | Op::Apply) {
                    action.edit_statuses(|s| s.refusal = None);
                }
                action
            }
        },
    }
}

/// A Pod that waits for a Secret (or key) that does not exist is said at once. A read-only claim
/// is settled now and its Job deleted; an Apply once its dispatch window has closed (plus the
/// termination grace, for clock skew): its runner refuses to start the child after that, so a
/// container the kubelet starts later, once the Secret appears, applies nothing. Until then the
/// Apply keeps its claim and Lease.
fn secret_missing(o: &Observed<'_>, c: &MigrationOperationStatus, missing: &PreStart) -> Action {
    let closed = crate::operation::prestart::may_settle_at(
        c.operation_type == Op::Apply,
        c.dispatch_not_after.as_ref(),
        o.now,
    );
    if let Some(closed) = closed
        && closed <= o.now
    {
        return super::refused::refused(o, c, missing, true);
    }
    let mut s = edit(o);
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::False,
        missing.reason,
        missing.message.clone(),
    );
    record::kstatus(o, &mut s);
    if &s != o.status {
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(missing.event("the Apply cannot start: ")),
        };
    }
    let poll = running_poll(c.lease_duration_seconds);
    Action::Wait {
        after: closed.map_or(poll, |t| crate::operation::time::until(o.now, t).min(poll)),
        renew: renewal(o, c),
    }
}

/// Until when a dispatched Apply's Pod may still write: its execution deadline plus the grace.
fn may_still_write_until(c: &MigrationOperationStatus) -> Option<jiff::Timestamp> {
    let end = c.execution_not_after.as_ref()?.0;
    let grace = crate::operation::claim::TERMINATION_GRACE_SECONDS.max(0) as u64;
    Some(crate::operation::time::after(end, Duration::from_secs(grace)))
}

/// The renewal of an Apply's Lease while its Job runs, with the latch to record if it is lost.
fn renewal(o: &Observed<'_>, c: &MigrationOperationStatus) -> Option<Renewal> {
    if c.lease_continuity_lost == Some(true) {
        return None;
    }
    let mut lost = edit(o);
    if let Some(claim) = lost.active_operation.as_mut() {
        claim.lease_continuity_lost = Some(true);
    }
    Some(Renewal {
        digest: c.coordination_digest.clone()?,
        holder: holder(&o.meta.uid, &c.id),
        duration_seconds: c.lease_duration_seconds?,
        epoch: c.lease_epoch.clone()?,
        lost: Box::new(lost),
    })
}

fn before_dispatch(o: &Observed<'_>, c: &MigrationOperationStatus) -> Action {
    let retired = c.execution_binding_id != o.binding.epoch;
    let stopping = o.meta.deleting || o.spec.suspend;
    let moved = claim::sources(o, c.operation_type).is_none_or(|s| s.fingerprint(o) != c.input_fingerprint);
    if retired || stopping || moved {
        let (reason, why) = if retired {
            (
                Reason::ExecutionBindingChanged,
                "the execution binding changed before dispatch",
            )
        } else if stopping {
            (
                Reason::Suspended,
                "the resource is suspended or being deleted; nothing was dispatched",
            )
        } else {
            (
                Reason::InputsChanged,
                "the operation's inputs changed before dispatch",
            )
        };
        let mut s = edit(o);
        record::clear_claim(&mut s, c);
        cond(o, &mut s, ConditionType::Progressing, Status::False, reason, why);
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::normal(reason.as_str(), why)),
        };
    }
    if c.operation_type == Op::Apply {
        if let Err(why) = gate::authorized(o, c) {
            let mut s = edit(o);
            record::clear_claim(&mut s, c);
            cond(
                o,
                &mut s,
                ConditionType::Progressing,
                Status::False,
                Reason::ApprovalRevoked,
                why.clone(),
            );
            return Action::WriteStatus {
                status: Box::new(s),
                event: Some(Event::warning("ApprovalRevoked", why)),
            };
        }
        if let Some(lease) = crate::operation::Claim::lease(c)
            && lease.epoch.is_none()
        {
            return Action::AcquireLease {
                digest: lease.digest,
                holder: holder(&o.meta.uid, &c.id),
                duration_seconds: lease.duration_seconds,
            };
        }
        // The approval is spent before `dispatchStarted`: a consumed approval never authorizes
        // a second dispatch, even if this pass crashes right after.
        if let Some(approval) = &c.approval_ref
            && o.approvals
                .iter()
                .any(|a| a.object.uid == approval.uid && !a.consumed)
        {
            return Action::MarkApprovals {
                consumed: vec![approval.clone()],
                stale: Vec::new(),
            };
        }
    }
    let mut s = edit(o);
    if let Some(claim) = s.active_operation.as_mut() {
        claim.dispatch_started = Some(true);
        if c.operation_type == Op::Apply {
            let (dispatch, execution) =
                crate::operation::claim::deadlines(o.now, o.spec.execution.active_deadline_seconds);
            claim.dispatch_not_after = Some(Time(dispatch));
            claim.execution_not_after = Some(Time(execution));
        }
    }
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::True,
        Reason::DispatchCommitted,
        format!("{:?} dispatched", c.operation_type),
    );
    Action::Dispatch {
        status: Box::new(s),
        plan: (c.operation_type == Op::Apply)
            .then(|| c.plan_ref.clone())
            .flatten(),
    }
}

/// Replaces a read-only claim whose Job was lost or replaced by a fresh claim (next attempt, so
/// a new Job name): a read-only operation is safe to run again, never under the old claim.
fn reclaim(o: &Observed<'_>, c: &MigrationOperationStatus, why: &str) -> Action {
    let mut s = edit(o);
    record::clear_claim(&mut s, c);
    if let Some(sources) = claim::sources(o, c.operation_type) {
        s.active_operation = Some(claim::new_claim(o, &sources, c.attempt.saturating_add(1)));
    }
    cond(
        o,
        &mut s,
        ConditionType::Progressing,
        Status::False,
        Reason::OperationFailed,
        why,
    );
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(Event::warning("OperationRetried", why)),
    }
}
