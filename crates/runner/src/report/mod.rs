//! Turning the child's JSON report into the result payload. Only aggregates and identities leave:
//! drift categories and counts (never object names or row values), plan summary and bytes (Plan
//! only), artifact digests, migration versions and fingerprints.

use std::path::Path;

use ptah_dataplane::{ErrorCode, Operation, ResultError, ResultPayload};
use ptah_fingerprint::Fingerprint;
use serde_json::Value;

mod fields;
mod sections;
mod server;

use fields::Mapped;
pub(crate) use fields::bounded;
pub use fields::failure;
use sections::{apply, drift, history, migration_run, plan, resolved, verdict, verified};

use crate::{
    redact::Redactor,
    supervise::{ChildRun, Stop},
};

/// The child's exit code for a refused gate or bad input: nothing was changed.
const EXIT_USAGE: i32 = 2;

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
    if op.is_mutating() {
        // Until the report proves otherwise, a started child may have changed the database.
        p.mutation_started = Some(true);
        p.uncertain = Some(true);
    }
    let exit = run.exit_code;
    map_with(p, run, redactor, op.success_exit_codes(), |p, report| match op {
        Operation::Resolve => resolved(p, report),
        Operation::Verify => verified(p, report, exit),
        Operation::Observe => drift(p, report),
        Operation::Plan => plan(p, report, plan_file, max_plan, redactor),
        Operation::Apply => apply(p, report, redactor),
        Operation::MigrationHistory => history(p, report, redactor),
        Operation::MigrationApply => migration_run(p, report),
    });
}

/// Folds the `ptah oci verify` run of the digest a Resolve just mapped into `p` into its
/// artifact result: the verdict, which must name that same digest.
pub fn map_verdict(p: &mut ResultPayload, run: &ChildRun, redactor: &Redactor) {
    let exit = run.exit_code;
    map_with(p, run, redactor, &[0], |p, report| verdict(p, report, exit));
}

/// Maps the `ptah schema drift` run a Plan starts with into `p.drift`.
pub fn map_drift(p: &mut ResultPayload, run: &ChildRun, redactor: &Redactor) {
    map_with(p, run, redactor, Operation::Observe.success_exit_codes(), drift);
}

/// Reads the run's report into `p` with `section`, then judges the mapping and the exit code
/// against `success`.
fn map_with(
    p: &mut ResultPayload,
    run: &ChildRun,
    redactor: &Redactor,
    success: &[i32],
    section: impl FnOnce(&mut ResultPayload, &Value) -> Mapped,
) {
    let Some(report) = read(p, run, redactor) else {
        return;
    };
    let mapped = section(p, &report);
    conclude(p, mapped, success, run.exit_code, redactor);
}

/// The child's JSON report, after recording its exit code and truncation; `None` when `p` now
/// holds the error (stopped, no report, or the report is an error).
fn read(p: &mut ResultPayload, run: &ChildRun, redactor: &Redactor) -> Option<Value> {
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
    if let Some(stopped) = stop_error(run, redactor) {
        p.error = Some(stopped);
        return None;
    }
    let Some(report) = json_report(run) else {
        let message = format!("ptah exited with {} without a JSON report", run.exit_code);
        p.error = Some(failure(ErrorCode::InvalidChildOutput, None, &message, redactor));
        return None;
    };
    if let Some((code, message)) = child_error(&report) {
        let message = message.unwrap_or("ptah failed");
        p.error = Some(failure(ErrorCode::ChildFailed, code, message, redactor));
        if op.is_mutating() && run.exit_code == EXIT_USAGE {
            // Exit 2 is bad input, an unreachable database or a refused gate: nothing ran.
            p.mutation_started = Some(false);
            p.uncertain = Some(false);
        }
        return None;
    }
    Some(report)
}

/// The child's stdout as one JSON document; `None` when it was cut or is not JSON.
pub(crate) fn json_report(run: &ChildRun) -> Option<Value> {
    if run.stdout.truncated() {
        return None;
    }
    serde_json::from_slice(run.stdout.raw()).ok()
}

/// The code and message of the report's `error` object, when it is one.
pub(crate) fn child_error(report: &Value) -> Option<(Option<&str>, Option<&str>)> {
    let err = report.get("error").filter(|e| e.is_object())?;
    Some((
        err.get("code").and_then(Value::as_str),
        err.get("message").and_then(Value::as_str),
    ))
}

/// A report that could not be mapped is invalid output; one mapped under an exit code that is
/// not a success is a failure unless the mapping already said why.
fn conclude(p: &mut ResultPayload, mapped: Mapped, success: &[i32], exit: i32, redactor: &Redactor) {
    if let Err(why) = mapped {
        p.stdout = None;
        p.plan = None;
        p.error = Some(failure(ErrorCode::InvalidChildOutput, None, why, redactor));
    } else if p.error.is_none() && !success.contains(&exit) {
        let message = format!("ptah exited with {exit}");
        p.error = Some(failure(ErrorCode::ChildFailed, None, &message, redactor));
    }
}

#[cfg(test)]
mod tests;
