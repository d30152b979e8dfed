//! The linter's verdict on each pending migration, carried from the History reading into the
//! plan, and part of what an approval names.

use ptah_api::migrationplan::{LintSeverity, PlannedLint};
use ptah_dataplane::{LintFinding, LintSeverity as Found, PendingLint};

use ptah_api::{conditions::ConditionType, migration::MigrationOperationType as Op};

use super::world::World;

fn judged(findings: Vec<LintFinding>) -> Option<PendingLint> {
    Some(PendingLint {
        worst: None,
        findings,
        truncated: false,
        judged: true,
    })
}

fn always(lint: Option<PendingLint>) -> World {
    let mut w = World::new();
    w.spec = super::world::spec(r#"{"apply": "Always"}"#);
    w.lint = lint;
    w.drive_to_approval();
    w
}

/// Under `Always`, a plan the linter judged and found nothing destructive in applies without an
/// approval, warnings included.
#[test]
fn always_applies_a_judged_plan_without_destructive_changes() {
    let w = always(judged(vec![finding(2, "PG101", Found::Warning)]));
    assert_eq!(w.jobs_of(Op::Apply), 1, "dispatched without an approval");
}

/// Under `Always`, a destructive migration, or a plan the linter could not judge, waits for an
/// exact approval, and says which migrations.
#[test]
fn always_waits_for_an_approval_of_a_destructive_or_unjudged_plan() {
    for (lint, said) in [
        (judged(vec![finding(2, "DS102", Found::Error)]), "2 (DS102)"),
        (None, "(not linted)"),
    ] {
        let mut w = always(lint);
        assert_eq!(w.jobs_of(Op::Apply), 0);
        let c = crate::conditions::get(&w.status.conditions, ConditionType::ApprovalRequired)
            .expect("approval required");
        assert!(c.message.contains(said), "{}", c.message);
        w.approve("alice");
        w.run_until_dispatched(Op::Apply);
        assert_eq!(w.jobs_of(Op::Apply), 1, "the approval authorizes it");
    }
}

fn finding(version: i64, code: &str, severity: Found) -> LintFinding {
    LintFinding {
        version,
        code: code.to_owned(),
        severity,
    }
}

fn plan_of(lint: Option<PendingLint>) -> ptah_api::PtahMigrationPlanSpec {
    let mut w = World::new();
    w.pending = vec![3, 5];
    w.lint = lint;
    w.drive_to_approval();
    w.observed().plan_spec().cloned().expect("a plan")
}

#[test]
fn each_planned_migration_carries_its_lint_and_the_plan_fingerprint_binds_it() {
    let judged = |findings| {
        Some(PendingLint {
            worst: None,
            findings,
            truncated: false,
            judged: true,
        })
    };
    let warned = plan_of(judged(vec![
        finding(5, "PG101", Found::Warning),
        finding(5, "SQL001", Found::Notice),
        finding(5, "PG101", Found::Warning),
    ]));
    assert_eq!(
        warned.migrations[0].lint,
        Some(PlannedLint {
            severity: LintSeverity::Safe,
            codes: Vec::new(),
        }),
        "a judged migration without findings is safe"
    );
    assert_eq!(
        warned.migrations[1].lint,
        Some(PlannedLint {
            severity: LintSeverity::Warning,
            codes: vec!["PG101".to_owned(), "SQL001".to_owned()],
        })
    );
    let destructive = plan_of(judged(vec![finding(5, "DS102", Found::Error)]));
    assert_eq!(
        destructive.migrations[1].lint.as_ref().map(|l| l.severity),
        Some(LintSeverity::Error)
    );
    assert_ne!(
        warned.fingerprint, destructive.fingerprint,
        "an approval of one class never covers the other"
    );
    let unjudged = plan_of(Some(PendingLint {
        worst: None,
        findings: Vec::new(),
        truncated: false,
        judged: false,
    }));
    assert!(unjudged.migrations.iter().all(|m| m.lint.is_none()));
    assert_eq!(
        unjudged.fingerprint,
        plan_of(None).fingerprint,
        "nothing judged is the same as no lint"
    );
}
