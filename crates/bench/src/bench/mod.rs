//! `cargo xtask bench`: performance measured as ratios against a baseline taken in the same run.
//!
//! This machine's absolute timings drift 2–3× between passes (`bench-baseline.md` §0), so every
//! figure is reported next to its floor, measured round by round in the same process, and nothing
//! here asserts a wall-clock limit.

mod atlas;
mod converge;
mod executor;
mod floor;
mod generate;
mod images;
mod manager;
mod migrations;
mod output;
mod plans;
mod programs;
mod report;
mod results;
mod runner;
mod samples;
mod split;
mod stall;
mod tools;

/// Arguments of `cargo xtask bench`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    what: Option<What>,
    /// Write docs/performance.md and its chart from the results in target/bench/ instead of
    /// running a benchmark.
    #[arg(long)]
    report: bool,
}

#[derive(clap::Subcommand)]
enum What {
    /// Inspect and plan a generated schema of N tables per engine, against the bare catalog
    /// queries (the floor), interleaved round by round; writes target/bench/executor.json.
    Executor(executor::Args),
    /// Split 16 MiB migration files of long blank runs against 16 MiB of ordinary statements
    /// (the baseline), interleaved round by round; writes target/bench/split.json.
    Split(split::Args),
    /// The runner's overhead per operation (start to frame) against running the same ptah
    /// directly, interleaved round by round; writes target/bench/runner.json.
    Runner(runner::Args),
    /// Durable delivery's encoding of an 8 MiB plan (canonical body, receiver's check, records,
    /// reassembly) against the log frame it replaces, interleaved round by round; writes
    /// target/bench/results.json.
    Results(results::Args),
    /// Every image's size as pushed (release binaries, gzip layer) against the dev image with its
    /// layer uncompressed; writes target/bench/images.json.
    Images(images::Args),
    /// Publishing and reloading an 8 MiB plan on the running API server against moving the same
    /// chunks bare, interleaved round by round; writes target/bench/plans.json.
    Plans(plans::Args),
    /// The release manager under 1,000 PtahSchemas, 200 PtahMigrations, 10,000 unrelated
    /// ConfigMaps and 40 published plans on the running API server: memory, CPU, requests per
    /// reconcile, spec change to claim; writes target/bench/manager.json.
    Manager(manager::Args),
    /// Apply the same 1,000 seeded migrations with ptah, golang-migrate and Flyway to fresh
    /// databases, interleaved round by round; writes target/bench/migrations.json.
    Migrations(migrations::Args),
    /// The longest write stall while an index is added to a PostgreSQL table of 1,000,000 rows
    /// under a steady insert load: the lock-safe plan against the plain form, interleaved round by
    /// round; writes target/bench/stall.json.
    Stall(stall::Args),
    /// Cold convergence on the full local cluster: N PtahSchemas with apply Always, each on its
    /// own database, from one `kubectl apply` to all InSync; writes target/bench/converge.json.
    Converge(converge::Args),
}

/// Runs the chosen benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(what) = args.what else {
        if args.report {
            return report::run();
        }
        anyhow::bail!("name a benchmark (see `cargo xtask bench --help`) or pass --report");
    };
    match what {
        What::Executor(args) => executor::run(args),
        What::Split(args) => split::run(args),
        What::Runner(args) => runner::run(args),
        What::Results(args) => results::run(args),
        What::Images(args) => images::run(args),
        What::Plans(args) => plans::run(args),
        What::Migrations(args) => migrations::run(args),
        What::Manager(args) => manager::run(args),
        What::Stall(args) => stall::run(args),
        What::Converge(args) => converge::run(args),
    }
}
