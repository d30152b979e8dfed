//! Runs an invocation's cells, minor by minor, and writes one result file per cell.

use std::{collections::BTreeSet, path::Path, time::Instant};

use anyhow::bail;
use ptah_testenv::{
    k8s::{Matrix, Minor},
    step::step,
};

use super::{
    Args, Provider,
    cell::{self, Cell, FORMAT_VERSION, Outcome, Run},
    cleanup, gate, phase, plan, provide,
    suites::{self, Suite},
    unix_now, versions,
};

/// Runs the plan's cells that `recorded` does not name into `run_dir`; returns the run id and
/// fails when any cell of this invocation did not pass.
pub(super) fn run_cells(
    args: &Args,
    root: &Path,
    matrix: &Matrix,
    plan: &plan::Plan,
    run: &Run,
    run_dir: &Path,
    recorded: &BTreeSet<String>,
) -> anyhow::Result<String> {
    let pending = |minor: &Minor, suite: &Suite| {
        suite
            .engines
            .iter()
            .any(|e| !recorded.contains(&cell::key(&suite.name, &minor.minor, &run.provider, e.name())))
    };
    eprintln!(
        "e2e run {} ({:?}): {} on {}",
        run.run_id,
        run.scope,
        run.suites.join(", "),
        run.minors.join(", ")
    );
    // One listing for the whole run (it also builds the test binaries once).
    let listed = gate::list_e2e_tests()?;
    // The upgrade phase installs the previous release first: its images are built too.
    let previous = match plan
        .suites
        .iter()
        .any(|s| s.phases.iter().any(|p| p == "upgrade"))
    {
        true => Some(provide::previous_release(root)?),
        false => None,
    };
    // A suite that needs the isolation worker makes the local provider start it.
    let isolation = plan
        .suites
        .iter()
        .any(|s| s.needs.iter().any(|n| n == provide::ISOLATION_WORKER));
    let mut failed = Vec::new();
    for minor in &plan.minors {
        let suites: Vec<&Suite> = plan.suites.iter().filter(|s| pending(minor, s)).collect();
        if suites.is_empty() {
            eprintln!(
                "e2e: every cell on Kubernetes {} is recorded already",
                minor.minor
            );
            continue;
        }
        let provided = step(
            &format!("{} cluster for Kubernetes {}", args.provider.name(), minor.minor),
            || {
                provide::provide(
                    args.provider,
                    minor,
                    matrix,
                    root,
                    // A resumed run may find another minor's cluster left running.
                    plan.minors.len() > 1 || args.resume.is_some(),
                    previous.as_deref(),
                    isolation,
                )
            },
        );
        let cluster_dir = match provided {
            Ok(dir) => dir,
            Err(err) => {
                // Every cell of this minor is recorded as failed with the reason, and the run goes on.
                for suite in &suites {
                    for engine in &suite.engines {
                        let cell = failed_cell(run, suite, minor, *engine, &format!("{err:#}"));
                        write_cell_noting(run_dir, &cell, &mut failed)?;
                    }
                }
                continue;
            }
        };
        let versions = versions::collect(&cluster_dir, minor, matrix, args.provider);
        for suite in suites {
            let at = CellAt {
                run,
                run_dir,
                minor,
                cluster_dir: &cluster_dir,
                versions: &versions,
                listed: &listed,
                recorded,
            };
            for cell in run_suite(&at, suite, args.provider, matrix) {
                write_cell_noting(run_dir, &cell, &mut failed)?;
            }
        }
    }
    if !failed.is_empty() {
        bail!(
            "e2e run {}: {} cell(s) did not pass: {} (results in {})",
            run.run_id,
            failed.len(),
            failed.join(", "),
            run_dir.display()
        );
    }
    eprintln!(
        "e2e run {}: every cell passed ({})",
        run.run_id,
        run_dir.display()
    );
    Ok(run.run_id.clone())
}

/// Where a suite's cells run.
struct CellAt<'a> {
    run: &'a Run,
    run_dir: &'a Path,
    minor: &'a Minor,
    cluster_dir: &'a Path,
    versions: &'a cell::Versions,
    listed: &'a [String],
    /// Cells a resumed run has already: not run again.
    recorded: &'a BTreeSet<String>,
}

impl CellAt<'_> {
    /// The suite's engines whose cell on this minor is still to run.
    fn engines(&self, suite: &Suite) -> Vec<suites::Engine> {
        let key =
            |e: &suites::Engine| cell::key(&suite.name, &self.minor.minor, &self.run.provider, e.name());
        suite
            .engines
            .iter()
            .copied()
            .filter(|e| !self.recorded.contains(&key(e)))
            .collect()
    }
}

