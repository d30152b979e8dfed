//! An Apply that ended (or whose outcome cannot be known) owes a proof: never replayed, settled
//! only by a fresh Observe and Plan under the Apply's Lease.

use ptah_api::{
    conditions::{ConditionType, Reason},
    schema::{PendingObservation, PendingObservationOutcome, SchemaOperationStatus, SchemaPhase},
    shared::ImmutableObjectReference,
};

use super::failed::failed;
use crate::conditions::Status;
use crate::schema::{
    action::{Action, Event},
    observed::Observed,
    record::{self, cond, edit},
};

/// An Apply whose runner reported an outcome it cannot vouch for (a failed statement, a stop, a
/// stale plan): never replayed, proved at once. The runner writes its frame only once `ptah` has
/// exited, so no process of the Apply can overlap the proof. A statement the server still runs
/// for the dead session holds the session's advisory lock until it ends, and any later Apply takes
/// that lock before its stale-plan check: the proof may read too early, never let a plan run twice.
pub fn apply_reported_unknown(o: &Observed<'_>, c: &SchemaOperationStatus, why: &str) -> Action {
    owe_proof(o, c, PendingObservationOutcome::OutcomeUnknown, o.now, why)
}

/// A dispatched Apply whose outcome cannot be known and whose Pod may still run unseen (a lost
/// Job, no frame, a changed Lease): never replayed, settled by a proof once it could no longer run.
pub fn apply_unknown(o: &Observed<'_>, c: &SchemaOperationStatus, why: &str) -> Action {
    let grace = c.termination_grace_period_seconds.unwrap_or(30).max(0) as u64;
    // An unseen Pod may still run until its execution deadline: the proof may not overlap it.
    let observe_after = c
        .execution_not_after
        .as_ref()
        .map_or(o.now, |t| {
            record::after(t.0, std::time::Duration::from_secs(grace))
        })
        .max(o.now);
    owe_proof(
        o,
        c,
        PendingObservationOutcome::OutcomeUnknown,
        observe_after,
        why,
    )
}

/// Records the proof the Apply owes, clearing its claim in the same write.
pub fn owe_proof(
    o: &Observed<'_>,
    c: &SchemaOperationStatus,
    outcome: PendingObservationOutcome,
    observe_after: jiff::Timestamp,
    why: &str,
) -> Action {
    let mut s = edit(o);
    let plan = o.status.plan.as_ref();
    let (Some(epoch), Some(digest), Some(target), Some(source)) = (
        c.lease_epoch.clone(),
        c.coordination_digest.clone(),
        c.target.clone(),
        c.source.clone(),
    ) else {
        // A claim that reached dispatch always carries these; refuse to guess otherwise.
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the Apply claim lacks its realm, target or source",
        );
    };
    s.active_operation = None;
    s.pending_observation = Some(PendingObservation {
        outcome,
        apply_operation_id: c.id.clone(),
        apply_job_name: c.job_name.clone(),
        apply_job_uid: c.job_uid.clone(),
        admission_snapshot: c.admission_snapshot.clone(),
        apply_pod_uids: Vec::new(),
        apply_pod_count: None,
        apply_generation: Some(o.meta.generation),
        observation_completed: None,
        observe_after: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            observe_after,
        )),
        plan: plan.map_or_else(
            || ImmutableObjectReference {
                name: "unknown".into(),
                uid: "unknown".into(),
            },
            |p| ImmutableObjectReference {
                name: p.name.clone(),
                uid: p.uid.clone(),
            },
        ),
        plan_fingerprint: plan.map(|p| p.fingerprint.clone()),
        dispatched_by: Some(ptah_api::schema::DispatchedBy {
            controller_image: o.binding.controller_image.clone(),
            controller_revision: o.binding.controller_revision.clone(),
            runner_image: o.binding.runner_image.clone(),
        }),
        target,
        coordination_digest: digest,
        source,
        dev: o.spec.dev.clone(),
        plan_required: Some(true),
        exclude: o.spec.policy.exclude.clone(),
        protected_tables: o.spec.policy.protected_tables.clone(),
        drift_severity: Some(o.spec.policy.drift_severity),
        connect_timeout: Some(o.spec.execution.connect_timeout.clone()),
        lock_timeout: Some(o.spec.policy.lock_timeout.clone()),
        lease_duration_seconds: c.lease_duration_seconds.unwrap_or(960),
        lease_epoch: epoch,
    });
    s.phase = Some(SchemaPhase::VerifyingConvergence);
    let (reason, event) = match outcome {
        PendingObservationOutcome::ApplySucceeded => (
            Reason::VerifyingConvergence,
            Event::normal(
                "Applied",
                "the plan was applied; proving convergence with a fresh Observe and Plan",
            ),
        ),
        PendingObservationOutcome::OutcomeUnknown => (
            Reason::ApplyOutcomeUnknown,
            Event::warning(
                "ApplyOutcomeUnknown",
                format!("{why}; it is never replayed: a fresh Observe and Plan settle it"),
            ),
        ),
    };
    cond(o, &mut s, ConditionType::Applying, Status::False, reason, why);
    cond(o, &mut s, ConditionType::Progressing, Status::True, reason, why);
    s.plan = None;
    Action::WriteStatus {
        status: Box::new(s),
        event: Some(event),
    }
}
