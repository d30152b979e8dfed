//! The mapping of child reports into payload sections.

use ptah_dataplane::{OperationId, expected_sequence};
use serde_json::json;

use ptah_dataplane::{MAX_BLOCKED_REASON_BYTES, MigrationOutcome, MigrationRunResult};

use super::{sections::*, *};

const HISTORY_FP: &str = "sha256:3333333333333333333333333333333333333333333333333333333333333333";

fn sum(n: u64) -> String {
    format!("{n:064x}")
}

fn payload(op: Operation) -> ResultPayload {
    ResultPayload::new(op, Some(OperationId::new("op").expect("id")))
}

#[test]
fn a_verdict_must_name_the_digest_that_was_resolved() {
    let mut p = payload(Operation::Resolve);
    let digest = format!("sha256:{}", sum(1));
    let report = json!({"digest": digest, "pinned_reference": format!("oci://r/x:v1@{digest}")});
    assert_eq!(resolved(&mut p, &report), Ok(()));
    let other = json!({"Reference": "oci://r/x:v1", "Digest": format!("sha256:{}", sum(2)),
        "Satisfied": ["artifact_types"], "Findings": []});
    assert!(verdict(&mut p.clone(), &other, 0).is_err());
    let same = json!({"Reference": "oci://r/x:v1", "Digest": digest,
        "Satisfied": [], "Findings": [{"Requirement": "require_signature", "Detail": "none"}]});
    assert_eq!(verdict(&mut p, &same, 1), Ok(()));
    let a = p.artifact.as_ref().expect("artifact");
    assert_eq!(a.verification_passed, Some(false));
    assert_eq!(a.violated_requirements, ["require_signature"]);
    assert_eq!(
        p.error.as_ref().and_then(|e| e.child_code.as_deref()),
        Some("verification_failed")
    );
}

/// A `migrations status --json` document in the executor's shape (`StatusReport`).
fn status(pending: &[(i64, &str)], sequence: Option<&[i64]>, blocked: Option<&str>) -> Value {
    let entry = |v: i64| json!({"version": v, "checksum": sum(v as u64), "transaction": if v % 2 == 0 { "file" } else { "none" }});
    let entries: Option<Vec<Value>> = sequence.map(|vs| vs.iter().map(|v| entry(*v)).collect());
    // What the executor computes: the fingerprint of the entries' canonical JSON.
    let fingerprint = entries
        .as_ref()
        .map(|e| Fingerprint::of(e).expect("json").to_string());
    json!({
        "format_version": 1,
        "command": "migrations status",
        "revision_table": true,
        "current_version": 1,
        "applied_migrations": [{"version": 1, "description": "first", "checksum": sum(1)}],
        "pending_migrations": pending.iter().map(|(v, d)| json!({
            "version": v, "description": d, "checksum": sum(*v as u64),
            "transaction": "file", "statements": 1, "file": format!("{v:010}_{d}.up.sql"),
        })).collect::<Vec<_>>(),
        "out_of_order_migrations": [],
        "modified_migrations": [],
        "ahead_migrations": [],
        "dirty_revision": null,
        "history_fingerprint": HISTORY_FP,
        "pending_sequence": entries,
        "pending_sequence_fingerprint": fingerprint,
        "blocked": blocked,
    })
}

