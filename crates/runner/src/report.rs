//! Turning the child's JSON report into the result payload. Only aggregates and identities leave:
//! drift categories and counts (never object names or row values), plan summary and bytes (Plan
//! only), artifact digests, migration versions and fingerprints.

use std::{collections::BTreeMap, path::Path};

use ptah_dataplane::{
    ArtifactResult, DriftFinding, DriftResult, ErrorCode, MAX_BLOCKED_REASON_BYTES, MAX_DRIFT_FINDINGS,
    MAX_ERROR_MESSAGE_BYTES, MAX_REPORTED_VERSIONS, MAX_SEQUENCE_STEPS, MigrationHistoryResult,
    MigrationOutcome, MigrationRunResult, Operation, PlanOutcome, PlanResult, ResultError, ResultPayload,
    SequenceStep, sequence::MAX_DESCRIPTION_CHARS,
};
use ptah_fingerprint::{Digest, Fingerprint};
use serde_json::Value;

use crate::{
    redact::Redactor,
    supervise::{ChildRun, Stop},
};

/// The child's exit code for a refused gate or bad input: nothing was changed.
const EXIT_USAGE: i32 = 2;

/// A failure to report: code, the child's own code, a message.
pub fn failure(code: ErrorCode, child_code: Option<&str>, message: &str, redactor: &Redactor) -> ResultError {
    let child_code = child_code
        .filter(|c| !c.is_empty() && c.len() <= 64)
        .filter(|c| {
            c.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
        .map(str::to_owned);
    ResultError {
        code,
        child_code,
        message: bounded(redactor.redact_str(message), MAX_ERROR_MESSAGE_BYTES),
    }
}

/// `text` cut to at most `max` bytes (at a character boundary, `...` marking the cut).
fn bounded(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max - 3;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// Reports a migration Apply whose run names another sequence than the approved one as a
/// failure, whatever the child said: only the approved sequence may have run.
pub fn check_sequence(p: &mut ResultPayload, approved: &Fingerprint, redactor: &Redactor) {
    let Some(run) = &p.migration_run else { return };
    if run.sequence_fingerprint != *approved {
        let message = format!(
            "ptah ran the sequence {}, not the approved {approved}",
            run.sequence_fingerprint
        );
        p.error = Some(failure(
            ErrorCode::MigrationSequenceMismatch,
            None,
            &message,
            redactor,
        ));
    }
}

/// The error of a child the runner stopped (deadline or SIGTERM), if it did.
pub fn stop_error(run: &ChildRun, redactor: &Redactor) -> Option<ResultError> {
    let (code, why) = match run.stopped? {
        Stop::Deadline => (
            ErrorCode::ExecutionDeadlineExpired,
            "the execution deadline passed",
        ),
        Stop::Terminated => (ErrorCode::Terminated, "the runner was asked to terminate"),
    };
    let how = if run.killed {
        "killed after the grace period"
    } else {
        "stopped with SIGTERM"
    };
    Some(failure(code, None, &format!("{why}; ptah was {how}"), redactor))
}

/// Fills `p` from a child run. `plan_file` is where a Plan wrote its plan.
pub fn map(p: &mut ResultPayload, run: &ChildRun, plan_file: &Path, max_plan: usize, redactor: &Redactor) {
    let op = p.operation;
    p.child_exit_code = run.exit_code;
    if run.stdout.truncated() || run.stderr.truncated() {
        p.truncation = Some(ptah_dataplane::Truncation {
            stdout: run.stdout.truncated(),
            stdout_bytes_dropped: run.stdout.dropped(),
            stderr: run.stderr.truncated(),
            stderr_bytes_dropped: run.stderr.dropped(),
        });
    }
    if op.is_mutating() {
        // Until the report proves otherwise, a started child may have changed the database.
        p.mutation_started = Some(true);
        p.uncertain = Some(true);
    }
    if let Some(stopped) = stop_error(run, redactor) {
        p.error = Some(stopped);
        return;
    }
    let report: Option<Value> = if run.stdout.truncated() {
        None
    } else {
        serde_json::from_slice(run.stdout.raw()).ok()
    };
    let Some(report) = report else {
        let message = format!("ptah exited with {} without a JSON report", run.exit_code);
        p.error = Some(failure(ErrorCode::InvalidChildOutput, None, &message, redactor));
        return;
    };
    if let Some(err) = report.get("error").filter(|e| e.is_object()) {
        let code = err.get("code").and_then(Value::as_str);
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("ptah failed");
        p.error = Some(failure(ErrorCode::ChildFailed, code, message, redactor));
        if op.is_mutating() && run.exit_code == EXIT_USAGE {
            // Exit 2 is bad input, an unreachable database or a refused gate: nothing ran.
            p.mutation_started = Some(false);
            p.uncertain = Some(false);
        }
        return;
    }
    let mapped = match op {
        Operation::Resolve | Operation::Verify => artifact(p, &report, run.exit_code),
        Operation::Observe => drift(p, &report),
        Operation::Plan => plan(p, &report, plan_file, max_plan, redactor),
        Operation::Apply => apply(p, &report),
        Operation::MigrationHistory => history(p, &report, redactor),
        Operation::MigrationApply => migration_run(p, &report),
    };
    if let Err(why) = mapped {
        p.stdout = None;
        p.plan = None;
        p.error = Some(failure(ErrorCode::InvalidChildOutput, None, why, redactor));
    } else if p.error.is_none() && !op.success_exit_codes().contains(&run.exit_code) {
        let message = format!("ptah exited with {}", run.exit_code);
        p.error = Some(failure(ErrorCode::ChildFailed, None, &message, redactor));
    }
}

type Mapped = Result<(), &'static str>;

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn parsed<T: std::str::FromStr>(v: &Value, key: &str) -> Result<T, &'static str> {
    text(v, key)
        .and_then(|s| s.parse().ok())
        .ok_or("a report field is missing or malformed")
}

fn version(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_array).map_or(0, |a| a.len() as u64)
}

fn artifact(p: &mut ResultPayload, r: &Value, exit: i32) -> Mapped {
    let verify = p.operation == Operation::Verify;
    let (digest, reference) = if verify {
        (parsed::<Digest>(r, "Digest")?, text(r, "Reference"))
    } else {
        (parsed::<Digest>(r, "digest")?, text(r, "pinned_reference"))
    };
    let names = |key: &str, field: Option<&str>| -> Vec<String> {
        let items = r.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        let items = items.iter().filter_map(|i| match field {
            Some(f) => i.get(f).and_then(Value::as_str).map(str::to_owned),
            None => i.as_str().map(str::to_owned),
        });
        items.take(64).map(|s| s.chars().take(256).collect()).collect()
    };
    let violated = if verify {
        names("Findings", Some("Requirement"))
    } else {
        Vec::new()
    };
    p.artifact = Some(ArtifactResult {
        resolved_digest: digest,
        resolved_reference: reference
            .ok_or("the report names no reference")?
            .chars()
            .take(1024)
            .collect(),
        artifact_type: text(r, "artifact_type").map(|t| t.chars().take(256).collect()),
        verification_passed: verify.then_some(exit == 0),
        satisfied_requirements: if verify {
            names("Satisfied", None)
        } else {
            Vec::new()
        },
        violated_requirements: violated,
    });
    if verify && exit == 1 {
        let message = "the artifact violates the verification policy";
        p.error = Some(failure(
            ErrorCode::ChildFailed,
            Some("verification_failed"),
            message,
            &Redactor::new(),
        ));
    }
    Ok(())
}

fn drift(p: &mut ResultPayload, r: &Value) -> Mapped {
    let all = r
        .get("findings")
        .and_then(Value::as_array)
        .ok_or("the report has no findings")?;
    let mut findings = Vec::new();
    for f in all.iter().take(MAX_DRIFT_FINDINGS) {
        findings.push(DriftFinding {
            category: text(f, "category").ok_or("a finding has no category")?.to_owned(),
            count: f
                .get("count")
                .and_then(Value::as_u64)
                .ok_or("a finding has no count")?,
            severity: text(f, "severity").ok_or("a finding has no severity")?.to_owned(),
        });
    }
    p.drift = Some(DriftResult {
        drift: r
            .get("drift")
            .and_then(Value::as_bool)
            .ok_or("the report has no drift flag")?,
        highest_severity: text(r, "highest_severity").map(str::to_owned),
        finding_count: all.len() as u64,
        findings,
        findings_truncated: all.len() > MAX_DRIFT_FINDINGS,
        live_fingerprint: parsed(r, "live_fingerprint")?,
        desired_fingerprint: parsed(r, "desired_fingerprint")?,
    });
    Ok(())
}

fn plan(p: &mut ResultPayload, r: &Value, file: &Path, max: usize, redactor: &Redactor) -> Mapped {
    let size = std::fs::metadata(file)
        .map_err(|_| "ptah wrote no plan file")?
        .len();
    if size > max as u64 {
        let message = format!("the plan is {size} bytes, more than {max}");
        p.error = Some(failure(ErrorCode::PlanTooLarge, None, &message, redactor));
        return Ok(());
    }
    let bytes = std::fs::read(file).map_err(|_| "the plan file cannot be read")?;
    if redactor.contains_secret(&bytes) {
        let message = "the plan contains a credential; it is not reported";
        p.error = Some(failure(ErrorCode::SecretInOutput, None, message, redactor));
        return Ok(());
    }
    let plan_text = String::from_utf8(bytes).map_err(|_| "the plan file is not UTF-8")?;
    let statements = r
        .get("statements")
        .and_then(Value::as_u64)
        .ok_or("the report has no statement count")?;
    p.plan = Some(PlanResult {
        plan_content_digest: Digest::of(plan_text.as_bytes()),
        plan_outcome: if statements > 0 {
            PlanOutcome::Changes
        } else {
            PlanOutcome::NoChanges
        },
        statement_count: statements,
        destructive: r.get("destructive").and_then(Value::as_bool).unwrap_or(true),
        from_fingerprint: parsed(r, "from_fingerprint")?,
        to_fingerprint: parsed(r, "to_fingerprint")?,
    });
    p.stdout = Some(plan_text);
    Ok(())
}

fn apply(p: &mut ResultPayload, r: &Value) -> Mapped {
    let outcome = text(r, "outcome").ok_or("the report has no outcome")?;
    let applied = r.get("applied").and_then(Value::as_u64).unwrap_or(0);
    // The report is complete: the child knows what it committed.
    p.uncertain = Some(false);
    p.mutation_started = Some(true);
    let failed =
        |code: &str, message: &str| failure(ErrorCode::ChildFailed, Some(code), message, &Redactor::new());
    match outcome {
        "applied" | "up_to_date" => {}
        "failed" => {
            p.mutation_started = Some(applied > 0 || r.get("failed_statement_index").is_some());
            let msg = format!("a statement failed; {applied} statement(s) committed");
            p.error = Some(failed("apply_failed", &msg));
        }
        "not_converged" => {
            p.error = Some(failed(
                "not_converged",
                "the database did not converge after the apply",
            ))
        }
        _ => return Err("the report has an unknown outcome"),
    }
    Ok(())
}

fn history(p: &mut ResultPayload, r: &Value, redactor: &Redactor) -> Mapped {
    let items = |key: &str| {
        r.get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    // `pending_migrations` has the descriptions; `pending_sequence` is what `up` would run.
    let descriptions: BTreeMap<i64, &str> = items("pending_migrations")
        .iter()
        .filter_map(|m| Some((version(m.get("version"))?, text(m, "description")?)))
        .collect();
    let sequence = match r.get("pending_sequence") {
        None | Some(Value::Null) => None,
        Some(Value::Array(entries)) => Some(sequence_steps(entries, &descriptions)?),
        Some(_) => return Err("the report's pending sequence is not a list"),
    };
    let sequence = match sequence {
        Some(steps) if steps.len() > MAX_SEQUENCE_STEPS => {
            let message = format!(
                "{} migrations are pending; a plan holds at most {MAX_SEQUENCE_STEPS}, apply them in smaller artifacts",
                steps.len()
            );
            p.error = Some(failure(
                ErrorCode::MigrationSequenceTooLong,
                None,
                &message,
                redactor,
            ));
            None
        }
        Some(steps) => {
            // The executor fingerprints its selection; a report whose steps disagree with it
            // could not be approved, so it is refused rather than half believed.
            let (_, digest) = ptah_dataplane::expected_sequence(&steps)
                .map_err(|_| "the report's pending sequence is malformed")?;
            if text(r, "pending_sequence_fingerprint") != Some(digest.to_string().as_str()) {
                return Err("the report's pending sequence does not have its fingerprint");
            }
            Some(steps)
        }
        None => None,
    };
    let versions = |key: &str, field: Option<&str>| -> Vec<i64> {
        let list = items(key).iter();
        let found = list.filter_map(|i| version(field.map_or(Some(i), |f| i.get(f))));
        found.take(MAX_REPORTED_VERSIONS).collect()
    };
    let blocked_reason = text(r, "blocked").map(|why| {
        let why: String = redactor
            .redact_str(why)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        bounded(why, MAX_BLOCKED_REASON_BYTES)
    });
    p.migration_history = Some(MigrationHistoryResult {
        current_version: version(r.get("current_version")),
        applied_count: count(r, "applied_migrations"),
        pending_count: count(r, "pending_migrations"),
        dirty: r.get("dirty_revision").is_some_and(|d| !d.is_null()),
        blocked: r.get("blocked").is_some_and(|b| !b.is_null()),
        history_fingerprint: parsed(r, "history_fingerprint")?,
        pending_sequence_fingerprint: text(r, "pending_sequence_fingerprint").and_then(|s| s.parse().ok()),
        pending_sequence: sequence,
        modified_versions: versions("modified_migrations", Some("version")),
        out_of_order_versions: versions("out_of_order_migrations", None),
        ahead_versions: versions("ahead_migrations", Some("version")),
        blocked_reason,
    });
    Ok(())
}

/// The executor's pending selection, each step with its description (cut to the plan's bound,
/// control characters replaced); a malformed entry makes the whole report malformed.
fn sequence_steps(
    entries: &[Value],
    descriptions: &BTreeMap<i64, &str>,
) -> Result<Vec<SequenceStep>, &'static str> {
    let malformed = "the report's pending sequence is malformed";
    entries
        .iter()
        .map(|e| {
            let version = version(e.get("version")).ok_or(malformed)?;
            let step = SequenceStep {
                version,
                checksum: text(e, "checksum").ok_or(malformed)?.to_owned(),
                transaction: text(e, "transaction").ok_or(malformed)?.to_owned(),
                description: descriptions.get(&version).map(|d| {
                    d.chars()
                        .map(|c| if c.is_control() { ' ' } else { c })
                        .take(MAX_DESCRIPTION_CHARS)
                        .collect()
                }),
            };
            step.check().map_err(|_| malformed)?;
            Ok(step)
        })
        .collect()
}

fn migration_run(p: &mut ResultPayload, r: &Value) -> Mapped {
    let applied: Vec<i64> = r
        .get("applied_versions")
        .and_then(Value::as_array)
        .ok_or("the report has no applied versions")?
        .iter()
        .filter_map(|v| version(Some(v)))
        .collect();
    let outcome = match text(r, "outcome") {
        Some("UpToDate") => MigrationOutcome::UpToDate,
        Some("Applied") => MigrationOutcome::Applied,
        Some("Failed") => MigrationOutcome::Failed,
        Some("Partial") => MigrationOutcome::Partial,
        _ => return Err("the report has an unknown outcome"),
    };
    p.uncertain = Some(false);
    p.mutation_started = Some(!applied.is_empty() || outcome == MigrationOutcome::Partial);
    if matches!(outcome, MigrationOutcome::Failed | MigrationOutcome::Partial) {
        let message = format!("a migration failed after {} applied", applied.len());
        p.error = Some(failure(
            ErrorCode::ChildFailed,
            Some("migration_failed"),
            &message,
            &Redactor::new(),
        ));
    }
    p.migration_run = Some(MigrationRunResult {
        outcome,
        applied_count: applied.len() as u64,
        first_applied: applied.first().copied(),
        last_applied: applied.last().copied(),
        current_version: version(r.get("current_version")),
        history_fingerprint: parsed(r, "history_fingerprint")?,
        sequence_fingerprint: parsed(r, "sequence_fingerprint")?,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use ptah_dataplane::{OperationId, expected_sequence};
    use serde_json::json;

    use super::*;

    const HISTORY_FP: &str = "sha256:3333333333333333333333333333333333333333333333333333333333333333";

    fn sum(n: u64) -> String {
        format!("{n:064x}")
    }

    fn payload(op: Operation) -> ResultPayload {
        ResultPayload::new(op, Some(OperationId::new("op").expect("id")))
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
        r["modified_migrations"] =
            json!([{"version": 1, "recorded_checksum": sum(9), "file_checksum": sum(1)}]);
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
}
