//! `cargo xtask bench executor`: the executor's inspect, and inspect + plan of an unchanged
//! database, against the bare catalog queries (`bench-baseline.md` §6), per engine and size.
//!
//! For each engine and size: generate the seeded schema model, create it in a scratch database
//! through the real planner (and `apply`, or the plan's statements in autocommit), then run one
//! untimed warm-up and `--rounds` timed rounds. A round times the floor, `inspect` and `inspect` +
//! `comparable` + `plan` (what `ptah schema plan` runs), each on a fresh connection (connect and close included, as in the baseline), in an
//! order that rotates from round to round. The plan of the unchanged database must be empty; a
//! statement in it is a bug and fails the run after the numbers are written.

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use ptah_engine::{ApplyOptions, Dialect, InspectScope, Session, apply, inspect, mysql_flavor};
use ptah_schema::{Plan, PlanOptions, Schema};
use ptah_testservices::TestServices;
use serde_json::json;

use super::{generate, programs, samples::Samples};

mod measured;
mod peers;
mod scratch;
mod table;
mod timed;

use measured::Measured;
use scratch::{Peers, Scratch};
use table::print_table;
use timed::{peak_rss_kib, reset_peak_rss, timed_floor, timed_inspect, timed_inspect_plan};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The seed of `bench-baseline.md`'s generator, so runs are comparable.
const DEFAULT_SEED: u64 = 20_261_129;

/// Arguments of `cargo xtask bench executor`.
#[derive(clap::Args)]
pub struct Args {
    /// Numbers of business tables to generate (each schema also has 5 audit tables).
    #[arg(long, value_delimiter = ',', default_value = "100,1000,5000")]
    sizes: Vec<usize>,
    /// Timed rounds per size (after one untimed warm-up round).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Engines to measure.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "postgres,mariadb")]
    engines: Vec<Engine>,
    /// Seed of the schema generator.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// How to create the schema: `apply` (the engine's apply: one transaction on PostgreSQL),
    /// `autocommit` (the plan's statements one by one), or `auto` (apply up to 1,000 tables,
    /// autocommit above: one PostgreSQL transaction of 5,000 tables exceeds the default
    /// `max_locks_per_transaction` and is 1.3–1.6× slower, bench-baseline.md §3).
    #[arg(long, value_enum, default_value_t = Create::Auto)]
    create: Create,
    /// Keep the scratch databases instead of dropping them.
    #[arg(long)]
    keep: bool,
    /// Leave out the peers run as processes (`ptah schema plan` with and without a rehearsal,
    /// and the Atlas engine, which needs Go 1.27 fetched by the go command).
    #[arg(long)]
    no_peers: bool,
    /// Timed rounds of each peer per size (Atlas loads the whole schema into a dev database).
    #[arg(long, default_value_t = 3)]
    peer_rounds: usize,
    /// Where to write the JSON report (default: target/bench/executor.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Engine {
    Postgres,
    Mariadb,
}

