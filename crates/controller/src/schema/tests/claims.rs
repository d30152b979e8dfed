//! The claim protocol: durable order, at-most-once dispatch, result binding, Lease discipline.

use ptah_api::{
    conditions::ConditionType,
    schema::{PendingObservationOutcome, SchemaOperationType as Op, SchemaPhase},
};
use ptah_dataplane::{ErrorCode, OperationId, ResultError};

use super::world::{World, digest, fp, t};
use crate::schema::{Action, JobState, ResultRead};

#[test]
fn finalizer_is_added_before_any_claim() {
    let mut w = World::new();
    w.meta.has_finalizer = false;
    assert_eq!(w.step(), Action::AddFinalizer);
    assert!(w.status.active_operation.is_none());
    assert!(matches!(w.step(), Action::WriteStatus { .. }));
    assert_eq!(w.claim().operation_type, Op::Resolve);
}

#[test]
fn claim_is_persisted_before_its_job_exists() {
    let mut w = World::new();
    let a = w.step();
    let Action::WriteStatus { status, .. } = a else {
        panic!("expected a claim write, got {a:?}")
    };
    let c = status.active_operation.expect("claim");
    assert_eq!(c.dispatch_started, None);
    assert!(w.created.is_empty(), "no Job before the claim is durable");
    assert!(c.job_name.starts_with("ptah-resolve-orders-"), "{}", c.job_name);
    assert_eq!(c.attempt, 1);
}

#[test]
fn dispatch_started_is_persisted_with_the_single_create() {
    let mut w = World::new();
    w.step();
    let a = w.decide();
    let Action::Dispatch { status, .. } = a else {
        panic!("expected Dispatch, got {a:?}")
    };
    assert_eq!(
        status.active_operation.as_ref().and_then(|c| c.dispatch_started),
        Some(true)
    );
}

#[test]
fn lease_epoch_is_persisted_before_a_plan_dispatches() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    let a = w.step();
    assert!(matches!(a, Action::WriteStatus { .. }), "claim first: {a:?}");
    assert_eq!(w.claim().operation_type, Op::Plan);
    let a = w.step();
    assert!(matches!(a, Action::AcquireLease { .. }), "{a:?}");
    assert!(w.claim().lease_epoch.is_some());
    assert!(matches!(w.decide(), Action::Dispatch { .. }));
}

#[test]
fn the_plan_is_the_cycles_observation_under_the_lease() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.step();
    assert_eq!(w.claim().operation_type, Op::Plan, "no Observe Job of its own");
    assert!(w.claim().lease_duration_seconds.is_some());
    w.complete(Op::Plan, |w| w.plan_changes("CREATE TABLE t (id int);", false));
    assert!(
        !w.created.iter().any(|n| n.contains("observe")),
        "{:?}",
        w.created
    );
    let target = w
        .status
        .target
        .as_ref()
        .expect("the Plan's drift read is recorded");
    assert!(target.last_observed_at.is_some());
    assert_eq!(target.drift_finding_count, Some(1));
    assert_eq!(
        target.identity_digest.as_ref().map(|d| d.as_str().to_owned()),
        Some(fp("identity").to_string())
    );
    assert!(w.status.plan.is_some());
}

#[test]
fn dispatched_apply_is_never_recreated() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    let created = w.created.len();
    w.job = JobState::Absent;
    let a = w.step();
    assert!(matches!(a, Action::WriteStatus { .. }), "{a:?}");
    assert!(w.status.active_operation.is_none());
    let p = w.status.pending_observation.as_ref().expect("proof owed");
    assert_eq!(p.outcome, PendingObservationOutcome::OutcomeUnknown);
    for _ in 0..5 {
        if let Action::Dispatch { .. } = w.decide() {
            assert_ne!(
                w.claim().operation_type,
                Op::Apply,
                "an Apply must never be dispatched again"
            );
        }
        w.now = t(100_000);
        w.step();
    }
    assert_eq!(
        w.created.len() - created,
        w.created
            .iter()
            .skip(created)
            .filter(|n| !n.contains("apply"))
            .count()
    );
}

#[test]
fn missing_read_only_job_is_reclaimed_under_a_new_name_not_recreated() {
    let mut w = World::new();
    let first = w.run_until_dispatched(Op::Resolve);
    w.job = JobState::Absent;
    w.step();
    let c = w.claim();
    assert_eq!(c.operation_type, Op::Resolve);
    assert_eq!(c.attempt, 2);
    assert_ne!(c.job_name, first);
    assert_eq!(c.dispatch_started, None);
}

