//! One test per guarantee of the PtahMigration lifecycle up to and including the Apply.

use ptah_api::{
    conditions::{ConditionType, Reason},
    migration::{MigrationOperationType as Op, MigrationPhase},
};

use super::world::{World, spec};
use crate::{
    conditions,
    migration::{Action, PlanState, intent, plan},
};

fn blocked_reason(w: &World) -> Option<String> {
    conditions::get(&w.status.conditions, ConditionType::Blocked)
        .filter(|c| c.status == "True")
        .map(|c| c.reason.clone())
}

#[test]
fn finalizer_precedes_any_claim() {
    let mut w = World::new();
    w.meta.has_finalizer = false;
    assert_eq!(w.step(), Action::AddFinalizer);
    assert!(w.status.active_operation.is_none());
}

#[test]
fn claim_is_persisted_before_any_job() {
    let mut w = World::new();
    let a = w.step();
    assert!(matches!(a, Action::WriteStatus { .. }), "{a:?}");
    assert_eq!(w.claim().operation_type, Op::Resolve);
    assert!(w.created.is_empty(), "no Job before the claim is durable");
    assert!(matches!(w.step(), Action::Dispatch { .. }));
    assert_eq!(w.created.len(), 1);
}

#[test]
fn resolve_verify_history_run_in_order() {
    let mut w = World::new();
    w.drive_to_approval();
    let ops: Vec<Op> = w.created.iter().map(|(_, o)| *o).collect();
    assert_eq!(ops, vec![Op::Resolve, Op::Verify, Op::History]);
}

#[test]
fn history_is_read_without_a_lease() {
    let mut w = World::new();
    w.complete(Op::Resolve);
    w.complete(Op::Verify);
    w.step();
    assert_eq!(w.claim().operation_type, Op::History);
    assert!(w.claim().lease_duration_seconds.is_none());
    assert!(
        matches!(w.decide(), Action::Dispatch { .. }),
        "no AcquireLease for a History"
    );
}

#[test]
fn pending_history_publishes_a_plan_with_the_executors_sequence() {
    let mut w = World::new();
    w.pending = vec![3, 5, 8];
    w.drive_to_approval();
    let p = w.observed().plan_spec().cloned().expect("a plan");
    let versions: Vec<i64> = p.migrations.iter().map(|m| m.version).collect();
    assert_eq!(
        versions,
        vec![3, 5, 8],
        "the executor's own selection, not a count"
    );
    assert_eq!(p.migrations[0].checksum, super::world::step(3).checksum);
    assert!(
        w.status
            .plan
            .as_ref()
            .is_some_and(|r| r.name.starts_with("ptah-mplan-"))
    );
}

#[test]
fn plan_binds_history_fingerprint_and_current_version() {
    let mut w = World::new();
    w.current = Some(2);
    w.pending = vec![3];
    w.drive_to_approval();
    let p = w.observed().plan_spec().cloned().expect("a plan");
    let h = w.status.history.clone().expect("history");
    assert_eq!(p.history_fingerprint, h.fingerprint);
    assert_eq!(p.current_version, 2);
    assert_eq!(p.binding.target_identity_digest, h.target_identity_digest);
    assert_eq!(p.binding.execution_binding_id, w.binding.epoch);
}

#[test]
fn on_approval_waits_for_an_exact_approval() {
    let mut w = World::new();
    w.drive_to_approval();
    assert_eq!(w.status.phase, Some(MigrationPhase::AwaitingApproval));
    assert!(conditions::is_true(
        &w.status.conditions,
        ConditionType::ApprovalRequired
    ));
    assert_eq!(w.jobs_of(Op::Apply), 0);
    assert!(matches!(w.settle(), Action::Wait { .. }));
    assert_eq!(w.jobs_of(Op::Apply), 0);
}

#[test]
fn approval_for_another_plan_is_marked_stale() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.approvals[0].plan.uid = "another-plan".into();
    let a = w.step();
    assert!(
        matches!(&a, Action::MarkApprovals { stale, .. } if stale.len() == 1),
        "{a:?}"
    );
    w.settle();
    assert_eq!(w.jobs_of(Op::Apply), 0);
}