#[test]
fn history_carries_the_executors_selection_with_descriptions() {
    let mut p = payload(Operation::MigrationHistory);
    let r = status(&[(2, "add widgets"), (3, "add\tgadgets")], Some(&[2, 3]), None);
    history(&mut p, &r, &Redactor::new()).expect("mapped");
    let h = p.migration_history.as_ref().expect("section");
    let steps = h.pending_sequence.as_ref().expect("sequence");
    let got: Vec<(i64, &str, &str, Option<&str>)> = steps
        .iter()
        .map(|s| {
            (
                s.version,
                s.checksum.as_str(),
                s.transaction.as_str(),
                s.description.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (2, sum(2).as_str(), "file", Some("add widgets")),
            (3, sum(3).as_str(), "none", Some("add gadgets"))
        ]
    );
    assert_eq!((h.pending_count, h.applied_count, h.blocked), (2, 1, false));
    assert_eq!(
        h.pending_sequence_fingerprint,
        Some(expected_sequence(steps).expect("valid").1)
    );
    assert!(p.error.is_none());
}

#[test]
fn a_blocked_history_names_why_redacted_and_bounded() {
    let mut p = payload(Operation::MigrationHistory);
    let mut r = status(
        &[(2, "x")],
        None,
        Some("version 2 is dirty\nsee s3cr3t-pass for more"),
    );
    r["ahead_migrations"] = (100..170)
        .map(|v| json!({"version": v, "description": "d", "state": "applied"}))
        .collect();
    r["modified_migrations"] = json!([{"version": 1, "recorded_checksum": sum(9), "file_checksum": sum(1)}]);
    r["out_of_order_migrations"] = json!([2]);
    let mut redactor = Redactor::new();
    redactor.add_secret("s3cr3t-pass");
    history(&mut p, &r, &redactor).expect("mapped");
    let h = p.migration_history.as_ref().expect("section");
    assert_eq!(h.pending_sequence, None);
    assert!(h.blocked);
    assert_eq!(
        h.blocked_reason.as_deref(),
        Some("version 2 is dirty see [REDACTED] for more")
    );
    assert_eq!(h.ahead_versions, (100..164).collect::<Vec<i64>>());
    assert_eq!(
        (h.modified_versions.as_slice(), h.out_of_order_versions.as_slice()),
        (&[1][..], &[2][..])
    );
    let mut long = status(&[], None, None);
    long["blocked"] = json!("é".repeat(MAX_BLOCKED_REASON_BYTES));
    history(&mut p, &long, &redactor).expect("mapped");
    let reason = p
        .migration_history
        .as_ref()
        .and_then(|h| h.blocked_reason.clone())
        .expect("reason");
    assert!(reason.len() <= MAX_BLOCKED_REASON_BYTES && reason.ends_with("..."));
}

#[test]
fn more_steps_than_a_plan_holds_is_a_typed_error_that_keeps_the_reading() {
    let versions: Vec<i64> = (2..=258).collect();
    let pending: Vec<(i64, &str)> = versions.iter().map(|v| (*v, "m")).collect();
    let mut p = payload(Operation::MigrationHistory);
    history(&mut p, &status(&pending, Some(&versions), None), &Redactor::new()).expect("mapped");
    assert_eq!(
        p.error.as_ref().map(|e| e.code),
        Some(ErrorCode::MigrationSequenceTooLong)
    );
    let h = p.migration_history.as_ref().expect("the reading is kept");
    assert_eq!((h.pending_sequence.as_ref(), h.pending_count), (None, 257));
    let mut p = payload(Operation::MigrationHistory);
    history(
        &mut p,
        &status(&pending[..256], Some(&versions[..256]), None),
        &Redactor::new(),
    )
    .expect("mapped");
    assert!(p.error.is_none());
    assert_eq!(
        p.migration_history
            .and_then(|h| h.pending_sequence)
            .map(|s| s.len()),
        Some(256)
    );
}

#[test]
fn a_sequence_that_disagrees_with_its_fingerprint_or_shape_is_malformed() {
    let mut r = status(&[(2, "a"), (3, "b")], Some(&[2, 3]), None);
    r["pending_sequence_fingerprint"] = json!(HISTORY_FP);
    assert_eq!(
        history(&mut payload(Operation::MigrationHistory), &r, &Redactor::new()),
        Err("the report's pending sequence does not have its fingerprint")
    );
    let mut r = status(&[(2, "a")], Some(&[2]), None);
    r["pending_sequence"][0]["checksum"] = json!("NOT-HEX");
    assert_eq!(
        history(&mut payload(Operation::MigrationHistory), &r, &Redactor::new()),
        Err("the report's pending sequence is malformed")
    );
    let mut r = status(&[(2, "a")], Some(&[2]), None);
    r["pending_sequence"] = json!({"version": 2});
    assert_eq!(
        history(&mut payload(Operation::MigrationHistory), &r, &Redactor::new()),
        Err("the report's pending sequence is not a list")
    );
}

#[test]
fn a_run_of_another_sequence_than_the_approved_one_is_an_error() {
    let approved = expected_sequence(&[]).expect("empty").1;
    let ran: Fingerprint = HISTORY_FP.parse().expect("fp");
    for (sequence, fails) in [(approved, false), (ran, true)] {
        let mut p = payload(Operation::MigrationApply);
        p.migration_run = Some(MigrationRunResult {
            outcome: MigrationOutcome::Applied,
            applied_count: 1,
            first_applied: Some(2),
            last_applied: Some(2),
            current_version: Some(2),
            history_fingerprint: ran,
            sequence_fingerprint: sequence,
        });
        check_sequence(&mut p, &approved, &Redactor::new());
        assert_eq!(
            p.error.map(|e| e.code),
            fails.then_some(ErrorCode::MigrationSequenceMismatch),
            "{sequence}"
        );
    }
}

#[test]
fn a_failed_apply_says_the_servers_reason_without_values() {
    let mut p = payload(Operation::Apply);
    let report = json!({"outcome": "failed", "applied": 0, "failed_statement_index": 0,
        "error": "invalid input syntax for type integer: \"s3cret-row\" (SQLSTATE 22P02)"});
    assert_eq!(apply(&mut p, &report, &Redactor::new()), Ok(()));
    let e = p.error.as_ref().expect("an error");
    assert_eq!(e.child_code.as_deref(), Some("apply_failed"));
    assert_eq!(
        e.message,
        "statement 1 failed; 0 statement(s) committed: invalid input syntax for type integer: ? (SQLSTATE 22P02)"
    );
    assert_eq!(p.mutation_started, Some(true));
    assert_eq!(p.uncertain, Some(false));
}

/// The executor's `lint` reaches the reading as codes and severities only (a message may name
/// objects); an unreadable finding is dropped; a lint the executor could not judge is said so.
#[test]
fn history_carries_the_pending_lint_as_codes_and_severities() {
    let mut r = status(&[(2, "index")], Some(&[2]), None);
    r["lint"] = serde_json::json!({
        "worst": "warning",
        "findings": [
            {"version": 2, "code": "PG101", "severity": "warning", "line": 1, "file": "x", "message": "creates index i on secret_table"},
            {"version": "two", "code": "PG101", "severity": "warning"},
        ],
        "truncated": false,
    });
    let mut p = payload(Operation::MigrationHistory);
    history(&mut p, &r, &Redactor::new()).expect("mapped");
    let lint = p
        .migration_history
        .as_ref()
        .and_then(|h| h.pending_lint.clone())
        .expect("lint");
    assert!(lint.judged);
    assert_eq!(lint.worst, Some(ptah_dataplane::LintSeverity::Warning));
    assert_eq!(lint.findings.len(), 1, "the malformed finding is dropped");
    assert_eq!(lint.findings[0].code, "PG101");
    assert!(
        !serde_json::to_string(&lint)
            .expect("json")
            .contains("secret_table")
    );

    r["lint"] = serde_json::json!({"findings": [], "truncated": false, "error": "lint config: XX1 is no rule's code"});
    let mut p = payload(Operation::MigrationHistory);
    history(&mut p, &r, &Redactor::new()).expect("mapped");
    let lint = p.migration_history.and_then(|h| h.pending_lint).expect("lint");
    assert!(!lint.judged && lint.worst.is_none() && lint.findings.is_empty());
}