impl Engine {
    fn dialect(self) -> Dialect {
        match self {
            Engine::Postgres => Dialect::Postgres,
            Engine::Mariadb => Dialect::Mysql,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Engine::Postgres => "postgresql 15",
            Engine::Mariadb => "mariadb 10.11",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Engine::Postgres => "pg",
            Engine::Mariadb => "my",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Create {
    Auto,
    Apply,
    Autocommit,
}

/// Tables above which `--create auto` stops using one transaction.
const APPLY_LIMIT: usize = 1000;

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let services = TestServices::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let build = super::output::build();
    eprintln!(
        "bench executor: {build} build, seed {}, {} rounds, sizes {:?}",
        args.seed, args.rounds, args.sizes
    );
    let peers = if args.no_peers || args.peer_rounds == 0 {
        None
    } else {
        Some(peers::Tools::prepare()?)
    };
    let mut results = Vec::new();
    let mut failures = Vec::new();
    for engine in &args.engines {
        for &size in &args.sizes {
            let outcome = runtime.block_on(measure(&services, *engine, size, &args, peers.as_ref()));
            match outcome {
                Ok(result) => {
                    let peer_problem = result.peers.as_ref().and_then(|p| p.problem.as_ref());
                    for problem in result.problem.iter().chain(peer_problem) {
                        failures.push(format!("{} at {size} tables: {problem}", engine.label()));
                    }
                    results.push(result);
                }
                Err(err) => {
                    eprintln!("    {} at {size} tables: FAILED: {err:#}", engine.label());
                    failures.push(format!("{} at {size} tables: {err:#}", engine.label()));
                }
            }
        }
    }
    let peak_rss_kib = peak_rss_kib();
    print_table(&results, build);
    if let Some(kib) = peak_rss_kib {
        println!(
            "peak RSS of this process (VmHWM, whole run): {:.1} MiB",
            kib as f64 / 1024.0
        );
    }
    let report = json!({
        "benchmark": "executor",
        "build": build,
        "seed": args.seed,
        "rounds": args.rounds,
        "timing": "wall clock per run, fresh connection each, connect and close included",
        "floor": "bench-baseline.md §6.1 (6 pg_catalog queries, REPEATABLE READ READ ONLY) / §6.3 (8 information_schema views, consistent snapshot)",
        "peak_rss_kib": peak_rss_kib,
        "results": results.iter().map(Measured::to_json).collect::<Vec<_>>(),
        "failures": failures,
    });
    let path = super::output::path(args.output.clone(), "executor");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    if !failures.is_empty() {
        bail!("{} failure(s):\n  {}", failures.len(), failures.join("\n  "));
    }
    Ok(())
}

async fn measure(
    services: &TestServices,
    engine: Engine,
    size: usize,
    args: &Args,
    peers: Option<&peers::Tools>,
) -> anyhow::Result<Measured> {
    let dialect = engine.dialect();
    let desired = generate::schema(dialect, size, args.seed);
    eprintln!("==> {} at {size} tables", engine.label());
    let db = Scratch::create(services, engine, &size.to_string()).await?;
    let dev = match peers {
        Some(_) => Some(Scratch::create(services, engine, &format!("{size}_dev")).await?),
        None => None,
    };
    let mut dev = dev;
    let peers = peers.zip(dev.as_mut()).map(|(tools, dev)| Peers {
        tools,
        dev,
        services,
        engine,
    });
    let outcome = measure_in(&db, engine, size, &desired, args, peers).await;
    for db in std::iter::once(db).chain(dev) {
        if args.keep {
            eprintln!("    kept database {}", db.name);
        } else if let Err(err) = db.drop().await {
            eprintln!("    could not drop the scratch database: {err:#}");
        }
    }
    outcome
}

async fn measure_in(
    db: &Scratch,
    engine: Engine,
    size: usize,
    desired: &Schema,
    args: &Args,
    peers: Option<Peers<'_>>,
) -> anyhow::Result<Measured> {
    let dialect = engine.dialect();
    let scope = InspectScope::of(desired);
    let mut session = Session::connect(&db.url, CONNECT_TIMEOUT).await?;
    let options = PlanOptions {
        mysql_flavor: mysql_flavor(&mut session).await?.unwrap_or_default(),
        ..PlanOptions::default()
    };
    let empty = inspect(&mut session, &scope).await?;
    let create_plan = ptah_schema::plan(desired, &empty, dialect, &options)?;
    let mode = match args.create {
        Create::Apply => "apply",
        Create::Autocommit => "autocommit",
        Create::Auto if size <= APPLY_LIMIT => "apply",
        Create::Auto => "autocommit",
    };
    eprintln!(
        "    creating {} tables: {} statements ({mode})",
        desired.tables.len(),
        create_plan.statements.len()
    );
    let started = Instant::now();
    if mode == "apply" {
        let options = ApplyOptions {
            lock_timeout: Duration::from_secs(60),
            scope: scope.clone(),
            ..ApplyOptions::default()
        };
        apply(&mut session, &create_plan, &options).await?;
    } else {
        for (i, statement) in create_plan.statements.iter().enumerate() {
            session
                .batch(&statement.sql)
                .await
                .with_context(|| format!("statement {} of {}", i + 1, create_plan.statements.len()))?;
        }
    }
    let create_secs = started.elapsed().as_secs_f64();
    session.close().await?;
    eprintln!("    created in {create_secs:.2}s");
    let create_statements = create_plan.statements.len();
    let documents = match &peers {
        Some(_) => Some(peers::Documents::write(dialect, desired, &empty, &options)?),
        None => None,
    };
    // What `ptah schema plan` holds is the desired schema, the live one and the plan: the
    // creation's plan and empty inspection are gone before the peak is taken afresh.
    drop((create_plan, empty));
    reset_peak_rss();
    if dialect == Dialect::Postgres {
        // As in the baseline: fresh catalog statistics (the superuser can vacuum the catalogs).
        let mut admin = Session::connect(&db.admin, CONNECT_TIMEOUT).await?;
        admin.batch("VACUUM ANALYZE").await?;
        admin.close().await?;
    }

    let namespaces: Vec<String> = scope.namespaces.clone().unwrap_or_default().into_iter().collect();
    let mut m = Measured {
        engine,
        size,
        tables: desired.tables.len(),
        columns: desired.tables.values().map(|t| t.columns.len()).sum(),
        indexes: desired.tables.values().map(|t| t.indexes.len()).sum(),
        create_mode: mode,
        create_statements,
        create_secs,
        floor_rows: 0,
        floor: Samples::default(),
        inspect: Samples::default(),
        inspect_plan: Samples::default(),
        plan_only: Samples::default(),
        probes: Samples::default(),
        connect: Samples::default(),
        round_ratios: Vec::new(),
        problem: None,
        peak_rss_kib: None,
        peers: None,
    };

    // One untimed warm-up of each, and the correctness checks.
    m.floor_rows = timed_floor(&db.url, &namespaces, &db.name).await?.1;
    let (_, live) = timed_inspect(&db.url, &scope).await?;
    let dumped = programs::as_dumped(desired, &live);
    let desired = &dumped;
    if let Some(docs) = &documents {
        docs.write_hcl(dialect, desired, &options)?;
    }
    if live.views.len() != desired.views.len() || live.triggers.len() != desired.triggers.len() {
        bail!(
            "inspect read {} views and {} triggers, the schema has {} and {}",
            live.views.len(),
            live.triggers.len(),
            desired.views.len(),
            desired.triggers.len()
        );
    }
    if live.tables.len() != desired.tables.len() {
        bail!(
            "inspect read {} tables, the schema has {}",
            live.tables.len(),
            desired.tables.len()
        );
    }
    let (_, _, plan) = timed_inspect_plan(&db.url, &scope, desired, &options).await?;
    m.problem = describe_non_empty(&plan);
    if let Some(problem) = &m.problem {
        eprintln!("    BUG: the plan of the unchanged database is not empty: {problem}");
    }

    for round in 0..args.rounds {
        let (mut floor, mut insp, mut both) = (0.0, 0.0, 0.0);
        for k in 0..3 {
            match (round + k) % 3 {
                0 => {
                    let (t, _) = timed_floor(&db.url, &namespaces, &db.name).await?;
                    m.connect.0.push(t.connect);
                    floor = t.total;
                }
                1 => {
                    let (t, _) = timed_inspect(&db.url, &scope).await?;
                    m.connect.0.push(t.connect);
                    insp = t.total;
                }
                _ => {
                    let (t, (probe_secs, plan_secs), plan) =
                        timed_inspect_plan(&db.url, &scope, desired, &options).await?;
                    m.connect.0.push(t.connect);
                    m.probes.0.push(probe_secs);
                    m.plan_only.0.push(plan_secs);
                    if m.problem.is_none() {
                        m.problem = describe_non_empty(&plan);
                    }
                    both = t.total;
                }
            }
        }
        m.floor.0.push(floor);
        m.inspect.0.push(insp);
        m.inspect_plan.0.push(both);
        m.round_ratios.push((insp / floor, both / floor));
        eprintln!(
            "    round {}: floor {floor:.3}s, inspect {insp:.3}s, inspect+plan {both:.3}s",
            round + 1
        );
    }
    m.peak_rss_kib = peak_rss_kib();
    if let (Some(peers), Some(docs)) = (peers, &documents) {
        let Peers {
            tools,
            dev,
            services,
            engine,
        } = peers;
        let schemas = if dialect == Dialect::Postgres {
            namespaces.clone()
        } else {
            Vec::new()
        };
        m.peers = Some(
            peers::measure(tools, docs, &db.secret, &schemas, args.peer_rounds, async || {
                dev.reset(services, engine).await?;
                Ok(dev.secret.clone())
            })
            .await?,
        );
    }
    Ok(m)
}

fn describe_non_empty(plan: &Plan) -> Option<String> {
    if plan.is_empty() {
        return None;
    }
    let first: Vec<&str> = plan.statements.iter().take(5).map(|s| s.sql.as_str()).collect();
    Some(format!(
        "{} statement(s), first: {}",
        plan.statements.len(),
        first.join(" | ")
    ))
}
