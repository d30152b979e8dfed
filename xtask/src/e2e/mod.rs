//! `cargo xtask e2e`: runs suites of `support/e2e-suites.json` against real clusters and writes
//! one result file per cell (see [`cell`]).
//!
//! * `--suite NAME[,NAME]` runs the named suites on one minor (`--kubernetes`, default: the
//!   matrix default), keeping a running cluster of that minor;
//! * `--ci` runs the suites marked `ci: default` on the default minor (`cargo xtask test` does);
//! * `--matrix [--kubernetes 1.36,…] [--suite …]` runs them on every minor of
//!   `matrix/kubernetes.json`, bringing the cluster down and up per minor;
//! * `--resume <run id>` continues a run that was cut off, at its commit, running only the cells
//!   it has no result for (see [`resume`]).
//!
//! A phase `cert-rotation` is the set of tests named `e2e_cert_rotation_…` in any workspace
//! crate (run with nextest); a phase with no such test is recorded `missing`, a suite whose
//! `needs` the provider cannot meet is recorded `skip` with the reason: a gap is never green.
//! Every Helm release of the chart is uninstalled before and after each suite, whatever its
//! outcome, so one failure never causes the next.

pub mod cell;
mod cleanup;
mod drive;
pub mod gate;
mod phase;
mod plan;
mod provide;
mod resume;
pub mod suites;
mod versions;
pub mod workflow;

use std::{
    collections::BTreeSet,
    path::Path,
    process::Command,
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::bail;
use cell::{FORMAT_VERSION, Run};
use ptah_testenv::{
    k8s::{Matrix, Minor},
    kind,
    step::{output, run as run_command, workspace_root},
};

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
    /// Continues this run at its commit: only the cells it has no result for run; a recorded
    /// failure stays.
    #[arg(long, conflicts_with_all = ["suite", "matrix", "ci", "kubernetes"])]
    pub(crate) resume: Option<String>,
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
            resume: None,
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
    let commit = git(&root, &["rev-parse", "HEAD"])?;
    let changed = git(&root, &["status", "--porcelain", "--untracked-files=no"])?;
    let dirty = !changed.is_empty();
    if let Some(id) = &args.resume {
        let resumed = resume::resume(&root, id, args.provider.name(), &matrix, &all, &commit, dirty)?;
        let run_dir = cell::runs_dir(&root).join(id);
        return drive::run_cells(
            args,
            &root,
            &matrix,
            &resumed.plan,
            &resumed.run,
            &run_dir,
            &resumed.recorded,
        );
    }
    let plan = plan::plan(args, &matrix, &all)?;
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
    drive::run_cells(args, &root, &matrix, &plan, &run, &run_dir, &BTreeSet::new())
}
