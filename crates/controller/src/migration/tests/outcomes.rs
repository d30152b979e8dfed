//! One test per guarantee about uncertain outcomes, their resolution, suspension and deletion.

use ptah_api::{
    migration::{MigrationOperationType as Op, MigrationPhase, RunOutcome, UnresolvedRunOutcome},
    shared::Epoch,
    shared::ImmutableObjectReference,
};
use ptah_dataplane::MigrationOutcome;

use super::world::{World, fp};
use crate::{
    migration::{AcknowledgmentView, Action},
    operation::JobState,
};

/// To a dispatched and adopted Apply.
fn applying() -> World {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.run_until_dispatched(Op::Apply);
    w.step(); // adopt
    w
}

fn partial(w: &World) -> ptah_dataplane::ResultPayload {
    let mut p = w.success();
    p.migration_run = Some(w.run(MigrationOutcome::Partial));
    p
}

/// Drives the world to rest, completing every claim it makes on the way.
fn rest(w: &mut World) {
    for _ in 0..10 {
        w.settle();
        let Some(c) = w.status.active_operation.as_ref() else {
            return;
        };
        if c.dispatch_started != Some(true) {
            let op = c.operation_type;
            w.complete(op);
            continue;
        }
        if c.job_uid.is_none() {
            w.step();
        }
        let p = w.success();
        w.finish(p);
    }
    panic!("never rested");
}

/// To an unresolved Partial run, after the fresh reading it triggers.
fn unresolved() -> World {
    let mut w = applying();
    let p = partial(&w);
    w.finish(p);
    rest(&mut w);
    assert!(w.status.unresolved_run.is_some(), "{:#?}", w.status);
    w
}

/// Past the next interval.
fn next_interval(w: &mut World) {
    w.now = w.status.next_reconciliation_time.as_ref().map_or(w.now, |t| t.0)
        + jiff::SignedDuration::from_secs(1);
}

fn ack(w: &mut World, operation: &ptah_api::shared::Sha256Digest) {
    w.acknowledgments.push(AcknowledgmentView {
        object: ImmutableObjectReference {
            name: "ack".into(),
            uid: "uid-ack".into(),
        },
        migration_uid: w.meta.uid.clone(),
        operation_id: operation.clone(),
        acknowledged_by: Some(ptah_api::shared::Approver {
            username: "bob".into(),
            uid: None,
            groups: Vec::new(),
        }),
        consumed: false,
        stale: false,
        created: Some(w.now),
    });
}

#[test]
fn partial_outcome_blocks_every_later_apply() {
    let mut w = unresolved();
    assert_eq!(
        w.status.unresolved_run.as_ref().map(|r| r.outcome),
        Some(UnresolvedRunOutcome::Partial)
    );
    assert_eq!(
        w.status.last_run.as_ref().map(|r| r.outcome),
        Some(RunOutcome::Partial)
    );
    assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
    // An approval of the run's plan cannot authorize another Apply either.
    let plan = w
        .status
        .unresolved_run
        .clone()
        .and_then(|r| r.plan_ref)
        .expect("the run's plan");
    w.approvals.push(crate::migration::ApprovalView {
        object: ImmutableObjectReference {
            name: "carol".into(),
            uid: "uid-carol".into(),
        },
        migration_uid: w.meta.uid.clone(),
        plan,
        plan_fingerprint: super::world::digest("the old plan"),
        history_fingerprint: None,
        approver: None,
        consumed: false,
        stale: false,
        created: Some(w.now),
    });
    rest(&mut w);
    assert_eq!(w.jobs_of(Op::Apply), 1, "never retried");
    assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
}

#[test]
fn partial_outcome_is_never_retried_across_intervals() {
    let mut w = unresolved();
    let readings = w.jobs_of(Op::History);
    for _ in 0..3 {
        next_interval(&mut w);
        rest(&mut w);
        assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
    }
    assert!(
        w.jobs_of(Op::History) > readings,
        "each interval reads the history again"
    );
    assert_eq!(w.jobs_of(Op::Apply), 1);
    assert!(w.status.unresolved_run.is_some());
}

