//! `cargo xtask bench migrations`: `ptah migrations up` against golang-migrate and Flyway, the
//! same seeded corpus of small migrations applied by each to a fresh database, per engine.
//!
//! Every tool runs as a process, as a user runs it: ptah's release binary with its checks on
//! (`ptah.sum` required, the lock, `--expect-sequence`), golang-migrate's CLI, and Flyway's API
//! behind a one-class Java main (the JVM's start is part of Flyway's cost as a CLI; the time
//! measured inside the JVM is reported beside it). A round creates, for each engine and each tool
//! in an order that rotates from round to round, a fresh database, applies the corpus, checks
//! that the tool's history and the tables hold exactly what the corpus makes (a tool that silently
//! did nothing fails the run), then times the tool's status command on the result. Database
//! creation, checks and drops are not timed. The ratios compare medians of the same run; nothing
//! asserts a time.

mod corpus;
mod db;
mod peers;
mod report;

use std::path::PathBuf;

use anyhow::{Context, bail};
use ptah_testenv::step::workspace_root;
use ptah_testservices::TestServices;

use self::{
    db::{Engine, Scratch},
    peers::{Inputs, Ran, Tools},
    report::Measured,
};

/// The seed of the corpus, so runs are comparable.
const DEFAULT_SEED: u64 = 20_261_204;

/// Arguments of `cargo xtask bench migrations`.
#[derive(clap::Args)]
pub struct Args {
    /// Migrations in the corpus.
    #[arg(long, default_value_t = 1000)]
    migrations: usize,
    /// Timed rounds (after the warm-up rounds).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Untimed rounds first, so no tool pays for cold caches in the timed ones.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Engines to measure.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "postgres,mariadb")]
    engines: Vec<Engine>,
    /// Tools to measure (ptah's ratios need ptah and at least one peer; `floor` is the bare
    /// statements).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "floor,ptah,golang-migrate,flyway"
    )]
    tools: Vec<Tool>,
    /// Seed of the corpus generator.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Keep the scratch databases instead of dropping them.
    #[arg(long)]
    keep: bool,
    /// Where to write the JSON report (default: target/bench/migrations.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// A migration tool under measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Tool {
    /// Not a tool: the corpus's statements alone, one by one over one connection from this
    /// process; no history, no lock, no process start. What every tool pays the server at least.
    Floor,
    /// `ptah migrations up` of this workspace.
    Ptah,
    /// golang-migrate's `migrate` CLI.
    GolangMigrate,
    /// Flyway's `migrate` through its Java API.
    Flyway,
}

impl Tool {
    /// The name in the table and the JSON.
    pub(super) fn label(self) -> &'static str {
        match self {
            Tool::Floor => "floor",
            Tool::Ptah => "ptah",
            Tool::GolangMigrate => "golang-migrate",
            Tool::Flyway => "flyway",
        }
    }

    /// True for the tools ptah is compared with.
    pub(super) fn is_peer(self) -> bool {
        matches!(self, Tool::GolangMigrate | Tool::Flyway)
    }

    /// A few letters for database names.
    pub(super) fn short(self) -> &'static str {
        match self {
            Tool::Floor => "floor",
            Tool::Ptah => "ptah",
            Tool::GolangMigrate => "gm",
            Tool::Flyway => "fw",
        }
    }
}

