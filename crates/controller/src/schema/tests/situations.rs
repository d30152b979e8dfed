//! PtahSchema objects in every situation the health checks distinguish, each driven there by the
//! decision function itself, so the statuses are the ones the manager would write.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ptah_api::{
    PtahSchema,
    schema::{SchemaOperationType as Op, SchemaPhase},
};
use ptah_dataplane::{ErrorCode, ResultError};

use super::world::{World, spec, t};
use crate::{
    health::{Case, Situation},
    schema::Action,
};

/// Steps until the resource waits.
fn settle(w: &mut World) {
    for _ in 0..12 {
        if let Action::Wait { .. } = w.step() {
            return;
        }
    }
    panic!("never came to rest: {:?}", w.status.phase)
}

fn object(w: &World) -> serde_json::Value {
    let schema = PtahSchema {
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
    serde_json::to_value(&schema).expect("a PtahSchema serializes")
}

fn case(situation: Situation, w: &World, phase: Option<SchemaPhase>) -> Case {
    assert_eq!(w.status.phase, phase, "{situation:?}: {:#?}", w.status);
    Case {
        situation,
        kind: "PtahSchema",
        object: object(w),
    }
}

fn in_sync() -> World {
    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    w.approve("alice-approves");
    w.complete(Op::Apply, World::success);
    w.complete(Op::Plan, World::plan_none);
    settle(&mut w);
    w
}

/// One object per situation.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();

    let mut w = World::new();
    w.run_until_dispatched(Op::Resolve);
    out.push(case(Situation::InProgress, &w, Some(SchemaPhase::Resolving)));

    let mut w = World::new();
    w.reach_plan("CREATE TABLE t (id int);", false);
    settle(&mut w);
    out.push(case(
        Situation::AwaitingApproval,
        &w,
        Some(SchemaPhase::AwaitingApproval),
    ));

    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan("DROP TABLE t;", true);
    settle(&mut w);
    out.push(case(Situation::Blocked, &w, Some(SchemaPhase::Blocked)));

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
    settle(&mut w);
    out.push(case(Situation::Failed, &w, Some(SchemaPhase::Failed)));

    let w = in_sync();
    out.push(case(Situation::InSync, &w, Some(SchemaPhase::InSync)));

    let mut w = in_sync();
    w.spec.suspend = true;
    w.meta.generation += 1;
    settle(&mut w);
    out.push(case(Situation::Suspended, &w, Some(SchemaPhase::Suspended)));

    let mut w = in_sync();
    w.meta.generation += 1;
    out.push(case(Situation::SpecChanged, &w, Some(SchemaPhase::InSync)));
    w.step();
    out.push(case(Situation::Replanning, &w, Some(SchemaPhase::Resolving)));

    let mut w = in_sync();
    // Past any interval: the next cycle starts from the recorded times.
    w.now = t(3 * 86_400);
    w.step();
    out.push(case(Situation::Rechecking, &w, Some(SchemaPhase::Resolving)));

    out
}