#[test]
fn approval_with_stale_history_fingerprint_does_not_authorize() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.approvals[0].history_fingerprint = Some(super::world::digest("another history"));
    w.settle();
    assert_eq!(w.jobs_of(Op::Apply), 0);
    assert_eq!(w.status.phase, Some(MigrationPhase::AwaitingApproval));
}

#[test]
fn exact_approval_claims_the_apply_and_takes_the_lease() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.step();
    assert_eq!(w.claim().operation_type, Op::Apply);
    assert_eq!(
        w.claim().approval_ref.as_ref().map(|a| a.name.as_str()),
        Some("alice")
    );
    let a = w.step();
    assert!(
        matches!(&a, Action::AcquireLease { digest, .. } if *digest == super::world::digest("realm")),
        "{a:?}"
    );
}

#[test]
fn approval_is_consumed_before_dispatch_started() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.step(); // claim
    w.step(); // lease
    let a = w.step();
    assert!(
        matches!(&a, Action::MarkApprovals { consumed, .. } if consumed.len() == 1),
        "{a:?}"
    );
    assert!(
        w.claim().dispatch_started.is_none(),
        "consumed before dispatchStarted"
    );
    assert!(matches!(w.step(), Action::Dispatch { .. }));
}

#[test]
fn consumed_approval_never_authorizes_a_second_dispatch() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.approvals[0].consumed = true;
    w.settle();
    assert_eq!(w.jobs_of(Op::Apply), 0);
}

#[test]
fn never_publishes_and_never_applies() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Never"}"#);
    w.drive_to_approval();
    assert!(
        matches!(w.plan, PlanState::Present(_)),
        "the plan is still published"
    );
    assert_eq!(w.jobs_of(Op::Apply), 0);
    let c = conditions::get(&w.status.conditions, ConditionType::Progressing).expect("progressing");
    assert_eq!(c.reason, Reason::ApplyDisabled.as_str());
}

#[test]
fn apply_passes_the_approved_sequence() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.run_until_dispatched(Op::Apply);
    let p = w.observed().plan_spec().cloned().expect("plan");
    let i = intent::intent(&w.meta, &w.spec, &w.binding, w.claim(), Some(&p)).expect("intent");
    let ptah_workload::OperationInputs::MigrationApply { sequence, .. } = &i.inputs else {
        panic!("not a migration Apply: {:?}", i.inputs);
    };
    let (json, digest) = ptah_dataplane::expected_sequence(&plan::steps(&p)).expect("sequence");
    assert_eq!(sequence.json, json);
    assert_eq!(sequence.digest, digest.to_string());
    let c = w.claim();
    let end = i
        .deadlines
        .execution_not_after
        .expect("a mutating Job carries its deadlines");
    let window = end.as_second() - c.started_at.0.as_second();
    assert!(
        i.deadlines.active_deadline_seconds > window + i.deadlines.termination_grace_period_seconds,
        "Kubernetes's deadline leaves the runner its grace past the window"
    );
}

#[test]
fn applied_run_is_verified_by_a_second_history_reading() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.complete(Op::Apply);
    assert_eq!(w.status.phase, Some(MigrationPhase::VerifyingHistory));
    w.step(); // the release staged with the outcome
    w.step();
    assert_eq!(w.claim().operation_type, Op::History);
    assert_eq!(w.status.phase, Some(MigrationPhase::VerifyingHistory));
}

#[test]
fn second_reading_with_nothing_pending_is_in_sync() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.complete(Op::Apply);
    w.current = Some(3);
    w.pending = Vec::new();
    w.complete(Op::History);
    assert_eq!(w.status.phase, Some(MigrationPhase::InSync));
    assert_eq!(w.status.history.as_ref().and_then(|h| h.current_version), Some(3));
    assert!(conditions::is_true(&w.status.conditions, ConditionType::Ready));
}

