//! The decision: one step from (spec, status, observed children). Pure.
//!
//! Order matters and mirrors the durable order of the claim protocol: a staged Lease release is
//! retried first; the finalizer precedes any claim; a claim is supervised before anything new
//! starts; a dispatched Apply is never discarded, only turned into an owed proof.

use std::time::Duration;

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{SchemaOperationStatus, SchemaOperationType as Op},
};

use super::{
    action::{Action, Event, Renewal},
    claim::{self, holder_op},
    cycle,
    observed::Observed,
    record::{self, POLL, cond, edit, write_or_wait},
    settle,
};
use crate::{
    conditions::Status,
    operation::{Stuck, Supervision, prestart::PreStart, supervise},
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
            holder: crate::operation::claim::holder(&o.meta.uid, &release.operation_id),
            status: Box::new(s),
        };
    }
    if !o.meta.deleting && !o.meta.has_finalizer {
        return Action::AddFinalizer;
    }
    if let Some(claim) = &o.status.active_operation {
        return supervise_claim(o, claim);
    }
    if o.meta.deleting && o.status.pending_observation.is_none() {
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

fn is_proof(o: &Observed<'_>, c: &SchemaOperationStatus) -> bool {
    o.status.pending_observation.is_some() && c.operation_type != Op::Apply
}

/// The sources the claim would be made from now; `None` when they can no longer be derived.
fn current_sources<'a>(o: &'a Observed<'_>, c: &SchemaOperationStatus) -> Option<claim::ClaimSources<'a>> {
    if is_proof(o, c) {
        claim::from_proof(o, c.operation_type)
    } else {
        Some(claim::from_spec(o, c.operation_type))
    }
}

fn supervise_claim(o: &Observed<'_>, c: &SchemaOperationStatus) -> Action {
    let apply = c.operation_type == Op::Apply;
    let lost = |why: &str| {
        if apply {
            settle::apply_unknown(o, c, why)
        } else {
            reclaim(o, c, why)
        }
    };
    let unattributable = |reason: Reason, why: &str| {
        if apply {
            settle::apply_unknown(o, c, why)
        } else {
            settle::failed(o, c, reason, why)
        }
    };
    let state = supervise(c, o.binding, o.job, o.result);
    match state {
        Supervision::BeforeDispatch => return before_dispatch(o, c),
        Supervision::JobLost(why) => return lost(why),
        Supervision::Adopt(uid) => {
            let mut s = edit(o);
            if let Some(claim) = s.active_operation.as_mut() {
                claim.job_uid = Some(uid.to_owned());
            }
            return Action::AdoptJob { status: Box::new(s) };
        }
        _ => {}
    }
    if apply && let Some(consume) = unconsumed_approval(o) {
        return Action::MarkApprovals {
            consumed: vec![consume],
            stale: Vec::new(),
        };
    }
    match state {
        Supervision::Running(stuck) => running(o, c, stuck),
        Supervision::SecretMissing(missing) => secret_missing(o, c, &missing),
        Supervision::Refused(refused) => settle::refused(o, c, &refused, false),
        Supervision::ContinuityLost => lost(if apply {
            "the realm Lease changed hands while the Apply ran"
        } else {
            "the realm Lease changed hands while the operation ran; its result is discarded"
        }),
        Supervision::ScheduleCleanup => Action::ScheduleJobCleanup,
        Supervision::AwaitResult => Action::Wait {
            after: POLL,
            renew: renewal(o, c),
        },
        Supervision::Unattributable(why) => unattributable(Reason::OperationFailed, &why),
        Supervision::Unbound(reason, why) => unattributable(reason, &why),
        // An upgrade retired the binding the Apply was dispatched under: its report is not
        // believed, whatever it says; a fresh Observe and Plan under the new binding prove it.
        Supervision::Bound(_) if apply && c.execution_binding_id != o.binding.epoch => settle::apply_unknown(
            o,
            c,
            "the execution binding changed while the Apply was dispatched; its result is not read",
        ),
        Supervision::Bound(payload) => {
            let mut action = settle::settle(o, c, payload);
            // Its main container ran, so its fetch succeeded: no refusal of it stands.
            if !matches!(c.operation_type, Op::Resolve | Op::Verify) {
                action.edit_statuses(|s| s.refusal = None);
            }
            action
        }
        Supervision::BeforeDispatch | Supervision::JobLost(_) | Supervision::Adopt(_) => Action::Wait {
            after: POLL,
            renew: None,
        },
    }
}

fn running(o: &Observed<'_>, c: &SchemaOperationStatus, stuck: Option<&Stuck>) -> Action {
    if let Some(stuck) = stuck {
        let message = stuck.to_string();
        let message = message.as_str();
        let mut s = edit(o);
        cond(
            o,
            &mut s,
            ConditionType::Progressing,
            Status::False,
            Reason::PodAdmissionRefused,
            message,
        );
        return write_or_wait(o, s, Some(Event::warning("PodAdmissionRefused", message)), POLL);
    }
    Action::Wait {
        after: crate::operation::time::running_poll(c.lease_duration_seconds),
        renew: renewal(o, c),
    }
}

/// A Pod that waits for a Secret (or key) that does not exist is said at once. A read-only claim
/// is settled now and its Job deleted; an Apply once its dispatch window has closed (plus the
/// termination grace, for clock skew): its runner refuses to start the child after that, so a
/// container the kubelet starts later, once the Secret appears, applies nothing. Until then the
/// Apply keeps its claim and Lease.
fn secret_missing(o: &Observed<'_>, c: &SchemaOperationStatus, missing: &PreStart) -> Action {
    let closed = crate::operation::prestart::may_settle_at(
        c.operation_type == Op::Apply,
        c.dispatch_not_after.as_ref(),
        o.now,
    );
    if let Some(closed) = closed
        && closed <= o.now
    {
        return settle::refused(o, c, missing, true);
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
    let poll = crate::operation::time::running_poll(c.lease_duration_seconds);
    Action::Wait {
        after: closed.map_or(poll, |t| record::until(o.now, t).min(poll)),
        renew: renewal(o, c),
    }
}

/// The renewal of the claim's Lease while its Job runs, with the latch to record if it is lost.
fn renewal(o: &Observed<'_>, c: &SchemaOperationStatus) -> Option<Renewal> {
    if c.lease_continuity_lost == Some(true) {
        return None;
    }
    let mut lost = edit(o);
    if let Some(claim) = lost.active_operation.as_mut() {
        claim.lease_continuity_lost = Some(true);
    }
    Some(Renewal {
        digest: c.coordination_digest.clone()?,
        holder: crate::operation::claim::holder(&o.meta.uid, &holder_op(o, c)),
        duration_seconds: c.lease_duration_seconds?,
        epoch: c.lease_epoch.clone()?,
        lost: Box::new(lost),
    })
}

fn before_dispatch(o: &Observed<'_>, c: &SchemaOperationStatus) -> Action {
    let retired = c.execution_binding_id != o.binding.epoch;
    let stopping = o.meta.deleting && !is_proof(o, c) || o.spec.suspend;
    let moved =
        current_sources(o, c).is_none_or(|s| s.fingerprint(o.binding.epoch.as_str()) != c.input_fingerprint);
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
        record::clear_claim(&mut s, c, Some(&holder_op(o, c)));
        cond(o, &mut s, ConditionType::Progressing, Status::False, reason, why);
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::normal(reason.as_str(), why)),
        };
    }
    if c.operation_type == Op::Apply
        && let Err(why) = super::gate::authorized(o)
    {
        let mut s = edit(o);
        record::clear_claim(&mut s, c, None);
        s.plan = s.plan.take().map(|mut p| {
            p.approval = None;
            p
        });
        cond(
            o,
            &mut s,
            ConditionType::Applying,
            Status::False,
            Reason::ApprovalRevoked,
            why.clone(),
        );
        return Action::WriteStatus {
            status: Box::new(s),
            event: Some(Event::warning("ApprovalRevoked", why)),
        };
    }
    if c.lease_duration_seconds.is_some() {
        let Some(digest) = c.coordination_digest.clone() else {
            return settle::failed(
                o,
                c,
                Reason::ConfigurationError,
                "the claim holds no realm to lock",
            );
        };
        if c.lease_epoch.is_none() {
            return Action::AcquireLease {
                digest,
                holder: crate::operation::claim::holder(&o.meta.uid, &holder_op(o, c)),
                duration_seconds: c.lease_duration_seconds.unwrap_or(60),
            };
        }
    }
    let mut s = edit(o);
    let (dispatch, execution) = claim::deadlines(o.now, o.spec.execution.active_deadline_seconds);
    let plan = (c.operation_type == Op::Apply)
        .then(|| {
            o.status
                .plan
                .as_ref()
                .map(|p| ptah_api::shared::ImmutableObjectReference {
                    name: p.name.clone(),
                    uid: p.uid.clone(),
                })
        })
        .flatten();
    if let Some(claim) = s.active_operation.as_mut() {
        claim.dispatch_started = Some(true);
        if c.operation_type == Op::Apply {
            claim.dispatch_not_after = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(dispatch));
            claim.execution_not_after = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(execution));
        }
    }
    s.last_attempt_time = Some(record::now(o));
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
        plan,
    }
}

/// Replaces a read-only claim whose Job was lost or replaced by a fresh claim (next attempt,
/// so a new Job name): a read-only operation is safe to run again; it is never re-created under
/// the old claim.
fn reclaim(o: &Observed<'_>, c: &SchemaOperationStatus, why: &str) -> Action {
    let mut s = edit(o);
    record::clear_claim(&mut s, c, Some(&holder_op(o, c)));
    if let Some(sources) = current_sources(o, c) {
        let mut next = claim::new_claim(o, &sources, c.attempt.saturating_add(1));
        // A proof keeps the Apply's Lease epoch; the release staged above is then not owed.
        if is_proof(o, c) {
            next.lease_epoch = c.lease_epoch.clone();
            s.pending_lock_release = None;
        }
        s.active_operation = Some(next);
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

/// The recorded approval of the dispatched Apply, when it is not yet marked consumed.
fn unconsumed_approval(o: &Observed<'_>) -> Option<ptah_api::shared::ImmutableObjectReference> {
    let recorded = o.status.plan.as_ref()?.approval.as_ref()?;
    o.approvals
        .iter()
        .find(|a| a.object.uid == recorded.uid && !a.consumed)
        .map(|a| a.object.clone())
}