#[test]
fn created_job_is_compared_before_its_uid_is_recorded() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    w.status.active_operation.as_mut().expect("claim").job_uid = None;
    w.job = JobState::Present {
        uid: "foreign".into(),
        matches_intent: false,
        finished: None,
        ttl_set: false,
        stuck: None,
    };
    let a = w.step();
    assert!(
        !matches!(a, Action::AdoptJob { .. }),
        "a Job that differs from the intent is never adopted"
    );
    assert_eq!(w.claim().attempt, 2);
    w.run_until_dispatched(Op::Resolve);
    w.status.active_operation.as_mut().expect("claim").job_uid = None;
    w.job = JobState::Present {
        uid: "ours".into(),
        matches_intent: true,
        finished: None,
        ttl_set: false,
        stuck: None,
    };
    let Action::AdoptJob { status } = w.decide() else {
        panic!("a matching Job is adopted")
    };
    assert_eq!(
        status.active_operation.and_then(|c| c.job_uid).as_deref(),
        Some("ours")
    );
}

#[test]
fn result_must_name_the_claimed_operation_id() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    let mut p = w.success();
    p.operation_id = Some(OperationId::new("sha256:ffff").expect("id"));
    w.finish(p);
    w.step(); // TTL
    w.step();
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    assert!(
        w.status.source.is_none(),
        "nothing from a foreign result is recorded"
    );
}

#[test]
fn result_with_another_target_identity_is_refused() {
    let mut w = World::new();
    // The first cycle's Plan learns the identity; the next cycle's is bound to it.
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, World::plan_none);
    w.now = t(601);
    w.complete(Op::Resolve, World::success);
    w.run_until_dispatched(Op::Plan);
    assert!(w.claim().target_identity_digest.is_some());
    let mut p = w.plan_none();
    p.target_identity_digest = Some(fp("another-database"));
    w.finish(p);
    w.step();
    w.step();
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    assert_eq!(
        w.status
            .target
            .as_ref()
            .and_then(|t| t.identity_digest.as_ref())
            .map(|d| d.as_str().to_owned()),
        Some(fp("identity").to_string()),
        "nothing of the other database is recorded"
    );
}

#[test]
fn runner_protocol_mismatch_is_reported_by_its_reason() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    let mut p = w.success();
    p.protocol_version += 1;
    w.finish(p);
    w.step();
    w.step();
    let ready = crate::conditions::get(&w.status.conditions, ConditionType::Ready).expect("Ready");
    assert_eq!(ready.reason, "RunnerProtocolMismatch");
}

#[test]
fn result_across_lease_epoch_change_is_discarded() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.run_until_dispatched(Op::Plan);
    w.status
        .active_operation
        .as_mut()
        .expect("claim")
        .lease_continuity_lost = Some(true);
    let p = w.plan_changes("CREATE TABLE t (id int);", false);
    w.finish(p);
    let a = w.step();
    assert!(
        !matches!(a, Action::PublishAndRecord { .. }),
        "a result across an epoch change is never read"
    );
    assert!(w.status.plan.is_none());
    assert_eq!(w.claim().attempt, 2, "the Plan is re-run under a fresh claim");
}

#[test]
fn an_apply_dispatched_under_a_retired_binding_is_unknown_and_never_replayed() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    // The upgrade: a new manager under a new epoch finds the Apply it did not dispatch.
    w.binding.epoch = ptah_api::shared::Epoch::parse("v1-fedcba9876543210fedcba9876543210").expect("epoch");
    let p = w.success();
    w.finish(p);
    assert_eq!(w.step(), Action::ScheduleJobCleanup);
    let a = w.step();
    assert!(
        matches!(&a, Action::WriteStatus { event: Some(e), .. } if e.reason == "ApplyOutcomeUnknown"),
        "an Event says the outcome is unknown: {a:?}"
    );
    assert_eq!(
        w.status.pending_observation.as_ref().map(|p| p.outcome),
        Some(PendingObservationOutcome::OutcomeUnknown),
        "a success reported across the binding change is not believed"
    );
    assert!(w.status.active_operation.is_none());
    let applies = w.created.iter().filter(|j| j.contains("apply")).count();
    assert_eq!(applies, 1, "the Apply Job was created once: {:?}", w.created);
}

#[test]
fn more_than_one_pod_makes_an_apply_unknown() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    w.end(crate::schema::Finished::Failed);
    w.result = ResultRead::PodCount(2);
    w.step();
    let pending = w.status.pending_observation.clone().expect("proof owed");
    assert_eq!(pending.outcome, PendingObservationOutcome::OutcomeUnknown);
    // No frame says the Pods stopped: one may still run until the execution deadline.
    let after = pending.observe_after.expect("observe after").0;
    assert!(
        after > w.now,
        "the proof waits out the execution deadline and grace"
    );
    assert!(matches!(w.step(), Action::Wait { .. }));
    assert!(
        w.status.active_operation.is_none(),
        "no Job is claimed before then"
    );
}

