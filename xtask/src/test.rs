//! `cargo xtask test`: the one command CI and the README run.

use ptah_testenv::step::{cargo, run as run_command, step, workspace_root};

use crate::tools;

/// The nextest filter of every test that is not an e2e phase (those run through the driver).
const NOT_E2E: &str = "not test(/(^|::)e2e_/)";

/// Arguments of `cargo xtask test`.
#[derive(clap::Args)]
pub struct Args {
    /// Stop after the ordinary tests: skip the default CI path's e2e suites and their gate
    /// (for a quick local loop on the API tier; CI never passes it).
    #[arg(long)]
    no_e2e: bool,
    /// Skip the fuzz step (`cargo xtask fuzz --seconds 20`; for a quick local loop, CI never
    /// passes it).
    #[arg(long)]
    no_fuzz: bool,
    /// Extra arguments passed to `cargo nextest run`.
    #[arg(last = true)]
    nextest_args: Vec<String>,
}

/// Runs every check in order and stops at the first failure.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    step("cargo-nextest present", tools::ensure_nextest)?;
    // The chart's render tests run Helm 3 and Helm 4; each is built from its Go module once and
    // cached.
    step("helm and helm4 present", ensure_helm)?;
    step("cargo fmt --check", || {
        run_command(cargo().current_dir(&root).args(["fmt", "--all", "--", "--check"]))
    })?;
    step("cargo clippy -D warnings", || {
        run_command(cargo().current_dir(&root).args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    step("crds --check", || crate::crds::run(crate::crds::Args::check()))?;
    step("deps-check", || {
        crate::depscheck::run(crate::depscheck::Args::default())
    })?;
    step("cargo xtask docs", || {
        crate::docs::run(crate::docs::Args::default())
    })?;
    step("cargo nextest run (all but e2e)", || {
        run_command(
            tools::nextest()?
                .current_dir(&root)
                .args(["run", "--workspace", "--profile", "ci", "-E", NOT_E2E])
                .args(&args.nextest_args),
        )
    })?;
    // Every fuzz target for 20 s after the unit tests and before the slow e2e suites.
    if args.no_fuzz {
        eprintln!("    --no-fuzz: the fuzz targets did not run");
    } else {
        step("cargo xtask fuzz --seconds 20", || {
            crate::fuzz::run(crate::fuzz::Args::ci())
        })?;
    }
    if args.no_e2e {
        eprintln!("    --no-e2e: the default CI path's e2e suites and their gate did not run");
        return Ok(());
    }
    // The driver records every cell even when one fails; the gate then lists every failure.
    let run = step("e2e suites of the default CI path", || {
        crate::e2e::run_plan(&crate::e2e::Args::ci())
    });
    let run_id = match run {
        Ok(id) => id,
        Err(err) => {
            if let Ok(id) = crate::e2e::cell::latest_run(&root) {
                let _ = crate::e2e::gate::check(&id);
            }
            return Err(err);
        }
    };
    step("gate over the default CI path", || {
        crate::e2e::gate::check(&run_id)
    })
}

/// A fresh machine has no helm in the cache; build the pinned Helm 3 and Helm 4 (minutes, once).
fn ensure_helm() -> anyhow::Result<()> {
    use ptah_testenv::k8s::{Binaries, Component, matrix::Matrix};
    let root = workspace_root();
    let matrix = Matrix::load(&root)?;
    let minor = matrix.select(None)?;
    Binaries::new(minor, &matrix)?.ensure(&[Component::Helm, Component::Helm4])
}
