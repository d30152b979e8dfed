//! PtahMigration objects in every situation the health checks distinguish, each driven there by
//! the decision function itself, so the statuses are the ones the manager would write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ptah_api::{
    PtahMigration,
    migration::{MigrationOperationType as Op, MigrationPhase},
};

use super::world::World;
use crate::health::{Case, Situation};

fn object(w: &World) -> serde_json::Value {
    let migration = PtahMigration {
        metadata: ObjectMeta {
            name: Some(w.meta.name.clone()),
            namespace: Some(w.meta.namespace.clone()),
            uid: Some(w.meta.uid.clone()),
            generation: Some(w.meta.generation),
            ..ObjectMeta::default()
        },
        spec: w.spec.clone(),
        status: Some(w.status.clone()),
    };
    serde_json::to_value(&migration).expect("a PtahMigration serializes")
}

fn case(situation: Situation, w: &World, phase: Option<MigrationPhase>) -> Case {
    assert_eq!(w.status.phase, phase, "{situation:?}: {:#?}", w.status);
    Case {
        situation,
        kind: "PtahMigration",
        object: object(w),
    }
}

fn in_sync() -> World {
    let mut w = World::new();
    w.pending = Vec::new();
    w.current = Some(7);
    w.drive_to_approval();
    w
}

/// To a dispatched and adopted Apply of three pending migrations.
fn applying() -> World {
    let mut w = World::new();
    w.drive_to_approval();
    w.approve("alice");
    w.run_until_dispatched(Op::Apply);
    w.step();
    w
}

/// One object per situation.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();

    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    out.push(case(Situation::InProgress, &w, Some(MigrationPhase::Resolving)));

    let mut w = World::new();
    w.drive_to_approval();
    out.push(case(
        Situation::AwaitingApproval,
        &w,
        Some(MigrationPhase::AwaitingApproval),
    ));

    // A dirty history row: only a person can clean it up.
    let mut w = World::new();
    w.complete(Op::Resolve);
    w.complete(Op::Verify);
    w.complete_with(Op::History, |w| {
        let mut p = w.success();
        if let Some(h) = p.migration_history.as_mut() {
            h.dirty = true;
        }
        p
    });
    w.settle();
    out.push(case(Situation::Blocked, &w, Some(MigrationPhase::Blocked)));

    // The executor refused the sequence before any SQL ran.
    let mut w = applying();
    let mut p = w.success();
    p.migration_run = None;
    p.mutation_started = Some(false);
    p.uncertain = Some(false);
    w.finish(p);
    w.step();
    w.step();
    out.push(case(Situation::Failed, &w, Some(MigrationPhase::Failed)));

    let w = in_sync();
    out.push(case(Situation::InSync, &w, Some(MigrationPhase::InSync)));

    let mut w = in_sync();
    w.spec.suspend = true;
    w.meta.generation += 1;
    w.settle();
    out.push(case(Situation::Suspended, &w, Some(MigrationPhase::Suspended)));

    let mut w = in_sync();
    w.meta.generation += 1;
    out.push(case(Situation::SpecChanged, &w, Some(MigrationPhase::InSync)));
    w.step();
    out.push(case(Situation::Replanning, &w, Some(MigrationPhase::Resolving)));

    let mut w = in_sync();
    w.now = w.status.next_reconciliation_time.as_ref().map_or(w.now, |t| t.0)
        + jiff::SignedDuration::from_secs(1);
    w.step();
    out.push(case(Situation::Rechecking, &w, Some(MigrationPhase::Resolving)));

    out
}
