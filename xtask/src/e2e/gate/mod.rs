//! `cargo xtask gate [--run ID]`: the strict support gate over one e2e run.
//!
//! It fails on any cell the run's scope owes that is missing, skipped, failed or stale (from
//! another run or commit, older than the run, or of another format), on a run of a dirty tree or
//! of a commit other than HEAD, on a matrix whose `lastVerified` is older than
//! [`MAX_VERIFIED_AGE_DAYS`], on any `e2e_` test that implements no phase of a suite, and on any
//! scenario of a cell's report that says its database failed or a password leaked (even when
//! nextest passed). It lists every failure, not the first one, after printing each cell's
//! scenario report as a table (`report.rs`).

use std::process::Command;

use anyhow::{Context, bail};
use jiff::civil::Date;
use ptah_testenv::{
    k8s::Matrix,
    step::{output, workspace_root},
};

use super::{
    cell::{self, Cell, FORMAT_VERSION, Outcome, Run, Scope},
    suites::{self, CiPath, Suite},
};

/// How old `lastVerified` in matrix/kubernetes.json may be.
pub const MAX_VERIFIED_AGE_DAYS: i32 = 35;

/// Arguments of `cargo xtask gate`.
#[derive(clap::Args)]
pub struct Args {
    /// The run to judge (a directory name under target/e2e/runs/); default: the latest run.
    #[arg(long)]
    run: Option<String>,
}

/// What the gate judges, read from the files and the repository.
pub struct Evidence<'a> {
    /// The run manifest.
    pub run: &'a Run,
    /// Every cell file of the run's directory.
    pub cells: &'a [Cell],
    /// The suites file.
    pub suites: &'a [Suite],
    /// The matrix file.
    pub matrix: &'a Matrix,
    /// `git rev-parse HEAD` now.
    pub head: &'a str,
    /// Today's date.
    pub today: Date,
    /// Every `e2e_` test the workspace lists.
    pub e2e_tests: &'a [String],
}

/// The cells a run's scope owes: `(suite, minor, engine)`.
fn owed<'a>(run: &Run, suites: &'a [Suite], matrix: &'a Matrix) -> Vec<(&'a Suite, &'a str, &'static str)> {
    let minors: Vec<&str> = match run.scope {
        Scope::Matrix => matrix.minors.iter().map(|m| m.minor.as_str()).collect(),
        Scope::Ci => matrix
            .minors
            .iter()
            .filter(|m| m.default)
            .map(|m| m.minor.as_str())
            .collect(),
        // Judged on what it set out to run (and refused as proof anyway).
        Scope::Picked => matrix
            .minors
            .iter()
            .filter(|m| run.minors.contains(&m.minor))
            .map(|m| m.minor.as_str())
            .collect(),
    };
    let mut owed = Vec::new();
    for suite in suites {
        if run.scope == Scope::Ci && suite.ci != CiPath::Default {
            continue;
        }
        if run.scope == Scope::Picked && !run.suites.contains(&suite.name) {
            continue;
        }
        for minor in &minors {
            for engine in &suite.engines {
                owed.push((suite, *minor, engine.name()));
            }
        }
    }
    owed
}

/// Every reason the evidence does not prove support; empty when it does.
pub fn evaluate(e: &Evidence<'_>) -> Vec<String> {
    let run = e.run;
    let mut failures = Vec::new();
    if run.scope == Scope::Picked {
        failures.push(format!(
            "run {} ran suites picked by hand ({}); the gate judges `cargo xtask e2e --matrix` or the default CI path",
            run.run_id,
            run.suites.join(", ")
        ));
    }
    if run.format_version != FORMAT_VERSION {
        failures.push(format!(
            "run {} has format {}, not {FORMAT_VERSION}",
            run.run_id, run.format_version
        ));
    }
    if run.dirty {
        failures.push(format!(
            "run {} ran a working tree that differed from commit {}: commit, then run again",
            run.run_id, run.commit
        ));
    }
    if run.commit != e.head {
        failures.push(format!(
            "run {} ran commit {}, but HEAD is {}: every cell is stale",
            run.run_id, run.commit, e.head
        ));
    }
    if run.scope == Scope::Matrix {
        match e.matrix.last_verified.parse::<Date>() {
            Ok(date) => {
                let age = (e.today - date).get_days();
                if !(0..=MAX_VERIFIED_AGE_DAYS).contains(&age) {
                    failures.push(format!(
                        "matrix/kubernetes.json lastVerified is {date} ({age} days before today, limit {MAX_VERIFIED_AGE_DAYS}): \
                         run `cargo xtask e2e --matrix`, and once `cargo xtask gate` passes set lastVerified to today's date"
                    ));
                }
            }
            Err(err) => failures.push(format!(
                "matrix/kubernetes.json lastVerified {:?} is not a YYYY-MM-DD date: {err}",
                e.matrix.last_verified
            )),
        }
    }
    for (suite, minor, engine) in owed(run, e.suites, e.matrix) {
        let key = cell::key(&suite.name, minor, &run.provider, engine);
        let Some(found) = e.cells.iter().find(|c| c.key() == key) else {
            failures.push(format!("{key}: missing (no result file)"));
            continue;
        };
        failures.extend(judge_cell(run, suite, found));
    }
    for test in e.e2e_tests {
        if suites::phase_of(test, e.suites).is_none() {
            failures.push(format!(
                "test {test} implements no phase of {}: add its phase to a suite or rename it",
                suites::SUITES_FILE
            ));
        }
    }
    failures
}

