//! `cargo xtask demo`: the operator as people meet it. It starts the test services and the local
//! full-tier cluster, builds and pushes the images, then runs the `e2e_demo_…` test of
//! `ptah-apitests` with its output shown: `helm install`, then a person with `kubectl` and
//! `kubectl ptah` through eight checked steps (docs/first-hour.md), each recorded as an asciinema
//! cast in `target/demo/`. `--executor` is the earlier walkthrough of the `ptah` executor alone.

use std::time::Instant;

use ptah_testenv::{
    k8s::{Binaries, Component, Matrix},
    step::{cargo, run as run_command, step, workspace_root},
};

use crate::{e2e, forward};

/// Arguments of `cargo xtask demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Only the executor walkthrough: `ptah` against the local databases and registry, no cluster.
    #[arg(long)]
    executor: bool,
}

/// Runs the demo.
pub fn run(args: Args) -> anyhow::Result<()> {
    if args.executor {
        return forward::exec(
            forward::BENCH,
            "demo",
            forward::Forwarded::default(),
            forward::Profile::Dev,
        );
    }
    let started = Instant::now();
    let root = workspace_root();
    let matrix = Matrix::load(&root)?;
    let minor = matrix.select(None)?;
    let cold = !Binaries::new(minor, &matrix)?
        .path(Component::KubeApiserver)
        .exists();
    if cold {
        // The README states the measured cold figure; say it here too, before the silence.
        eprintln!(
            "demo: a first run on this machine builds Kubernetes {} from its Go modules, helm, the \
             workspace and its images. On 2 cores that took about 45 minutes (later runs: a few \
             minutes). Each stage below prints as it starts and how long it took.",
            minor.minor
        );
    }
    step("test services (PostgreSQL, MariaDB, OCI registries)", || {
        run_command(&mut forward::command(
            forward::TESTENV,
            "services",
            &["up".to_owned()],
            forward::Profile::Dev,
        ))
    })?;
    step("the local cluster, its tools and the images", || {
        e2e::provide_local(minor, &matrix, &root)
    })?;
    step(
        "the demo: helm install, then a person with kubectl and kubectl ptah",
        || {
            run_command(cargo().current_dir(&root).args([
                "test",
                "-p",
                "ptah-apitests",
                "--test",
                "e2e_demo",
                "--",
                "--nocapture",
            ]))
        },
    )?;
    eprintln!(
        "demo: every step held in {:.0} s; casts and summary in {} (play one with `asciinema play`)",
        started.elapsed().as_secs_f64(),
        root.join("target/demo").display()
    );
    Ok(())
}
