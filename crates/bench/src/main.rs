//! `ptah-bench`: `cargo xtask bench|demo` forward here.

mod bench;
mod demo;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ptah-operator benchmarks and demo")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Benchmarks measured as ratios against a baseline in the same run (`bench executor`, `bench split`).
    Bench(bench::Args),
    /// Run the executor end to end against the local services (needs `cargo xtask services up`).
    Demo(demo::Args),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().task {
        Task::Bench(args) => bench::run(args),
        Task::Demo(args) => demo::run_demo(args),
    }
}