fn judge_cell(run: &Run, suite: &Suite, found: &Cell) -> Vec<String> {
    let key = found.key();
    if found.run_id != run.run_id || found.commit != run.commit {
        return vec![format!(
            "{key}: stale (from run {} at commit {}, not run {} at {})",
            found.run_id, found.commit, run.run_id, run.commit
        )];
    }
    if found.started_at < run.started_at {
        return vec![format!("{key}: stale (started before run {} did)", run.run_id)];
    }
    if found.format_version != FORMAT_VERSION {
        return vec![format!(
            "{key}: stale (format {}, not {FORMAT_VERSION})",
            found.format_version
        )];
    }
    let mut failures = Vec::new();
    for name in &suite.phases {
        let role = if suite.prepare.contains(name) {
            " (preparation)"
        } else {
            ""
        };
        let Some(phase) = found.phases.iter().find(|p| &p.name == name) else {
            failures.push(format!("{key}: phase {name}{role} not recorded"));
            continue;
        };
        let why = match (phase.outcome, phase.tests) {
            (Outcome::Pass, 0) => Some("passed with zero tests".to_owned()),
            (Outcome::Pass, _) => None,
            (Outcome::Fail, _) => Some(match &phase.reason {
                Some(reason) => format!("failed ({reason})"),
                None => "failed".to_owned(),
            }),
            (Outcome::Skip, _) => Some(format!(
                "skipped ({})",
                phase.reason.as_deref().unwrap_or("no reason given")
            )),
            (Outcome::Missing, _) => Some("missing (no test implements it)".to_owned()),
        };
        if let Some(why) = why {
            failures.push(format!("{key}: phase {name}{role} {why}"));
        }
    }
    if failures.is_empty() && found.outcome != Outcome::Pass {
        failures.push(format!(
            "{key}: the cell says {:?} although every phase passed",
            found.outcome
        ));
    }
    // Belt and braces: a scenario's own verdict fails the cell whatever nextest said.
    failures.extend(report::failures(found));
    failures
}

/// Every `e2e_` test of the workspace, as nextest lists them.
pub fn list_e2e_tests() -> anyhow::Result<Vec<String>> {
    let text = output(crate::tools::nextest()?.current_dir(workspace_root()).args([
        "list",
        "--workspace",
        "-E",
        "test(/(^|::)e2e_/)",
        "--message-format",
        "oneline",
    ]))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .map(str::to_owned)
        .collect())
}

fn head() -> anyhow::Result<String> {
    Ok(output(
        Command::new("git")
            .current_dir(workspace_root())
            .args(["rev-parse", "HEAD"]),
    )?
    .trim()
    .to_owned())
}

/// Judges one run; fails listing every failure.
pub fn check(run_id: &str) -> anyhow::Result<()> {
    let root = workspace_root();
    let (run, cells) = cell::load_run(&root, run_id)?;
    let suites = suites::load(&root)?;
    let matrix = Matrix::load(&root)?;
    let head = head()?;
    let e2e_tests = list_e2e_tests()?;
    // The per-scenario report, on stdout so it can be kept: `cargo xtask gate > report.md`.
    for table in cells.iter().filter_map(report::table) {
        println!("{table}");
    }
    let failures = evaluate(&Evidence {
        run: &run,
        cells: &cells,
        suites: &suites,
        matrix: &matrix,
        head: &head,
        today: jiff::Zoned::now().date(),
        e2e_tests: &e2e_tests,
    });
    if failures.is_empty() {
        eprintln!(
            "gate: run {} ({:?}, {} cells, {} e2e tests mapped) passes",
            run.run_id,
            run.scope,
            cells.len(),
            e2e_tests.len()
        );
        return Ok(());
    }
    for failure in &failures {
        eprintln!("gate: FAIL {failure}");
    }
    bail!(
        "the gate failed on {} point(s) of run {}",
        failures.len(),
        run.run_id
    )
}

/// Runs `cargo xtask gate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    let run_id = match args.run {
        Some(id) => id,
        None => cell::latest_run(&root)?,
    };
    check(&run_id).context("cargo xtask gate")
}

mod report;
#[cfg(test)]
mod tests;
