//! `cargo xtask`: the project's developer and CI tasks.

mod bench;
mod cluster;
mod crds;
mod demo;
mod depscheck;
mod e2e;
mod images;
mod k8s;
mod services;
mod step;
mod test;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ptah-operator developer and CI tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Write charts/ptah-operator/crds/*.yaml from the Rust types (or check them with --check).
    Crds(crds::Args),
    /// Start, stop or describe the local test services (PostgreSQL, MariaDB, OCI registry).
    Services(services::Args),
    /// Fail when a binary's dependency closure crosses a boundary of DESIGN.md section 4.
    DepsCheck(depscheck::Args),
    /// The README's test command: fmt, clippy, crds --check, deps-check, nextest.
    Test(test::Args),
    /// Benchmarks measured as ratios against a baseline in the same run (`bench executor`).
    Bench(bench::Args),
    /// Build (or reuse) the pinned Kubernetes programs, etcd, helm, oras and promtool from their Go modules.
    K8sBin(k8s::Args),
    /// Start, stop or describe a real single-node Kubernetes on loopback (`--tier api|full`).
    Cluster(cluster::Args),
    /// Run one suite of support/e2e-suites.json against a cluster and write its result file.
    E2e(e2e::Args),
    /// Build the data-plane image as an OCI layout, import it into the local cluster and push it.
    Images(images::Args),
    /// Run the executor end to end against the local services (needs `cargo xtask services up`).
    Demo(demo::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Crds(args) => crds::run(args),
        Task::Services(args) => services::run(args),
        Task::DepsCheck(args) => depscheck::run(args),
        Task::Test(args) => test::run(args),
        Task::Bench(args) => bench::run(args),
        Task::K8sBin(args) => k8s::run_task(args),
        Task::Cluster(args) => cluster::run(args),
        Task::E2e(args) => e2e::run(args),
        Task::Images(args) => images::run_task(args),
        Task::Demo(args) => demo::run_demo(args),
    }
}