#[test]
fn an_unresolved_run_stays_blocked_while_the_history_is_read_again() {
    let mut w = unresolved();
    let readings = w.jobs_of(Op::History);
    next_interval(&mut w);
    // Every status the next interval writes, step by step, until it rests.
    for _ in 0..60 {
        w.step();
        assert_eq!(w.status.phase, Some(MigrationPhase::Blocked), "{:#?}", w.status);
        let Some(c) = w.status.active_operation.as_ref() else {
            if w.jobs_of(Op::History) > readings {
                return;
            }
            continue;
        };
        if c.dispatch_started == Some(true) && c.job_uid.is_some() {
            let p = w.success();
            w.finish(p);
        }
    }
    panic!("the history was never read again");
}

/// Past the Apply's execution deadline and grace.
fn past_deadline(w: &mut World) {
    let end = w.claim().execution_not_after.clone().expect("deadline").0;
    w.now = end + jiff::SignedDuration::from_secs(31);
}

#[test]
fn unknown_outcome_when_the_apply_job_vanishes() {
    let mut w = applying();
    w.job = JobState::Absent;
    past_deadline(&mut w);
    w.step();
    assert_eq!(
        w.status.unresolved_run.as_ref().map(|r| r.outcome),
        Some(UnresolvedRunOutcome::Unknown)
    );
}

#[test]
fn a_vanished_apply_keeps_its_lease_until_its_pod_can_no_longer_write() {
    let mut w = applying();
    w.job = JobState::Absent;
    let a = w.step();
    assert!(matches!(a, Action::Wait { renew: Some(_), .. }), "{a:?}");
    assert!(w.status.active_operation.is_some() && w.status.pending_lock_release.is_none());
    past_deadline(&mut w);
    w.step();
    assert!(w.status.unresolved_run.is_some() && w.status.pending_lock_release.is_some());
}

#[test]
fn migration_apply_is_never_recreated_once_dispatched() {
    let mut w = applying();
    w.job = JobState::Absent;
    past_deadline(&mut w);
    w.settle();
    w.settle();
    assert_eq!(w.jobs_of(Op::Apply), 1);
}

#[test]
fn result_for_another_operation_id_is_unresolved_not_believed() {
    let mut w = applying();
    let mut p = w.success();
    p.operation_id = Some(ptah_dataplane::OperationId::new("sha256:0000").expect("id"));
    w.finish(p);
    w.step(); // TTL
    w.step();
    assert_eq!(
        w.status.unresolved_run.as_ref().map(|r| r.outcome),
        Some(UnresolvedRunOutcome::Unknown)
    );
    assert_ne!(
        w.status.last_run.as_ref().map(|r| r.outcome),
        Some(RunOutcome::Applied)
    );
}

#[test]
fn sequence_divergence_refused_before_sql_is_failed_not_unresolved() {
    let mut w = applying();
    let mut p = w.success();
    p.migration_run = None;
    p.mutation_started = Some(false);
    p.uncertain = Some(false);
    w.finish(p);
    w.step();
    w.step();
    assert!(w.status.unresolved_run.is_none());
    assert_eq!(w.status.phase, Some(MigrationPhase::Failed));
    assert_eq!(
        w.status.last_run.as_ref().map(|r| r.outcome),
        Some(RunOutcome::Failed)
    );
}

#[test]
fn lease_is_released_only_after_the_outcome_is_written() {
    let mut w = applying();
    let p = w.success();
    w.finish(p);
    w.step(); // TTL
    let a = w.step();
    let Action::WriteStatus { status, .. } = &a else {
        panic!("the outcome first: {a:?}");
    };
    assert!(status.active_operation.is_none() && status.pending_lock_release.is_some());
    assert!(matches!(w.step(), Action::ReleaseLease { .. }));
    assert!(w.status.pending_lock_release.is_none());
}

#[test]
fn acknowledgment_for_another_operation_is_stale() {
    let mut w = unresolved();
    ack(&mut w, &super::world::digest("another operation"));
    let a = w.step();
    assert!(
        matches!(&a, Action::MarkAcknowledgments { stale, .. } if stale.len() == 1),
        "{a:?}"
    );
    w.settle();
    assert!(w.status.unresolved_run.is_some());
}