/// The main container has exited but the Pod is not terminal yet: a log without a frame may
/// still be flushing, so the Apply waits instead of being recorded as unknown; once the Pod is
/// terminal the same reading is final.
#[test]
fn an_apply_read_before_its_pod_is_terminal_waits_for_its_frame() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    w.end(crate::schema::Finished::Exited);
    w.result = ResultRead::NoFrame("no frame in the log".into());
    assert!(matches!(w.step(), Action::Wait { .. }));
    assert!(w.status.active_operation.is_some());
    assert!(w.status.pending_observation.is_none());
    w.result = ResultRead::PodCount(0);
    assert!(matches!(w.step(), Action::Wait { .. }));
    w.end(crate::schema::Finished::Failed);
    w.result = ResultRead::NoFrame("no frame in the log".into());
    w.step();
    assert_eq!(
        w.status.pending_observation.as_ref().map(|p| p.outcome),
        Some(PendingObservationOutcome::OutcomeUnknown)
    );
}

/// A frame read as soon as the main container exited settles the claim like one read later.
#[test]
fn a_frame_read_once_the_main_container_exited_settles_the_claim() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    let p = w.success();
    w.finish(p);
    if let JobState::Present { finished, .. } = &mut w.job {
        *finished = Some(crate::schema::Finished::Exited);
    }
    assert_eq!(w.step(), Action::ScheduleJobCleanup);
    w.step();
    assert!(w.status.active_operation.is_none());
    assert!(w.status.source.as_ref().is_some_and(|s| s.resolved_at.is_some()));
}

#[test]
fn finished_job_gets_its_cleanup_ttl_before_the_claim_is_settled() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    let p = w.success();
    w.finish(p);
    assert_eq!(w.step(), Action::ScheduleJobCleanup);
    assert!(w.status.active_operation.is_some());
    w.step();
    assert!(w.status.active_operation.is_none());
}

#[test]
fn lease_is_released_only_after_the_durable_write() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.run_until_dispatched(Op::Plan);
    let p = w.plan_none();
    w.finish(p);
    w.step();
    let a = w.step();
    let Action::WriteStatus { status, .. } = a else {
        panic!("settle first: {a:?}")
    };
    assert!(status.active_operation.is_none());
    assert!(
        status.pending_lock_release.is_some(),
        "the release is staged in the settling write"
    );
    assert!(matches!(w.decide(), Action::ReleaseLease { .. }));
}

#[test]
fn pending_lock_release_is_retried_first() {
    let mut w = World::new();
    w.status.pending_lock_release = Some(ptah_api::shared::PendingLockRelease {
        coordination_digest: digest("realm"),
        operation_id: digest("op"),
        lease_duration_seconds: 60,
        lease_epoch: w.binding.epoch.clone(),
    });
    w.meta.has_finalizer = false;
    w.meta.deleting = true;
    let Action::ReleaseLease { holder, .. } = w.decide() else {
        panic!("release first")
    };
    assert_eq!(
        holder,
        ptah_targetlock::holder_identity("uid-orders", digest("op").as_str())
    );
}

#[test]
fn failed_read_only_operation_waits_for_the_retry_interval() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    let mut p = w.success();
    p.artifact = None;
    p.child_exit_code = 1;
    p.error = Some(ResultError {
        code: ErrorCode::ChildFailed,
        child_code: None,
        message: "registry unreachable".into(),
    });
    w.finish(p);
    w.step();
    w.step();
    assert_eq!(w.status.phase, Some(SchemaPhase::Failed));
    let Action::Wait { after, .. } = w.decide() else {
        panic!("waits")
    };
    assert_eq!(after.as_secs(), 30, "failureRetryInterval defaults to 30s");
    w.now = t(31);
    w.step();
    assert_eq!(w.claim().operation_type, Op::Resolve);
}

#[test]
fn changed_inputs_discard_an_undispatched_read_only_claim() {
    let mut w = World::new();
    w.step();
    assert_eq!(w.claim().operation_type, Op::Resolve);
    w.spec.desired.oci_ref = "oci://registry.test/shop/orders:v2".into();
    let a = w.step();
    assert!(matches!(a, Action::WriteStatus { .. }));
    assert!(w.status.active_operation.is_none());
    assert!(w.created.is_empty());
}

#[test]
fn changed_inputs_never_discard_a_dispatched_apply() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    w.spec.policy.exclude = vec!["public.other".into()];
    w.meta.generation = 2;
    let a = w.step();
    assert!(
        matches!(a, Action::Wait { renew: Some(_), .. }),
        "the running Apply is supervised: {a:?}"
    );
    assert_eq!(w.claim().operation_type, Op::Apply);
}
