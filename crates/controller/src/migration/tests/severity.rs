//! `policy.apply: BySeverity` over the linter's verdicts: safe migrations (notices at most)
//! apply on their own, a warning or an unjudged migration waits for one approval, and a
//! destructive one needs `allowDestructive` and an approval.

use ptah_api::{
    conditions::ConditionType,
    migration::{MigrationOperationType as Op, MigrationPhase},
};
use ptah_dataplane::{LintFinding, LintSeverity as Found, PendingLint};

use super::world::{World, spec};
use crate::conditions::get;

fn judged(findings: &[(i64, &str, Found)]) -> Option<PendingLint> {
    Some(PendingLint {
        worst: None,
        findings: findings
            .iter()
            .map(|(version, code, severity)| LintFinding {
                version: *version,
                code: (*code).to_owned(),
                severity: *severity,
            })
            .collect(),
        truncated: false,
        judged: true,
    })
}

fn by_severity(policy: &str, lint: Option<PendingLint>) -> World {
    let mut w = World::new();
    w.spec = spec(policy);
    w.lint = lint;
    w.drive_to_approval();
    w
}

fn condition(w: &World, t: ConditionType) -> (String, String) {
    get(&w.status.conditions, t)
        .map(|c| (c.reason.clone(), c.message.clone()))
        .unwrap_or_default()
}

#[test]
fn safe_migrations_and_notices_apply_on_their_own() {
    for lint in [judged(&[]), judged(&[(2, "SQL001", Found::Notice)])] {
        let w = by_severity(r#"{"apply": "BySeverity"}"#, lint);
        assert_eq!(w.jobs_of(Op::Apply), 1, "dispatched without an approval");
    }
}

#[test]
fn a_warning_or_unjudged_migration_waits_for_one_approval() {
    for (lint, said) in [
        (judged(&[(2, "PG101", Found::Warning)]), "2 (PG101)"),
        (None, "(not linted)"),
    ] {
        let mut w = by_severity(r#"{"apply": "BySeverity"}"#, lint);
        assert_eq!(w.jobs_of(Op::Apply), 0);
        assert_eq!(w.status.phase, Some(MigrationPhase::AwaitingApproval));
        let (reason, message) = condition(&w, ConditionType::ApprovalRequired);
        assert_eq!(reason, "WarningChanges");
        assert!(
            message.contains(said) && message.contains("BySeverity"),
            "{message}"
        );
        w.approve("alice");
        w.run_until_dispatched(Op::Apply);
        assert_eq!(w.jobs_of(Op::Apply), 1, "one approval authorizes it");
    }
}

#[test]
fn a_destructive_migration_is_blocked_without_allow_destructive() {
    let lint = judged(&[(2, "DS102", Found::Error), (3, "PG101", Found::Warning)]);
    let mut w = by_severity(r#"{"apply": "BySeverity"}"#, lint);
    assert_eq!(w.status.phase, Some(MigrationPhase::Blocked));
    let (reason, message) = condition(&w, ConditionType::ApprovalRequired);
    assert_eq!(reason, "DestructiveChangesDisabled");
    assert!(
        message.contains("2 (DS102)") && message.contains("allowDestructive"),
        "{message}"
    );
    w.approve("alice");
    w.settle();
    assert_eq!(w.jobs_of(Op::Apply), 0, "an approval alone does not unblock it");
}

#[test]
fn a_destructive_migration_with_allow_destructive_waits_for_an_approval() {
    let lint = judged(&[(2, "DS102", Found::Error)]);
    let mut w = by_severity(r#"{"apply": "BySeverity", "allowDestructive": true}"#, lint);
    assert_eq!(w.jobs_of(Op::Apply), 0);
    let (reason, message) = condition(&w, ConditionType::ApprovalRequired);
    assert_eq!(reason, "DestructiveChangesDisabled");
    assert!(message.contains("2 (DS102) are destructive"), "{message}");
    w.approve("alice");
    w.run_until_dispatched(Op::Apply);
    assert_eq!(w.jobs_of(Op::Apply), 1);
}

#[test]
fn allow_destructive_changes_nothing_under_on_approval() {
    let lint = judged(&[(2, "DS102", Found::Error)]);
    let mut w = by_severity(r#"{"apply": "OnApproval"}"#, lint);
    assert_eq!(w.status.phase, Some(MigrationPhase::AwaitingApproval));
    w.approve("alice");
    w.run_until_dispatched(Op::Apply);
}