#[test]
fn acknowledgment_naming_the_run_resolves_it_and_is_consumed() {
    let mut w = unresolved();
    let id = w.status.unresolved_run.clone().expect("run").operation_id;
    ack(&mut w, &id);
    let a = w.step();
    assert!(
        matches!(&a, Action::MarkAcknowledgments { consumed, .. } if consumed.len() == 1),
        "consumed first: {a:?}"
    );
    w.step();
    assert!(w.status.unresolved_run.is_none());
    let resolved = w.status.resolved_run.clone().expect("resolved");
    assert_eq!(resolved.operation_id, id);
    assert_eq!(resolved.acknowledged_by.map(|a| a.username), Some("bob".into()));
    // The next reading plans again.
    w.step();
    assert_eq!(w.claim().operation_type, Op::History);
    w.complete(Op::History);
    w.settle();
    assert_eq!(w.status.phase, Some(MigrationPhase::AwaitingApproval));
}

#[test]
fn reading_of_the_same_database_with_nothing_pending_resolves_the_run() {
    let mut w = unresolved();
    w.pending = Vec::new();
    w.current = Some(3);
    next_interval(&mut w);
    rest(&mut w);
    assert!(w.status.unresolved_run.is_none());
    assert!(
        w.status
            .resolved_run
            .as_ref()
            .is_some_and(|r| r.acknowledgment_ref.is_none())
    );
    assert_eq!(w.status.phase, Some(MigrationPhase::InSync));
}

#[test]
fn reading_of_another_database_does_not_resolve_the_run() {
    let mut w = unresolved();
    w.pending = Vec::new();
    next_interval(&mut w);
    w.complete(Op::Resolve);
    w.complete(Op::Verify);
    w.complete_with(Op::History, |w| {
        let mut p = w.success();
        p.target_identity_digest = Some(fp("another database"));
        p
    });
    assert!(w.status.unresolved_run.is_some());
}

#[test]
fn suspension_with_a_dispatched_apply_records_an_unresolved_run() {
    let mut w = applying();
    w.spec.suspend = true;
    w.meta.generation = 2;
    assert!(
        matches!(w.step(), Action::Wait { renew: Some(_), .. }),
        "the running Apply keeps its Lease"
    );
    let p = w.success();
    w.finish(p);
    w.step();
    w.step();
    let run = w.status.unresolved_run.clone().expect("unresolved");
    assert_eq!(run.outcome, UnresolvedRunOutcome::Unknown);
    assert_ne!(
        w.status.last_run.as_ref().map(|r| r.outcome),
        Some(RunOutcome::Applied),
        "its result is not read"
    );
}

#[test]
fn suspension_before_dispatch_discards_the_claim_and_creates_nothing() {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.step();
    assert_eq!(w.claim().operation_type, Op::Apply);
    w.spec.suspend = true;
    w.settle();
    assert_eq!(w.jobs_of(Op::Apply), 0);
    assert_eq!(w.status.phase, Some(MigrationPhase::Suspended));
}

#[test]
fn binding_change_with_a_dispatched_apply_records_an_unresolved_run() {
    let mut w = applying();
    w.binding.epoch = Epoch::parse("v1-ffffffffffffffffffffffffffffffff").expect("epoch");
    let p = w.success();
    w.finish(p);
    w.step();
    w.step();
    assert_eq!(
        w.status.unresolved_run.as_ref().map(|r| r.outcome),
        Some(UnresolvedRunOutcome::Unknown)
    );
}

#[test]
fn deleting_with_an_unresolved_run_announces_its_discard() {
    let mut w = unresolved();
    w.meta.deleting = true;
    w.settle();
    let a = w.step();
    let found = matches!(&a, Action::WriteStatus { event: Some(e), .. } if e.reason == "UnresolvedRunDiscarded")
        || w.status.unresolved_run.is_none();
    assert!(found, "{a:?}");
    w.settle();
    assert!(!w.meta.has_finalizer);
}

#[test]
fn deletion_waits_for_a_dispatched_apply() {
    let mut w = applying();
    w.meta.deleting = true;
    assert!(matches!(w.step(), Action::Wait { .. }));
    assert!(w.meta.has_finalizer, "a dispatched Apply is never abandoned");
    assert_eq!(w.jobs_of(Op::Apply), 1);
}

#[test]
fn lost_history_job_is_reclaimed_under_a_new_name() {
    let mut w = World::new();
    w.complete(Op::Resolve);
    w.complete(Op::Verify);
    w.run_until_dispatched(Op::History);
    let first = w.claim().job_name.clone();
    w.job = JobState::Absent;
    w.step();
    assert_eq!(w.claim().operation_type, Op::History);
    assert_ne!(w.claim().job_name, first);
    assert_eq!(w.claim().attempt, 2);
}
