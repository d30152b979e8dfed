//! The agreement rules of the Plan operation on fabricated child runs.

use ptah_dataplane::{Operation, PlanOutcome};
use ptah_fingerprint::Digest;

use super::*;
use crate::bounded::{Bounded, Keep};

const FROM: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
const TO: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

fn planned(bytes: &str, statements: u64) -> ResultPayload {
    let mut p = ResultPayload::new(Operation::Plan, None);
    p.child_exit_code = 1;
    p.plan = Some(PlanResult {
        plan_content_digest: Digest::of(bytes.as_bytes()),
        plan_outcome: PlanOutcome::Changes,
        statement_count: statements,
        destructive: false,
        from_fingerprint: FROM.parse().expect("fingerprint"),
        to_fingerprint: TO.parse().expect("fingerprint"),
    });
    p.stdout = Some(bytes.to_owned());
    p
}

fn child(exit_code: i32, stdout: &str) -> ChildRun {
    let mut out = Bounded::new(Keep::Head, 1024);
    out.push(stdout.as_bytes());
    ChildRun {
        exit_code,
        stopped: None,
        killed: false,
        stdout: out,
        stderr: Bounded::new(Keep::Tail, 1024),
    }
}

fn dry_report(total: u64, from: &str) -> String {
    format!(
        r#"{{"format_version":1,"command":"schema apply","exit_code":0,"outcome":"dry_run","applied":0,
        "total":{total},"committed":[],"verified":false,"database_url":"postgres://u@h/d",
        "destructive":false,"from_fingerprint":"{from}","to_fingerprint":"{TO}"}}"#
    )
}

#[test]
fn identical_runs_agree_and_any_difference_is_named() {
    let a = planned("{\"statements\":[1]}\n", 1);
    assert_eq!(disagreement(&a, &a.clone()), None);
    let other = planned("{\"statements\":[2]}\n", 1);
    let why = disagreement(&a, &other).expect("different bytes");
    let first = Digest::of(b"{\"statements\":[1]}\n").to_string();
    let second = Digest::of(b"{\"statements\":[2]}\n").to_string();
    assert!(why.contains(&first) && why.contains(&second), "{why}");
    let recounted = planned("{\"statements\":[1]}\n", 2);
    assert!(disagreement(&a, &recounted).is_some(), "same bytes, other report");
    let mut exit = a.clone();
    exit.child_exit_code = 0;
    assert!(disagreement(&a, &exit).is_some(), "same bytes, other exit code");
}

#[test]
fn a_dry_run_must_describe_the_same_plan() {
    let p = planned("{}\n", 1);
    let plan = p.plan.as_ref().expect("plan");
    let r = Redactor::new();
    assert_eq!(check_dry_run(&child(0, &dry_report(1, FROM)), plan, &r), Ok(()));
    for (run, why) in [
        (child(0, &dry_report(2, FROM)), "statement count"),
        (child(0, &dry_report(1, TO)), "from_fingerprint"),
        (child(1, &dry_report(1, FROM)), "exit code"),
        (
            child(0, &dry_report(1, FROM).replace("dry_run", "applied")),
            "outcome",
        ),
        (child(0, "not json"), "without a JSON report"),
    ] {
        let err = check_dry_run(&run, plan, &r).expect_err(why);
        assert_eq!(err.code, ErrorCode::PlanDryRunFailed, "{why}");
        assert!(err.message.contains(why), "{why}: {}", err.message);
        assert_eq!(err.child_code, None, "{why}");
    }
}

#[test]
fn a_failed_dry_run_carries_the_childs_code() {
    let p = planned("{}\n", 1);
    let report = r#"{"format_version":1,"command":"schema apply","exit_code":1,
        "error":{"code":"stale_plan","message":"the live schema changed"}}"#;
    let err = check_dry_run(
        &child(1, report),
        p.plan.as_ref().expect("plan"),
        &Redactor::new(),
    )
    .expect_err("stale");
    assert_eq!(err.code, ErrorCode::PlanDryRunFailed);
    assert_eq!(err.child_code.as_deref(), Some("stale_plan"));
    assert!(err.message.contains("the live schema changed"), "{}", err.message);
}