/// Runs one suite's cells (one per engine) between two cleanups, or records them skipped when
/// the provider lacks what the suite needs.
fn run_suite(at: &CellAt<'_>, suite: &Suite, provider: Provider, matrix: &Matrix) -> Vec<Cell> {
    let missing: Vec<&str> = suite
        .needs
        .iter()
        .map(String::as_str)
        .filter(|n| !provider.offers(n, at.cluster_dir))
        .collect();
    if !missing.is_empty() {
        let reason = format!("the {} provider has no {}", provider.name(), missing.join(", "));
        return at
            .engines(suite)
            .into_iter()
            .map(|engine| {
                let phases = suite
                    .phases
                    .iter()
                    .map(|p| phase::skipped(suite, p, &reason))
                    .collect();
                let mut cell = new_cell(at.run, suite, at.minor, engine, unix_now(), phases);
                cell.versions = at.versions.clone();
                cell
            })
            .collect();
    }
    cleanup::releases(at.cluster_dir, at.minor, matrix, &suite.name, "before");
    let cells = at
        .engines(suite)
        .into_iter()
        .map(|engine| {
            let started_at = unix_now();
            let started = Instant::now();
            let key = cell::key(&suite.name, &at.minor.minor, &at.run.provider, engine.name());
            let phases = suite
                .phases
                .iter()
                .map(|p| {
                    let report = cell::scenarios_file(at.run_dir, &key, p);
                    phase::run(suite, p, engine, at.cluster_dir, &report, at.listed)
                })
                .collect();
            let mut cell = new_cell(at.run, suite, at.minor, engine, started_at, phases);
            cell.duration_seconds = started.elapsed().as_secs_f64();
            cell.versions = at.versions.clone();
            cell
        })
        .collect();
    cleanup::releases(at.cluster_dir, at.minor, matrix, &suite.name, "after");
    cells
}

fn write_cell_noting(run_dir: &Path, cell: &Cell, failed: &mut Vec<String>) -> anyhow::Result<()> {
    let path = cell::write_cell(run_dir, cell)?;
    let verdicts: Vec<String> = cell
        .phases
        .iter()
        .map(|p| format!("{} {:?} {:.0}s", p.name, p.outcome, p.duration_seconds))
        .collect();
    eprintln!(
        "    cell {}: {:?} [{}] ({})",
        cell.key(),
        cell.outcome,
        verdicts.join("; "),
        path.display()
    );
    if cell.outcome != Outcome::Pass {
        failed.push(cell.key());
    }
    Ok(())
}

/// A cell of this run, its outcome derived from its phases.
fn new_cell(
    run: &Run,
    suite: &Suite,
    minor: &Minor,
    engine: suites::Engine,
    started_at: u64,
    phases: Vec<cell::Phase>,
) -> Cell {
    Cell {
        format_version: FORMAT_VERSION,
        run_id: run.run_id.clone(),
        commit: run.commit.clone(),
        suite: suite.name.clone(),
        minor: minor.minor.clone(),
        provider: run.provider.clone(),
        engine: engine.name().to_owned(),
        started_at,
        duration_seconds: 0.0,
        outcome: Cell::outcome_of(&phases),
        versions: cell::Versions::default(),
        phases,
    }
}

/// Every phase of the cell failed because its minor's cluster could not be provided.
fn failed_cell(run: &Run, suite: &Suite, minor: &Minor, engine: suites::Engine, reason: &str) -> Cell {
    let phases = suite
        .phases
        .iter()
        .map(|p| cell::Phase {
            outcome: Outcome::Fail,
            reason: Some(format!("the cluster could not be provided: {reason}")),
            ..phase::skipped(suite, p, "")
        })
        .collect();
    new_cell(run, suite, minor, engine, unix_now(), phases)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptah_testenv::step::workspace_root;

    #[test]
    fn a_minor_without_a_cluster_fails_every_phase_with_the_reason() {
        let root = workspace_root();
        let matrix = Matrix::load(&root).expect("matrix");
        let all = suites::load(&root).expect("suites");
        let run = Run {
            format_version: FORMAT_VERSION,
            run_id: "1-abc".to_owned(),
            commit: "abc".to_owned(),
            dirty: false,
            started_at: 1,
            scope: cell::Scope::Matrix,
            provider: "local".to_owned(),
            minors: vec!["1.35".to_owned()],
            suites: vec![all[0].name.clone()],
        };
        let cell = failed_cell(&run, &all[0], &matrix.minors[0], all[0].engines[0], "no kubelet");
        assert_eq!(cell.outcome, Outcome::Fail);
        assert!(
            cell.phases.iter().all(|p| p.outcome == Outcome::Fail
                && p.reason.as_deref().is_some_and(|r| r.contains("no kubelet")))
        );
    }
}
