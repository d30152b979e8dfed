//! `cargo xtask`: the project's developer and CI tasks.
//!
//! Thin dispatch: the CRDs, the dependency check, the test command, the docs site, the fuzz runner, the e2e
//! driver, the gate, the CI workflow and the operator demo's stages live here; the development
//! environment (`services`, `k8s-bin`, `cluster`, `images`) is the `ptah-testenv` crate and the
//! benchmarks and the executor demo are `ptah-bench`, both reached by forwarding, so `cargo xtask
//! crds --check` compiles neither a database driver nor the environment's binary.

mod bench;
mod crds;
mod demo;
mod depscheck;
mod docs;
mod e2e;
mod forward;
mod fuzz;
mod test;
mod tools;

use clap::{Parser, Subcommand};
use forward::Forwarded;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ptah-operator developer and CI tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Write charts/ptah-operator/files/crds/*.yaml from the Rust types (or check them with --check).
    Crds(crds::Args),
    /// Fail when a binary's dependency closure crosses a boundary of DESIGN.md section 4.
    DepsCheck(depscheck::Args),
    /// The README's test command: fmt, clippy, crds --check, deps-check, docs, nextest, fuzz, e2e suites.
    Test(test::Args),
    /// Build docs/ as an mdBook site into target/book and check every relative link.
    Docs(docs::Args),
    /// Build the cargo-fuzz targets of fuzz/ (nightly) and run each for a while; fail on a crash.
    Fuzz(fuzz::Args),
    /// Run suites of support/e2e-suites.json against a cluster and write their result files.
    E2e(e2e::Args),
    /// Fail on any missing, skipped, failed or stale cell of one e2e matrix run.
    Gate(e2e::gate::Args),
    /// Write .github/workflows/e2e.yml from matrix/ and support/ (or check it with --check).
    CiWorkflow(e2e::workflow::Args),
    /// Start, stop or describe the local test services (ptah-testenv).
    Services(Forwarded),
    /// Build the pinned Kubernetes programs, etcd, helm 3 and 4, oras and promtool (ptah-testenv).
    K8sBin(Forwarded),
    /// Start, stop or describe a real Kubernetes on loopback (ptah-testenv).
    Cluster(Forwarded),
    /// Build, import and push the workspace's images (ptah-testenv).
    Images(Forwarded),
    /// Benchmarks measured as ratios against a same-run baseline (ptah-bench, release build);
    /// `bench converge` first provides the services, the local cluster and the images.
    Bench(Forwarded),
    /// The operator demo: services, cluster, images, helm install, a person with kubectl and
    /// kubectl ptah through checked steps recorded as casts (`--executor`: the executor alone).
    Demo(demo::Args),
}

fn main() -> anyhow::Result<()> {
    use forward::Profile::Dev;
    match Cli::parse().task {
        Task::Crds(args) => crds::run(args),
        Task::DepsCheck(args) => depscheck::run(args),
        Task::Test(args) => test::run(args),
        Task::Docs(args) => docs::run(args),
        Task::Fuzz(args) => fuzz::run(args),
        Task::E2e(args) => e2e::run(args),
        Task::Gate(args) => e2e::gate::run(args),
        Task::CiWorkflow(args) => e2e::workflow::run(args),
        Task::Services(args) => forward::exec(forward::TESTENV, "services", args, Dev),
        Task::K8sBin(args) => forward::exec(forward::TESTENV, "k8s-bin", args, Dev),
        Task::Cluster(args) => forward::exec(forward::TESTENV, "cluster", args, Dev),
        Task::Images(args) => forward::exec(forward::TESTENV, "images", args, Dev),
        Task::Bench(args) => bench::run(args),
        Task::Demo(args) => demo::run(args),
    }
}
