//! The lifecycle end to end: approval to convergence, proofs, drift, suspend, deletion, epochs.

use ptah_api::{
    conditions::ConditionType,
    schema::{PendingObservationOutcome, SchemaOperationType as Op, SchemaPhase},
    shared::Epoch,
};

use super::world::{World, t};
use crate::{
    conditions::{get, is_true},
    schema::{Action, JobState},
};

fn rest(w: &mut World) -> Option<SchemaPhase> {
    for _ in 0..12 {
        if let Action::Wait { .. } = w.step() {
            return w.status.phase;
        }
    }
    panic!("never came to rest: {:?}", w.status.phase)
}

#[test]
fn approved_plan_is_applied_and_proved_in_sync() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    assert_eq!(rest(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert!(is_true(&w.status.conditions, ConditionType::ApprovalRequired));
    w.approve("alice-approves");
    w.complete(Op::Apply, World::success);
    assert_eq!(w.status.phase, Some(SchemaPhase::VerifyingConvergence));
    assert_eq!(
        w.status.pending_observation.as_ref().map(|p| p.outcome),
        Some(PendingObservationOutcome::ApplySucceeded)
    );
    assert!(
        w.status.applied.is_none(),
        "applied is written only after the proof"
    );
    w.complete(Op::Plan, World::plan_none);
    assert_eq!(w.status.phase, Some(SchemaPhase::InSync));
    assert!(is_true(&w.status.conditions, ConditionType::InSync));
    assert!(w.status.applied.is_some());
    assert!(w.status.pending_observation.is_none());
    assert!(
        matches!(w.decide(), Action::ReleaseLease { .. }),
        "the Apply's Lease is released after the proof"
    );
}

#[test]
fn proof_runs_under_the_apply_lease_holder_and_epoch() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    let apply = w.claim().clone();
    let p = w.success();
    w.finish(p);
    w.step();
    w.step();
    w.step();
    let proof = w.claim().clone();
    assert_eq!(
        proof.operation_type,
        Op::Plan,
        "the proof Plan reads the drift itself"
    );
    assert_eq!(proof.lease_epoch, apply.lease_epoch, "same epoch");
    let Action::Dispatch { .. } = w.decide() else {
        panic!("the proof needs no new Lease")
    };
    assert_eq!(crate::schema::claim::holder_op(&w.observed(), &proof), apply.id);
}

#[test]
fn uncertain_apply_is_proved_not_replayed() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    let mut p = w.success();
    p.uncertain = Some(true);
    p.error = Some(ptah_dataplane::ResultError {
        code: ptah_dataplane::ErrorCode::Terminated,
        child_code: None,
        message: "SIGTERM".into(),
    });
    w.finish(p);
    w.step();
    w.step();
    let pending = w.status.pending_observation.clone().expect("proof owed");
    assert_eq!(pending.outcome, PendingObservationOutcome::OutcomeUnknown);
    let after = pending.observe_after.expect("observe after").0;
    assert_eq!(
        after, w.now,
        "the frame says ptah has exited: the proof need not wait out the execution deadline"
    );
    w.complete(Op::Plan, World::plan_none);
    assert_eq!(w.status.phase, Some(SchemaPhase::InSync));
    let insync = get(&w.status.conditions, ConditionType::InSync).expect("InSync");
    assert_eq!(insync.reason, "ConvergedAfterUnknownOutcome");
    assert!(w.status.applied.is_none(), "an uncertain Apply is not attributed");
    assert_eq!(w.created.iter().filter(|n| n.contains("apply")).count(), 1);
}

#[test]
fn proof_with_changes_publishes_a_new_plan_instead_of_in_sync() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.complete(Op::Apply, World::success);
    w.complete(Op::Plan, |w| w.plan_changes("CREATE TABLE u (id int);", false));
    assert!(w.status.pending_observation.is_none());
    assert!(w.status.plan.is_some());
    assert!(!is_true(&w.status.conditions, ConditionType::InSync));
}

#[test]
fn no_changes_plan_is_the_proof_of_in_sync() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, World::plan_none);
    assert_eq!(w.status.phase, Some(SchemaPhase::InSync));
    assert!(w.status.plan.is_none());
    assert_eq!(rest(&mut w), Some(SchemaPhase::InSync));
}

#[test]
fn in_sync_re_resolves_after_the_interval() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, World::plan_none);
    rest(&mut w);
    let Action::Wait { after, .. } = w.decide() else {
        panic!("waits")
    };
    assert_eq!(after.as_secs(), 600, "interval defaults to 10m");
    w.now = t(601);
    w.step();
    assert_eq!(w.claim().operation_type, Op::Resolve);
}

#[test]
fn out_of_band_change_becomes_drift_and_a_new_plan() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, World::plan_none);
    w.now = t(601);
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, |w| {
        w.plan_changes("ALTER TABLE t ADD COLUMN c int;", false)
    });
    assert!(is_true(&w.status.conditions, ConditionType::DriftDetected));
    assert!(w.status.plan.is_some());
    assert_eq!(rest(&mut w), Some(SchemaPhase::AwaitingApproval));
}

#[test]
fn later_operations_use_the_digest_not_the_tag() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.step();
    let c = w.claim();
    assert_eq!(c.operation_type, Op::Plan);
    let source = c.source.as_ref().expect("source");
    assert!(
        source.resolved_reference.contains("@sha256:"),
        "{}",
        source.resolved_reference
    );
    assert_eq!(
        source.digest.as_str(),
        "sha256:1111111111111111111111111111111111111111111111111111111111111111"
    );
}

