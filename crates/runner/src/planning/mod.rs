//! The Plan operation: `ptah schema drift` (the raw drift read an Observe makes, with no
//! exclusions), then `ptah schema plan` twice under the same inputs, the two plans required to be
//! byte-identical (and their reports equal), then `ptah schema apply --dry-run` of exactly the
//! bytes to be reported, whose JSON report must describe the same plan. Only then are the bytes
//! reported, once, next to the drift: one Job observes and plans.
//!
//! A plan that does not reproduce cannot be approved meaningfully: the approval names a digest,
//! and a later proof plan must be able to reach the same one. `ptah`'s dry-run report names no
//! content digest and lists no statements, so the dry-run is held to what it does report: the
//! outcome `dry_run`, the statement count, the destructive flag and both fingerprints.
//!
//! Given a dev database, a confirmed plan with changes is then rehearsed there ([`rehearse`]).

use std::path::Path;

use ptah_dataplane::{ErrorCode, Operation, PlanOutcome, PlanResult, ResultPayload};
use ptah_fingerprint::Fingerprint;
use serde_json::Value;

use crate::{
    command::{self, ChildCommand},
    error::RunnerError,
    inputs::Env,
    launcher::Launcher,
    redact::Redactor,
    report::{self, failure},
    supervise::ChildRun,
};

/// Runs the Plan operation in `work`; fills `payload` and returns the redacted stderr of the last
/// child that ran.
pub(crate) async fn run(
    env: &Env,
    work: &Path,
    max_plan: usize,
    launcher: &mut Launcher<'_>,
    redactor: &Redactor,
    payload: &mut ResultPayload,
) -> Result<Option<Vec<u8>>, RunnerError> {
    let drift = launcher.run(&drift_command(env, work)?).await?;
    report::map_drift(payload, &drift, redactor);
    if payload.error.is_some() {
        payload.drift = None;
        return Ok(Some(drift.stderr.redacted(redactor)));
    }
    let first_file = work.join("plan-1.json");
    let first = launcher.run(&plan_command(env, &first_file)?).await?;
    report::map(payload, &first, &first_file, max_plan, redactor);
    if payload.error.is_some() {
        return Ok(Some(first.stderr.redacted(redactor)));
    }
    let mut confirmed = confirm(env, work, max_plan, launcher, redactor, payload).await;
    if confirmed.is_ok() && payload.error.is_none() && rehearse::wanted(env) {
        confirmed = rehearsal(env, work, launcher, redactor, payload).await;
    }
    if confirmed.is_err() {
        // A plan that was not confirmed (SIGTERM or a deadline before the next child, a child
        // that cannot start) is not reported next to the runner's error.
        payload.plan = None;
        payload.stdout = None;
        payload.rehearsal = None;
    }
    confirmed
}

/// The second plan run and the dry-run of a plan the first run mapped into `payload`.
async fn confirm(
    env: &Env,
    work: &Path,
    max_plan: usize,
    launcher: &mut Launcher<'_>,
    redactor: &Redactor,
    payload: &mut ResultPayload,
) -> Result<Option<Vec<u8>>, RunnerError> {
    let mut second = payload.clone();
    second.plan = None;
    second.stdout = None;
    second.truncation = None;
    let second_file = work.join("plan-2.json");
    let second_run = launcher.run(&plan_command(env, &second_file)?).await?;
    report::map(&mut second, &second_run, &second_file, max_plan, redactor);
    let diagnostics = Some(second_run.stderr.redacted(redactor));
    if second.error.is_some() {
        // The second run's failure is the operation's: report it as it is.
        *payload = second;
        return Ok(diagnostics);
    }
    if let Some(error) = disagreement(payload, &second) {
        refuse(
            payload,
            failure(ErrorCode::NondeterministicPlan, None, &error, redactor),
        );
        return Ok(diagnostics);
    }

    // The dry-run reads its own copy of exactly the bytes that will be reported.
    let (Some(plan), Some(bytes)) = (payload.plan.clone(), payload.stdout.clone()) else {
        return Err(RunnerError::Internal("a mapped plan has no bytes".into()));
    };
    let dry_file = work.join("dry-run.plan");
    std::fs::write(&dry_file, bytes.as_bytes())
        .map_err(|e| RunnerError::Internal(format!("cannot write {}: {}", dry_file.display(), e.kind())))?;
    let dry = launcher.run(&command::plan_dry_run(env, &dry_file)?).await?;
    let diagnostics = Some(dry.stderr.redacted(redactor));
    if let Some(stopped) = report::stop_error(&dry, redactor) {
        refuse(payload, stopped);
        payload.child_exit_code = dry.exit_code;
    } else if let Err(error) = check_dry_run(&dry, &plan, redactor) {
        refuse(payload, error);
        payload.child_exit_code = dry.exit_code;
    }
    Ok(diagnostics)
}

