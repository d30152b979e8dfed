//! `cargo xtask test`: the one command CI and the README run.

use crate::step::{cargo, step, workspace_root};

/// Arguments of `cargo xtask test`.
#[derive(clap::Args)]
pub struct Args {
    /// Extra arguments passed to `cargo nextest run`.
    #[arg(last = true)]
    nextest_args: Vec<String>,
}

/// Runs every check in order and stops at the first failure.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    step("cargo fmt --check", || crate::step::run(cargo().current_dir(&root).args(["fmt", "--all", "--", "--check"])))?;
    step("cargo clippy -D warnings", || {
        crate::step::run(cargo()
            .current_dir(&root)
            .args(["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))
    })?;
    step("crds --check", || crate::crds::run(crate::crds::Args::check()))?;
    step("deps-check", || crate::depscheck::run(crate::depscheck::Args::default()))?;
    step("cargo nextest run", || {
        crate::step::run(cargo()
            .current_dir(&root)
            .args(["nextest", "run", "--workspace", "--profile", "ci"])
            .args(&args.nextest_args))
    })
}
