//! `ptah schema apply --plan FILE --from DESIRED`: gate, stale check, apply, verify.

use std::fmt::Write as _;

use ptah_engine::{Error as DbError, InspectScope, live_fingerprint};
use ptah_schema::diff::ExcludeSet;
use ptah_schema::{PLAN_FORMAT_VERSION, Plan};
use serde::Serialize;

use super::{ApplyArgs, Failure, apply_options, close, connect, desired, progress, severity_name};
use crate::common::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, Output};

/// How an apply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Outcome {
    /// Every statement ran and a fresh plan is empty.
    Applied,
    /// The plan was empty and the database already matches.
    UpToDate,
    /// Nothing ran: `--dry-run`.
    DryRun,
    /// A statement failed; `committed` lists what remains.
    Failed,
    /// Every statement ran but a fresh plan is not empty.
    NotConverged,
}

#[derive(Serialize)]
struct ApplyReport {
    outcome: Outcome,
    applied: usize,
    total: usize,
    committed: Vec<usize>,
    verified: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_statement_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    database_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tls: Option<super::TlsUsed>,
    destructive: bool,
    from_fingerprint: String,
    to_fingerprint: String,
}

fn read_plan(a: &ApplyArgs) -> Result<Plan, Failure> {
    let path = a.plan.display();
    let text = std::fs::read_to_string(&a.plan)
        .map_err(|e| Failure::new("invalid_plan", format!("{path}: {e}"), EXIT_USAGE))?;
    let plan: Plan = serde_json::from_str(&text).map_err(|e| {
        Failure::new(
            "invalid_plan",
            format!("{path}: not a plan file: {e}"),
            EXIT_USAGE,
        )
    })?;
    if plan.format_version != PLAN_FORMAT_VERSION {
        let message = format!(
            "{path}: plan format_version {} is not supported (expected {PLAN_FORMAT_VERSION})",
            plan.format_version
        );
        return Err(Failure::new("invalid_plan", message, EXIT_USAGE));
    }
    Ok(plan)
}

/// Runs `schema apply`.
pub(super) async fn apply(a: ApplyArgs, out: Output) -> Result<u8, Failure> {
    let (dialect, desired) = desired(&a.desired)?;
    let plan = read_plan(&a)?;
    if plan.dialect != dialect {
        let message = format!(
            "the plan is for {:?} but the database is {dialect:?}",
            plan.dialect
        );
        return Err(Failure::new("dialect_mismatch", message, EXIT_USAGE));
    }
    let given = &a.desired.target.exclude;
    if !given.is_empty() && given != &plan.exclude {
        let message = "--exclude differs from the plan's exclude; the plan's scope is the one applied";
        return Err(Failure::new("plan_mismatch", message, EXIT_USAGE));
    }
    if ExcludeSet::new(&plan.exclude).apply(&desired).fingerprint() != plan.to_fingerprint {
        let message = format!(
            "the plan was computed for another desired schema than {} (to_fingerprint differs); plan again",
            a.desired.from.display()
        );
        return Err(Failure::new("plan_mismatch", message, EXIT_USAGE));
    }
    if plan.destructive && !a.allow_destructive && !a.dry_run {
        let count = plan
            .statements
            .iter()
            .filter(|s| s.severity == ptah_schema::Severity::Destructive)
            .count();
        let message = format!(
            "refusing to apply: the plan has {count} destructive statement(s); pass --allow-destructive"
        );
        return Err(Failure::new("destructive", message, EXIT_USAGE));
    }
    let mut c = connect(&a.desired.target, out).await?;
    c.options.exclude = plan.exclude.clone();
    let result = run(&a, &plan, &desired, &mut c, out).await;
    close(c.session).await;
    let mut report = result?;
    report.database_url = c.url.to_string();
    report.tls = Some(c.tls.clone());
    let exit = match report.outcome {
        Outcome::Applied | Outcome::UpToDate | Outcome::DryRun => EXIT_OK,
        Outcome::Failed | Outcome::NotConverged => EXIT_FAILURE,
    };
    if let Some(error) = &report.error {
        let shown = c.url.scrub(error);
        eprintln!(
            "error: {shown} ({} of {} statements committed)",
            report.applied, report.total
        );
        report.error = Some(shown);
    }
    let text = || text(&plan, &report);
    Ok(out.report(&report, text, exit))
}

async fn run(
    a: &ApplyArgs,
    plan: &Plan,
    desired: &ptah_schema::Schema,
    c: &mut super::Connected,
    out: Output,
) -> Result<ApplyReport, Failure> {
    let mut report = ApplyReport {
        outcome: Outcome::DryRun,
        applied: 0,
        total: plan.statements.len(),
        committed: Vec::new(),
        verified: false,
        failed_statement_index: None,
        error: None,
        database_url: String::new(),
        tls: None,
        destructive: plan.destructive,
        from_fingerprint: plan.from_fingerprint.to_string(),
        to_fingerprint: plan.to_fingerprint.to_string(),
    };
    let scope = InspectScope::of(desired);
    if a.dry_run {
        progress(out, "checking the plan against the live schema");
        let live = ptah_engine::inspect(&mut c.session, &scope).await?;
        let actual = live_fingerprint(&live, &plan.exclude);
        if actual != plan.from_fingerprint {
            let expected = plan.from_fingerprint;
            return Err(DbError::StalePlan { expected, actual }.into());
        }
        return Ok(report);
    }
    progress(out, &format!("applying {} statement(s)", plan.statements.len()));
    match ptah_engine::apply(&mut c.session, plan, &apply_options(a, desired)).await {
        Ok(done) => {
            report.applied = done.applied;
            report.committed = done.committed;
        }
        Err(err) => match err.apply_report() {
            Some(partial) => {
                report.outcome = Outcome::Failed;
                report.applied = partial.applied;
                report.committed = partial.committed;
                report.failed_statement_index = partial.failed_statement_index;
                report.error = partial.error;
                return Ok(report);
            }
            None => return Err(err.into()),
        },
    }
    progress(out, "verifying: a fresh plan must be empty");
    match ptah_engine::verify(&mut c.session, desired, &scope, &c.options).await {
        Ok(()) => {
            report.verified = true;
            report.outcome = if plan.is_empty() {
                Outcome::UpToDate
            } else {
                Outcome::Applied
            };
        }
        Err(err @ DbError::NotConverged { .. }) => {
            report.outcome = Outcome::NotConverged;
            report.error = Some(err.to_string());
        }
        Err(err) => return Err(err.into()),
    }
    Ok(report)
}

fn text(plan: &Plan, r: &ApplyReport) -> String {
    let mut s = String::new();
    if r.outcome == Outcome::DryRun {
        if plan.is_empty() {
            s.push_str("Schema is synced: the plan is empty.\n");
        }
        for st in &plan.statements {
            let _ = writeln!(s, "-- {}: {}\n{};", severity_name(st.severity), st.reason, st.sql);
        }
        let _ = writeln!(s, "Dry run: the plan is current; nothing ran.");
        return s;
    }
    let outcome = match r.outcome {
        Outcome::Applied => "applied",
        Outcome::UpToDate => "up to date",
        Outcome::DryRun => "dry run",
        Outcome::Failed => "failed",
        Outcome::NotConverged => "not converged",
    };
    let _ = writeln!(s, "Outcome: {outcome}");
    let _ = writeln!(s, "{}", super::committed_text(r.applied, r.total));
    let _ = writeln!(s, "Verified: {}", if r.verified { "yes" } else { "no" });
    s
}