/// Runs the benchmark, prints the table and writes the JSON report.
pub fn run(mut args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 || args.migrations == 0 || args.tools.is_empty() || args.engines.is_empty() {
        bail!("--rounds, --migrations, --tools and --engines must not be empty or zero");
    }
    args.tools.dedup();
    args.engines.dedup();
    let build = super::output::build();
    let services = TestServices::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let corpus = corpus::generate(args.migrations, args.seed);
    eprintln!(
        "bench migrations: {build} build, seed {}, {} migrations ({} statements), {} warm-up + {} timed rounds",
        args.seed,
        args.migrations,
        corpus.statements(),
        args.warmup,
        args.rounds
    );
    let work = workspace_root().join("target/bench/migrations-corpus");
    if work.exists() {
        std::fs::remove_dir_all(&work).with_context(|| format!("cannot clear {}", work.display()))?;
    }
    let dirs = corpus.write(&work)?;
    let mut sequences = Vec::new();
    for engine in &args.engines {
        let path = work.join(format!(
            "expect-sequence-{}.json",
            engine.label().replace(' ', "-")
        ));
        let sequence = corpus::expected_sequence(&dirs.ptah, engine.dialect())?;
        std::fs::write(&path, serde_json::to_string(&sequence)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        sequences.push(path);
    }
    let tools = Tools::prepare(&args.tools)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;

    let bench = Bench {
        services: &services,
        tools: &tools,
        corpus: &corpus,
        tables: corpus.table_names(),
        keep: args.keep,
    };
    let mut results: Vec<Measured> = args
        .engines
        .iter()
        .map(|&engine| Measured::new(engine, &args.tools))
        .collect();
    for round in 0..args.warmup + args.rounds {
        let timed = round >= args.warmup;
        let label = if timed {
            format!("round {}", round - args.warmup + 1)
        } else {
            format!("warm-up {}", round + 1)
        };
        for (e, &engine) in args.engines.iter().enumerate() {
            let inputs = Inputs {
                ptah_dir: &dirs.ptah,
                golang_migrate_dir: &dirs.golang_migrate,
                flyway_dir: &dirs.flyway,
                expect_sequence: &sequences[e],
            };
            let mut line = Vec::new();
            for k in 0..args.tools.len() {
                let tool = args.tools[(k + round) % args.tools.len()];
                let (apply, status) = runtime.block_on(bench.one_run(engine, tool, &inputs))?;
                line.push(match &status {
                    Some(s) => format!(
                        "{} {:.2}s (status {:.2}s)",
                        tool.label(),
                        apply.seconds,
                        s.seconds
                    ),
                    None => format!("{} {:.2}s", tool.label(), apply.seconds),
                });
                if timed {
                    results[e].push(tool, &apply, status.as_ref());
                }
            }
            eprintln!("    {label}, {}: {}", engine.label(), line.join(", "));
        }
        if timed {
            results.iter_mut().for_each(Measured::end_round);
        }
    }

    report::print_table(&results, build, args.migrations);
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| workspace_root().join("target/bench/migrations.json"));
    report::write_json(&path, &results, build, &args, &corpus)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// What every run shares.
struct Bench<'a> {
    services: &'a TestServices,
    tools: &'a Tools,
    corpus: &'a corpus::Corpus,
    tables: Vec<String>,
    keep: bool,
}

impl Bench<'_> {
    /// One tool on one engine: a fresh database, the corpus applied and checked, the status timed
    /// (none for the floor).
    async fn one_run(
        &self,
        engine: Engine,
        tool: Tool,
        inputs: &Inputs<'_>,
    ) -> anyhow::Result<(Ran, Option<Ran>)> {
        let db = Scratch::create(self.services, engine, tool).await?;
        let outcome = self.apply_and_check(&db, engine, tool, inputs).await;
        if self.keep {
            eprintln!("    kept database {}", db.name);
        } else if let Err(err) = db.drop().await {
            eprintln!("    could not drop the scratch database: {err:#}");
        }
        outcome
    }

    async fn apply_and_check(
        &self,
        db: &Scratch,
        engine: Engine,
        tool: Tool,
        inputs: &Inputs<'_>,
    ) -> anyhow::Result<(Ran, Option<Ran>)> {
        let (corpus, n) = (self.corpus, self.corpus.migrations.len());
        if tool == Tool::Floor {
            let seconds = db.floor(&corpus.migrations).await?;
            db.verify(tool, n, corpus.expect, &self.tables).await?;
            let ran = Ran {
                seconds,
                inner_seconds: None,
                applied: None,
            };
            return Ok((ran, None));
        }
        let apply = self.tools.apply(tool, engine, db, inputs)?;
        if let Some(said) = apply.applied
            && said != n
        {
            bail!("{} says it applied {said} migrations, not {n}", tool.label());
        }
        db.verify(tool, n, corpus.expect, &self.tables).await?;
        let status = self.tools.status(tool, engine, db, inputs)?;
        match status.applied {
            Some(seen) if seen == n => Ok((apply, Some(status))),
            seen => bail!(
                "{} status on {} reports {seen:?} applied migrations, not {n}",
                tool.label(),
                engine.label()
            ),
        }
    }
}
