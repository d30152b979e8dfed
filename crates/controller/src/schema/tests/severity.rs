//! `policy.apply: BySeverity`: a safe plan applies on its own, a warning plan waits for one
//! approval, and a destructive or privilege-changing plan needs an approval and
//! `allowDestructive`.

use ptah_api::{
    conditions::ConditionType,
    schema::{SchemaOperationType as Op, SchemaPhase},
    schemaplan::PrivilegeChangeKind,
    shared::PlanSeverity,
};

use super::{
    gates::{reason, settle},
    world::{World, spec},
};
use crate::conditions::get;

fn message(w: &World, t: ConditionType) -> String {
    get(&w.status.conditions, t)
        .map(|c| c.message.clone())
        .unwrap_or_default()
}

fn by_severity(extra: &str) -> World {
    let mut w = World::new();
    w.spec = spec(&format!(r#"{{"apply": "BySeverity"{extra}}}"#));
    w
}

#[test]
fn a_safe_plan_applies_on_its_own() {
    let mut w = by_severity("");
    w.reach_plan_of_severity("CREATE TABLE t (id int);", "safe");
    assert_eq!(
        w.status.plan.as_ref().and_then(|p| p.severity),
        Some(PlanSeverity::Safe)
    );
    w.run_until_dispatched(Op::Apply);
    assert_eq!(reason(&w, ConditionType::ApprovalRequired), "NotRequired");
}

#[test]
fn a_warning_plan_waits_for_one_approval_and_then_applies() {
    let mut w = by_severity("");
    w.reach_plan_of_severity("ALTER TABLE t ADD COLUMN c int NOT NULL;", "warning");
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert_eq!(reason(&w, ConditionType::ApprovalRequired), "WarningChanges");
    let m = message(&w, ConditionType::ApprovalRequired);
    assert!(
        m.contains("severity is warning") && m.contains("BySeverity"),
        "{m}"
    );
    assert!(!m.contains("NOT NULL"), "names no SQL: {m}");
    assert!(w.created.iter().all(|n| !n.contains("apply")));
    w.approve("ok");
    w.run_until_dispatched(Op::Apply);
}

#[test]
fn the_same_warning_plan_applies_unapproved_under_always() {
    let mut w = World::new();
    w.spec = spec(r#"{"apply": "Always"}"#);
    w.reach_plan_of_severity("ALTER TABLE t ADD COLUMN c int NOT NULL;", "warning");
    w.run_until_dispatched(Op::Apply);
}

#[test]
fn a_plan_without_a_recorded_severity_counts_as_a_warning() {
    let mut w = by_severity("");
    w.reach_plan_of_severity("CREATE TABLE t (id int);", "safe");
    // As a manager before severities recorded it.
    if let Some(p) = w.status.plan.as_mut() {
        p.severity = None;
    }
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert_eq!(reason(&w, ConditionType::ApprovalRequired), "WarningChanges");
    assert!(message(&w, ConditionType::ApprovalRequired).contains("not recorded"));
}

#[test]
fn a_destructive_plan_needs_allow_destructive_and_an_approval() {
    let mut w = by_severity("");
    w.reach_plan_of_severity("DROP TABLE t;", "destructive");
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert_eq!(reason(&w, ConditionType::Ready), "DestructiveChangesDisabled");

    let mut w = by_severity(r#", "allowDestructive": true"#);
    w.reach_plan_of_severity("DROP TABLE t;", "destructive");
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    w.approve("ok");
    w.run_until_dispatched(Op::Apply);
}

#[test]
fn a_privilege_change_needs_allow_destructive_and_an_approval() {
    let grant = |w: &mut World| {
        w.reach_plan_of_severity("GRANT SELECT ON t TO r;", "warning");
        if let Some(p) = w.status.plan.as_mut() {
            p.privilege_changes = vec![PrivilegeChangeKind::Grant];
        }
    };
    let mut w = by_severity("");
    grant(&mut w);
    assert_eq!(settle(&mut w), Some(SchemaPhase::Blocked));
    assert!(
        message(&w, ConditionType::Ready).contains("changes privileges"),
        "{}",
        message(&w, ConditionType::Ready)
    );
    assert!(w.created.iter().all(|n| !n.contains("apply")));

    let mut w = by_severity(r#", "allowDestructive": true"#);
    grant(&mut w);
    assert_eq!(settle(&mut w), Some(SchemaPhase::AwaitingApproval));
    assert_eq!(reason(&w, ConditionType::ApprovalRequired), "PrivilegeChanges");
    w.approve("ok");
    w.run_until_dispatched(Op::Apply);
}
