//! Turning the child's JSON report into the result payload. Only aggregates and identities leave:
//! drift categories and counts (never object names or row values), plan summary and bytes (Plan
//! only), artifact digests, migration versions and fingerprints.

use std::path::Path;

use ptah_dataplane::{
    ArtifactResult, DriftFinding, DriftResult, ErrorCode, MAX_DRIFT_FINDINGS, MAX_ERROR_MESSAGE_BYTES,
    MigrationHistoryResult, MigrationOutcome, MigrationRunResult, Operation, PlanOutcome, PlanResult,
    ResultError, ResultPayload,
};
use ptah_fingerprint::Digest;
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
    let mut message = redactor.redact_str(message);
    if message.len() > MAX_ERROR_MESSAGE_BYTES {
        let mut cut = MAX_ERROR_MESSAGE_BYTES - 3;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push_str("...");
    }
    ResultError {
        code,
        child_code,
        message,
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
        Operation::MigrationHistory => history(p, &report),
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

fn history(p: &mut ResultPayload, r: &Value) -> Mapped {
    p.migration_history = Some(MigrationHistoryResult {
        current_version: version(r.get("current_version")),
        applied_count: count(r, "applied_migrations"),
        pending_count: count(r, "pending_migrations"),
        dirty: r.get("dirty_revision").is_some_and(|d| !d.is_null()),
        blocked: r.get("blocked").is_some_and(|b| !b.is_null()),
        history_fingerprint: parsed(r, "history_fingerprint")?,
        pending_sequence_fingerprint: text(r, "pending_sequence_fingerprint").and_then(|s| s.parse().ok()),
    });
    Ok(())
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