fn reading_blocks(edit: impl Fn(&mut ptah_dataplane::MigrationHistoryResult), reason: Reason) {
    let mut w = World::new();
    w.complete(Op::Resolve);
    w.complete(Op::Verify);
    w.complete_with(Op::History, |w| {
        let mut p = w.success();
        if let Some(h) = p.migration_history.as_mut() {
            edit(h);
        }
        p
    });
    w.settle();
    assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
    assert_eq!(blocked_reason(&w).as_deref(), Some(reason.as_str()));
    assert!(w.status.plan.is_none(), "no plan while the history blocks");
    assert_eq!(w.jobs_of(Op::Apply), 0);
    assert_eq!(w.jobs_of(Op::History), 1, "no Job beyond History");
}

#[test]
fn history_dirty_blocks_without_a_plan() {
    reading_blocks(|h| h.dirty = true, Reason::HistoryDirty);
}

#[test]
fn history_modified_blocks_without_a_plan() {
    reading_blocks(|h| h.modified_versions = vec![1], Reason::HistoryModified);
}

#[test]
fn history_out_of_order_blocks_without_a_plan() {
    reading_blocks(|h| h.out_of_order_versions = vec![1], Reason::HistoryOutOfOrder);
}

#[test]
fn history_ahead_blocks_without_a_plan() {
    reading_blocks(|h| h.ahead_versions = vec![9], Reason::HistoryAhead);
}

#[test]
fn nothing_pending_is_in_sync_with_no_plan() {
    let mut w = World::new();
    w.pending = Vec::new();
    w.current = Some(7);
    w.drive_to_approval();
    assert_eq!(w.status.phase, Some(MigrationPhase::InSync));
    assert!(w.status.plan.is_none());
}

#[test]
fn realm_conflict_blocks_before_any_job() {
    let mut w = World::new();
    w.realm = crate::operation::Realm::Claimable {
        engine: "mysql",
        coordination_digest: super::world::digest("realm"),
        census: ptah_targetlock::census::CensusVerdict::Conflict { others: 1 },
    };
    w.settle();
    assert!(w.created.is_empty());
    assert_eq!(
        blocked_reason(&w).as_deref(),
        Some(Reason::RealmConflict.as_str())
    );
}

#[test]
fn schema_and_migration_on_one_database_take_turns() {
    // Both kinds lock the realm Lease named by the same coordination digest, under an
    // owner-neutral holder; a shared realm lets both be claimants, the Lease serialises them.
    let mut w = World::new();
    let digest = ptah_targetlock::census::coordination_digest("mysql", "shop", "shop");
    w.realm = crate::operation::Realm::Claimable {
        engine: "mysql",
        coordination_digest: digest.clone(),
        census: ptah_targetlock::census::CensusVerdict::Shared,
    };
    w.drive_to_approval();
    w.approve("alice");
    w.step();
    let a = w.step();
    let Action::AcquireLease {
        digest: locked,
        holder,
        ..
    } = &a
    else {
        panic!("the Apply must take the realm Lease first: {a:?}");
    };
    assert_eq!(
        *locked, digest,
        "the same Lease a PtahSchema Plan or Apply on this database takes"
    );
    assert_eq!(
        *holder,
        ptah_targetlock::holder_identity(&w.meta.uid, w.claim().id.as_str())
    );
}

#[test]
fn a_policy_refusal_as_the_runner_reports_it_blocks_instead_of_failing() {
    let mut w = World::new();
    w.complete(Op::Resolve);
    w.complete_with(Op::Verify, |w| {
        let mut p = w.success();
        p.child_exit_code = 1;
        if let Some(a) = p.artifact.as_mut() {
            a.verification_passed = Some(false);
            a.violated_requirements = vec!["require_signature".into()];
        }
        p.error = Some(ptah_dataplane::ResultError {
            code: ptah_dataplane::ErrorCode::ChildFailed,
            child_code: Some(ptah_dataplane::VERIFICATION_FAILED.into()),
            message: "the artifact violates the verification policy".into(),
        });
        p
    });
    w.settle();
    assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
    let verified =
        conditions::get(&w.status.conditions, ConditionType::ArtifactVerified).expect("ArtifactVerified");
    assert_eq!(verified.reason, Reason::ArtifactUnverified.as_str());
    assert!(
        verified.message.contains("require_signature"),
        "{}",
        verified.message
    );
}
