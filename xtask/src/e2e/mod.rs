//! `cargo xtask e2e`: runs suites of `support/e2e-suites.json` against real clusters and writes
//! one result file per cell (see [`cell`]).
//!
//! * `--suite NAME[,NAME]` runs the named suites on one minor (`--kubernetes`, default: the
//!   matrix default), keeping a running cluster of that minor;
//! * `--ci` runs the suites marked `ci: default` on the default minor (`cargo xtask test` does);
//! * `--matrix [--kubernetes 1.36,…] [--suite …]` runs them on every minor of
//!   `matrix/kubernetes.json`, bringing the cluster down and up per minor.
//!
//! A phase `cert-rotation` is the set of tests named `e2e_cert_rotation_…` in any workspace
//! crate (run with nextest); a phase with no such test is recorded `missing`, a suite whose
//! `needs` the provider cannot meet is recorded `skip` with the reason: a gap is never green.
//! Every Helm release of the chart is uninstalled before and after each suite, whatever its
//! outcome, so one failure never causes the next.

pub mod cell;
mod cleanup;
pub mod gate;
mod phase;
mod plan;
mod provide;
pub mod suites;
mod versions;
pub mod workflow;

use std::{
    path::Path,
    process::Command,
    time::{Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::bail;
use cell::{Cell, FORMAT_VERSION, Outcome, Run};
use ptah_testenv::{
    k8s::{Matrix, Minor},
    kind,
    step::{output, run as run_command, step, workspace_root},
};
use suites::Suite;

/// Where the cluster comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Provider {
    /// `cargo xtask cluster up` on this machine (components built from Go modules).
    Local,
    /// One kind cluster per minor, for machines with Docker (see ptah_testenv::kind).
    Kind,
}

impl Provider {
    /// The name in result files.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Local => "local",
            Provider::Kind => "kind",
        }
    }

    /// What a suite may need (`needs` in the suites file) that this provider offers, with the
    /// cluster it provided in `cluster_dir`.
    fn offers(self, need: &str, cluster_dir: &Path) -> bool {
        match self {
            // The isolation worker when `cluster up --nodes 2` started it (see provide).
            Provider::Local => {
                need == "full-tier"
                    || (need == provide::ISOLATION_WORKER && provide::has_isolation_worker(cluster_dir))
            }
            Provider::Kind => matches!(need, "full-tier" | "isolation-worker"),
        }
    }
}

/// Arguments of `cargo xtask e2e`.
#[derive(clap::Args)]
pub struct Args {
    /// Suites by name (comma-separated or repeated); with --matrix, a subset of them.
    #[arg(long, value_delimiter = ',')]
    pub(crate) suite: Vec<String>,
    /// Every suite (or the --suite subset) on every minor (or the --kubernetes subset).
    #[arg(long, conflicts_with = "ci")]
    pub(crate) matrix: bool,
    /// The default CI path: the suites marked `ci: default`, on the default minor.
    #[arg(long, conflicts_with = "suite")]
    pub(crate) ci: bool,
    /// Where the cluster comes from.
    #[arg(long, value_enum, default_value_t = Provider::Local)]
    pub(crate) provider: Provider,
    /// Kubernetes minors from matrix/kubernetes.json (comma-separated); default: the default
    /// minor, or every minor with --matrix.
    #[arg(long, value_delimiter = ',')]
    pub(crate) kubernetes: Vec<String>,
}

