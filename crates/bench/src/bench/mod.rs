//! `cargo xtask bench`: performance measured as ratios against a baseline taken in the same run.
//!
//! This machine's absolute timings drift 2–3× between passes (`bench-baseline.md` §0), so every
//! figure is reported next to its floor, measured round by round in the same process, and nothing
//! here asserts a wall-clock limit.

mod executor;
mod floor;
mod generate;
mod migrations;
mod programs;
mod samples;
mod split;

/// Arguments of `cargo xtask bench`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Inspect and plan a generated schema of N tables per engine, against the bare catalog
    /// queries (the floor), interleaved round by round; writes target/bench/executor.json.
    Executor(executor::Args),
    /// Split 16 MiB migration files of long blank runs against 16 MiB of ordinary statements
    /// (the baseline), interleaved round by round; writes target/bench/split.json.
    Split(split::Args),
    /// Apply the same 1,000 seeded migrations with ptah, golang-migrate and Flyway to fresh
    /// databases, interleaved round by round; writes target/bench/migrations.json.
    Migrations(migrations::Args),
}

/// Runs the chosen benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        What::Executor(args) => executor::run(args),
        What::Split(args) => split::run(args),
        What::Migrations(args) => migrations::run(args),
    }
}
