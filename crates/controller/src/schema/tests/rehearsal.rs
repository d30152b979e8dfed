//! A plan's rehearsal on the dev database: recorded with the plan, and only a passed one lets
//! the plan be approved or applied.

use ptah_api::{
    conditions::ConditionType,
    schema::{RehearsalOutcome, SchemaOperationType as Op, SchemaPhase},
};
use ptah_dataplane::{RehearsalOutcome as Reported, RehearsalResult};

use super::{
    gates::{reason, settle},
    world::{World, spec},
};
use crate::conditions::get;

fn rehearsal(outcome: Reported, failed_statement: Option<u64>, reason: &str) -> RehearsalResult {
    RehearsalResult {
        outcome,
        statement_millis: vec![4, 9],
        failed_statement,
        reason: (!reason.is_empty()).then(|| reason.to_owned()),
        restored: true,
    }
}

/// A world under `policy` whose Plan reported `rehearsed`.
fn planned(policy: &str, dev: bool, rehearsed: Option<RehearsalResult>) -> World {
    let mut w = World::new();
    w.spec = spec(policy);
    if dev {
        w.spec.dev = Some(
            serde_json::from_value(serde_json::json!({"urlFrom": {"name": "dev", "key": "url"}}))
                .expect("dev"),
        );
    }
    w.complete(Op::Resolve, World::success);
    w.complete(Op::Plan, |w| {
        let mut p = w.plan_of_severity("CREATE TABLE t (id int);", "safe");
        p.rehearsal = rehearsed.clone();
        p
    });
    while w.status.pending_lock_release.is_some() {
        w.step();
    }
    w
}

fn blocked_with(w: &mut World) -> String {
    assert_eq!(settle(w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(w, ConditionType::Ready), "RehearsalFailed");
    assert_eq!(reason(w, ConditionType::ApprovalRequired), "RehearsalFailed");
    assert!(w.created.iter().all(|n| !n.contains("apply")), "{:?}", w.created);
    get(&w.status.conditions, ConditionType::Ready)
        .map(|c| c.message.clone())
        .unwrap_or_default()
}

#[test]
fn a_passed_rehearsal_is_recorded_with_the_plan_and_the_plan_applies() {
    let passed = rehearsal(Reported::Passed, None, "");
    let mut w = planned(r#"{"apply": "Always"}"#, true, Some(passed));
    let r = w
        .status
        .plan
        .as_ref()
        .and_then(|p| p.rehearsal.clone())
        .expect("recorded");
    assert_eq!(r.outcome, RehearsalOutcome::Passed);
    assert_eq!((r.statement_millis, r.total_millis), (vec![4, 9], 13));
    w.run_until_dispatched(Op::Apply);
}

#[test]
fn a_failed_rehearsal_blocks_with_its_statement_and_no_approval_lets_it_through() {
    let failed = rehearsal(Reported::Failed, Some(2), "type \"no_such_type\" does not exist");
    let mut w = planned(r#"{"apply": "OnApproval"}"#, true, Some(failed));
    let m = blocked_with(&mut w);
    assert!(
        m.contains("failed at statement 2") && m.contains("no_such_type"),
        "{m}"
    );
    w.approve("ok");
    assert_eq!(blocked_with(&mut w), m);
    assert!(
        w.status.plan.as_ref().is_some_and(|p| p.approval.is_none()),
        "the approval is not accepted"
    );
}

#[test]
fn a_rehearsal_that_could_not_run_blocks_even_under_always() {
    let inconclusive = rehearsal(Reported::Inconclusive, None, "the dev database holds tables");
    let mut w = planned(r#"{"apply": "Always"}"#, true, Some(inconclusive));
    let m = blocked_with(&mut w);
    assert!(
        m.contains("could not be rehearsed") && m.contains("holds tables"),
        "{m}"
    );
}

#[test]
fn a_dev_database_without_a_rehearsal_blocks_and_no_dev_database_needs_none() {
    let mut w = planned(r#"{"apply": "Always"}"#, true, None);
    assert!(blocked_with(&mut w).contains("was not rehearsed"));
    let mut w = planned(r#"{"apply": "Always"}"#, false, None);
    w.run_until_dispatched(Op::Apply);
}