#[test]
fn suspend_creates_no_new_jobs() {
    let mut w = World::new();
    w.spec.suspend = true;
    assert_eq!(rest(&mut w), Some(SchemaPhase::Suspended));
    assert!(w.created.is_empty());
    assert!(w.status.active_operation.is_none());
}

#[test]
fn suspend_keeps_supervising_a_dispatched_apply() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.run_until_dispatched(Op::Apply);
    w.spec.suspend = true;
    assert!(
        matches!(w.step(), Action::Wait { renew: Some(_), .. }),
        "the Lease is kept renewed"
    );
    let p = w.success();
    w.finish(p);
    w.step();
    w.step();
    assert!(
        w.status.pending_observation.is_some(),
        "the result is recorded while suspended"
    );
    let jobs = w.created.len();
    rest(&mut w);
    assert_eq!(w.created.len(), jobs, "the proof waits for resume");
}

#[test]
fn deletion_waits_for_the_active_operation() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    w.meta.deleting = true;
    assert!(matches!(w.step(), Action::Wait { .. }));
    assert!(w.meta.has_finalizer);
    let p = w.success();
    w.finish(p);
    w.step();
    w.step();
    assert_eq!(w.step(), Action::RemoveFinalizer);
}

#[test]
fn deletion_drops_an_undispatched_claim_and_never_dispatches() {
    let mut w = World::new();
    w.step();
    w.meta.deleting = true;
    for _ in 0..4 {
        let a = w.step();
        assert!(!matches!(a, Action::Dispatch { .. }));
    }
    assert!(!w.meta.has_finalizer);
    assert!(w.created.is_empty());
}

#[test]
fn deletion_keeps_the_finalizer_while_proof_is_owed() {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.complete(Op::Apply, World::success);
    w.meta.deleting = true;
    let a = w.step();
    assert_ne!(a, Action::RemoveFinalizer);
    assert!(w.meta.has_finalizer);
    assert_eq!(
        w.claim().operation_type,
        Op::Plan,
        "the read-only proof still runs, then releases the realm"
    );
}

#[test]
fn execution_binding_change_retires_the_plan() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    rest(&mut w);
    w.approve("a");
    w.binding.epoch = Epoch::parse("v1-abcdefabcdefabcdefabcdefabcdefab").expect("epoch");
    w.step();
    assert!(
        w.status.plan.is_none(),
        "the plan was computed under the old epoch"
    );
    assert_eq!(
        w.status.execution_binding.as_ref().and_then(|b| b.epoch.clone()),
        Some(w.binding.epoch.clone())
    );
    let a = w.step();
    assert!(
        matches!(a, Action::WriteStatus { .. } | Action::MarkApprovals { .. }),
        "{a:?}"
    );
}

#[test]
fn pod_admission_refusal_is_reported_on_progressing() {
    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    if let JobState::Present { stuck, .. } = &mut w.job {
        *stuck = Some(crate::operation::Stuck {
            pod: "p".into(),
            container: "ptah".into(),
            reason: "CreateContainerError".into(),
            message: "pods \"x\" is forbidden: exceeded quota".into(),
        });
    }
    w.step();
    let c = get(&w.status.conditions, ConditionType::Progressing).expect("Progressing");
    assert_eq!(c.reason, "PodAdmissionRefused");
    assert!(c.message.contains("exceeded quota"));
}

#[test]
fn status_never_carries_the_plan_sql() {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE secret_payroll (salary int);", false);
    let text = serde_json::to_string(&w.status).expect("json");
    assert!(!text.contains("secret_payroll"), "{text}");
}

#[test]
fn a_cycle_longer_than_the_interval_still_reaches_its_plan() {
    let mut w = World::new();
    w.spec.interval = ptah_api::shared::GoDuration::parse("10s").expect("duration");
    // A Resolve without a verdict: the cycle keeps a Verify of its own.
    w.complete(Op::Resolve, World::resolved_only);
    w.now = t(30);
    w.complete(Op::Verify, World::success);
    w.now = t(60);
    w.step();
    assert_eq!(
        w.claim().operation_type,
        Op::Plan,
        "the interval does not interrupt a cycle"
    );
}

#[test]
fn a_later_cycle_never_reuses_an_earlier_job_name() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, World::plan_none);
    let first = w.created[0].clone();
    w.now = t(601);
    w.run_until_dispatched(Op::Resolve);
    assert_ne!(w.claim().job_name, first, "same inputs, new claim, new Job");
}

#[test]
fn every_executor_drift_category_reaches_status() {
    let mut w = World::new();
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, |w| {
        let mut p = w.plan_none();
        if let Some(d) = p.drift.as_mut() {
            d.drift = true;
            d.findings = [
                "rows_inserted",
                "indexes_modified",
                "constraints_modified",
                "enums_modified",
                "namespaces_added",
                "table_comments_modified",
            ]
            .iter()
            .map(|c| ptah_dataplane::DriftFinding {
                category: (*c).into(),
                count: 2,
                severity: "safe".into(),
            })
            .collect();
            d.finding_count = 6;
        }
        p
    });
    let target = w.status.target.clone().expect("target");
    assert_eq!(
        target.drift_findings.len(),
        6,
        "none dropped: {:?}",
        target.drift_findings
    );
    assert_eq!(target.drift_findings_truncated, Some(false));
    assert_eq!(target.drift_findings[0].category.as_str(), "data_rows_inserted");
}
