//! `ptah-testenv`: `cargo xtask services|k8s-bin|cluster|images` forward here.

use clap::{Parser, Subcommand};
use ptah_testenv::{cluster, images, k8s, services};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ptah-operator's development environment")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Start, stop or describe the local test services (PostgreSQL, MariaDB, OCI registry).
    Services(services::Args),
    /// Build (or reuse) the pinned Kubernetes programs, etcd, helm 3 and 4, oras and promtool from their Go modules.
    K8sBin(k8s::Args),
    /// Start, stop or describe a real Kubernetes on loopback (`--tier api|full`, `--nodes 2`).
    Cluster(cluster::Args),
    /// Build the workspace's images as OCI layouts, import them into the local cluster and push them.
    Images(images::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Services(args) => services::run(args),
        Task::K8sBin(args) => k8s::run_task(args),
        Task::Cluster(args) => cluster::run(args),
        Task::Images(args) => images::run_task(args),
    }
}