impl Args {
    /// The default CI path on the local provider (`--ci`).
    pub fn ci() -> Self {
        Self {
            suite: Vec::new(),
            matrix: false,
            ci: true,
            provider: Provider::Local,
            kubernetes: Vec::new(),
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<String> {
    Ok(output(Command::new("git").current_dir(root).args(args))?
        .trim()
        .to_owned())
}

/// The default minor's local full-tier cluster with the suites' tools and this checkout's images
/// (what `cargo xtask demo` needs); returns the cluster directory.
pub fn provide_local(minor: &Minor, matrix: &Matrix, root: &Path) -> anyhow::Result<std::path::PathBuf> {
    provide::provide(Provider::Local, minor, matrix, root, false, None, false)
}

/// Runs `cargo xtask e2e`.
pub fn run(args: Args) -> anyhow::Result<()> {
    run_plan(&args).map(|_| ())
}

/// Runs the invocation and returns its run id; fails when any cell did not pass.
pub fn run_plan(args: &Args) -> anyhow::Result<String> {
    let root = workspace_root();
    let matrix = Matrix::load(&root)?;
    let all = suites::load(&root)?;
    let plan = plan::plan(args, &matrix, &all)?;
    let commit = git(&root, &["rev-parse", "HEAD"])?;
    let changed = git(&root, &["status", "--porcelain", "--untracked-files=no"])?;
    let dirty = !changed.is_empty();
    if dirty {
        // The gate refuses a dirty run; on the CI path say so before half an hour of suites.
        if args.ci {
            bail!("the working tree differs from HEAD, so the gate would refuse this run:\n{changed}");
        }
        eprintln!("e2e: the working tree differs from HEAD; the gate will refuse this run:\n{changed}");
    }
    let started_at = unix_now();
    let run = Run {
        format_version: FORMAT_VERSION,
        run_id: format!("{started_at}-{}", commit.get(..12).unwrap_or(&commit)),
        commit,
        dirty,
        started_at,
        scope: plan.scope,
        provider: args.provider.name().to_owned(),
        minors: plan.minors.iter().map(|m| m.minor.clone()).collect(),
        suites: plan.suites.iter().map(|s| s.name.clone()).collect(),
    };
    let run_dir = cell::start_run(&root, &run)?;
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
        true => Some(provide::previous_release(&root)?),
        false => None,
    };
    // A suite that needs the isolation worker makes the local provider start it.
    let isolation = plan
        .suites
        .iter()
        .any(|s| s.needs.iter().any(|n| n == provide::ISOLATION_WORKER));
    let mut failed = Vec::new();
    for minor in &plan.minors {
        let provided = step(
            &format!("{} cluster for Kubernetes {}", args.provider.name(), minor.minor),
            || {
                provide::provide(
                    args.provider,
                    minor,
                    &matrix,
                    &root,
                    plan.minors.len() > 1,
                    previous.as_deref(),
                    isolation,
                )
            },
        );
        let cluster_dir = match provided {
            Ok(dir) => dir,
            Err(err) => {
                // Every cell of this minor is recorded as failed with the reason, and the run goes on.
                for suite in &plan.suites {
                    for engine in &suite.engines {
                        let cell = failed_cell(&run, suite, minor, *engine, &format!("{err:#}"));
                        write_cell_noting(&run_dir, &cell, &mut failed)?;
                    }
                }
                continue;
            }
        };
        let versions = versions::collect(&cluster_dir, minor, &matrix, args.provider);
        for suite in &plan.suites {
            let at = CellAt {
                run: &run,
                run_dir: &run_dir,
                minor,
                cluster_dir: &cluster_dir,
                versions: &versions,
                listed: &listed,
            };
            for cell in run_suite(&at, suite, args.provider, &matrix) {
                write_cell_noting(&run_dir, &cell, &mut failed)?;
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
    Ok(run.run_id)
}

/// Where a suite's cells run.
struct CellAt<'a> {
    run: &'a Run,
    run_dir: &'a Path,
    minor: &'a Minor,
    cluster_dir: &'a Path,
    versions: &'a cell::Versions,
    listed: &'a [String],
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
        return suite
            .engines
            .iter()
            .map(|engine| {
                let phases = suite
                    .phases
                    .iter()
                    .map(|p| phase::skipped(suite, p, &reason))
                    .collect();
                let mut cell = new_cell(at.run, suite, at.minor, *engine, unix_now(), phases);
                cell.versions = at.versions.clone();
                cell
            })
            .collect();
    }
    cleanup::releases(at.cluster_dir, at.minor, matrix, &suite.name, "before");
    let cells = suite
        .engines
        .iter()
        .map(|engine| {
            let started_at = unix_now();
            let started = Instant::now();
            let key = cell::key(&suite.name, &at.minor.minor, &at.run.provider, engine.name());
            let phases = suite
                .phases
                .iter()
                .map(|p| {
                    let report = cell::scenarios_file(at.run_dir, &key, p);
                    phase::run(suite, p, *engine, at.cluster_dir, &report, at.listed)
                })
                .collect();
            let mut cell = new_cell(at.run, suite, at.minor, *engine, started_at, phases);
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
