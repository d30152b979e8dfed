//! `cargo xtask bench`: forwarded to the release `ptah-bench`. `bench converge` measures the
//! operator installed on the local full-tier cluster, so, like `cargo xtask demo`, it first
//! starts the test services, the cluster and its tools, and builds and pushes the images.

use ptah_testenv::{
    k8s::Matrix,
    step::{run as run_command, step, workspace_root},
};

use crate::{e2e, forward};

/// Runs `cargo xtask bench <what> …`.
pub fn run(args: forward::Forwarded) -> anyhow::Result<()> {
    if args.first() == Some("converge") && !args.asks_for_help() {
        let root = workspace_root();
        let matrix = Matrix::load(&root)?;
        let minor = matrix.select(None)?;
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
    }
    forward::exec(forward::BENCH, "bench", args, forward::Profile::Release)
}