/// Rehearses the confirmed plan in `payload` on the dev database (a plan with changes only: an
/// empty plan has nothing to rehearse).
async fn rehearsal(
    env: &Env,
    work: &Path,
    launcher: &mut Launcher<'_>,
    redactor: &Redactor,
    payload: &mut ResultPayload,
) -> Result<Option<Vec<u8>>, RunnerError> {
    let Some(bytes) = payload.stdout.clone().filter(|_| {
        payload
            .plan
            .as_ref()
            .is_some_and(|p| p.plan_outcome == PlanOutcome::Changes)
    }) else {
        return Ok(None);
    };
    let output = work.join("plan-rehearsed.json");
    let run = launcher.run(&rehearse::command(env, &output)?).await?;
    if let Some(stopped) = report::stop_error(&run, redactor) {
        // Stopped by the deadline or SIGTERM, as a dry-run would be: no plan is reported.
        refuse(payload, stopped);
        payload.child_exit_code = run.exit_code;
    } else {
        payload.rehearsal = Some(rehearse::read(&run, &output, &bytes, redactor));
    }
    Ok(Some(run.stderr.redacted(redactor)))
}

fn drift_command(env: &Env, work: &Path) -> Result<ChildCommand, RunnerError> {
    // A drift read writes no file: the plan output is never passed to it.
    let files = command::Files {
        plan_output: &work.join("unused.json"),
        approved_plan: None,
        approved_sequence: None,
    };
    command::build(Operation::Observe, env, &files)
}

fn plan_command(env: &Env, output: &Path) -> Result<ChildCommand, RunnerError> {
    let files = command::Files {
        plan_output: output,
        approved_plan: None,
        approved_sequence: None,
    };
    command::build(Operation::Plan, env, &files)
}

/// Drops the plan from the payload and records why.
fn refuse(payload: &mut ResultPayload, error: ptah_dataplane::ResultError) {
    payload.plan = None;
    payload.stdout = None;
    payload.rehearsal = None;
    payload.error = Some(error);
}

/// Why two successful plan runs are not the same plan, if they are not.
fn disagreement(first: &ResultPayload, second: &ResultPayload) -> Option<String> {
    let digest = |p: &ResultPayload| {
        p.plan
            .as_ref()
            .map_or_else(|| "none".to_owned(), |plan| plan.plan_content_digest.to_string())
    };
    if first.stdout != second.stdout {
        return Some(format!(
            "two plan runs under the same inputs wrote different plans ({} and {})",
            digest(first),
            digest(second)
        ));
    }
    if first.plan != second.plan || first.child_exit_code != second.child_exit_code {
        return Some(format!(
            "two plan runs wrote the same plan {} but reported it differently",
            digest(first)
        ));
    }
    None
}

/// Checks the dry-run's JSON report against the plan.
fn check_dry_run(
    run: &ChildRun,
    plan: &PlanResult,
    redactor: &Redactor,
) -> Result<(), ptah_dataplane::ResultError> {
    let refused = |child_code: Option<&str>, message: &str| {
        failure(ErrorCode::PlanDryRunFailed, child_code, message, redactor)
    };
    let Some(report) = report::json_report(run) else {
        let message = format!("the dry-run exited with {} without a JSON report", run.exit_code);
        return Err(refused(None, &message));
    };
    if let Some((code, message)) = report::child_error(&report) {
        let message = message.unwrap_or("the dry-run failed");
        return Err(refused(
            code,
            &format!("the dry-run of the plan failed: {message}"),
        ));
    }
    let fingerprint = |key: &str| {
        report
            .get(key)
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<Fingerprint>().ok())
    };
    let mismatch = if run.exit_code != 0 {
        Some("exit code")
    } else if report.get("outcome").and_then(Value::as_str) != Some("dry_run") {
        Some("outcome")
    } else if report.get("total").and_then(Value::as_u64) != Some(plan.statement_count) {
        Some("statement count")
    } else if report.get("destructive").and_then(Value::as_bool) != Some(plan.destructive) {
        Some("destructive flag")
    } else if fingerprint("from_fingerprint") != Some(plan.from_fingerprint) {
        Some("from_fingerprint")
    } else if fingerprint("to_fingerprint") != Some(plan.to_fingerprint) {
        Some("to_fingerprint")
    } else {
        None
    };
    match mismatch {
        Some(what) => Err(refused(
            None,
            &format!(
                "the dry-run of plan {} disagrees with it: {what}",
                plan.plan_content_digest
            ),
        )),
        None => Ok(()),
    }
}

mod rehearse;
#[cfg(test)]
mod tests;
