//! `cargo xtask bench stall`: the longest write stall while an index is added to a PostgreSQL
//! table of N rows under a steady insert load, through the executor's Apply (issue 37). The
//! plan's lock-safe form (`CREATE INDEX CONCURRENTLY`, outside the transaction) is measured
//! against the same change in the plain form (`CREATE INDEX`, the baseline) in the same rounds.
//!
//! One writer inserts row after row on its own connection for the whole Apply; a stall is the
//! longest time one insert took. The plain form holds `SHARE` on the table for the whole build,
//! so an insert waits for all of it; the concurrent form's inserts wait only for their own work.

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use ptah_engine::{ApplyOptions, DatabaseUrl, InspectScope, Session, apply, inspect};
use ptah_schema::{Index, IndexPart, IndexTarget, Plan, PlanOptions};
use ptah_testservices::{TestServices, unique_name};
use serde_json::json;

use super::samples::{Samples, round};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Arguments of `cargo xtask bench stall`.
#[derive(clap::Args)]
pub struct Args {
    /// Rows in the table the index is added to.
    #[arg(long, default_value_t = 1_000_000)]
    rows: u64,
    /// Rounds; each applies both forms, each on a fresh table.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Where to write the JSON report (default: target/bench/stall.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// The two forms: the baseline (plain) first.
const FORMS: [&str; 2] = ["plain", "concurrent"];

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.rounds == 0 || args.rows == 0 {
        bail!("--rounds and --rows must be at least 1");
    }
    let services = TestServices::load().map_err(|e| anyhow::anyhow!("{e}"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let build = super::output::build();
    eprintln!(
        "bench stall: {build} build, {} rows, {} rounds",
        args.rows, args.rounds
    );
    let mut stalls = [Samples::default(), Samples::default()];
    let mut applies = [Samples::default(), Samples::default()];
    let mut inserts = [0u64; 2];
    for round_no in 0..args.rounds {
        for (i, form) in FORMS.iter().enumerate() {
            let m = runtime.block_on(measure(&services, args.rows, *form == "concurrent"))?;
            eprintln!(
                "  round {}: {form}: longest insert {:.3} s during an Apply of {:.3} s ({} inserts)",
                round_no + 1,
                m.stall,
                m.apply,
                m.inserts
            );
            stalls[i].0.push(m.stall);
            applies[i].0.push(m.apply);
            inserts[i] += m.inserts;
        }
    }
    let ratio = stalls[1].median() / stalls[0].median();
    eprintln!(
        "bench stall: the longest insert under CONCURRENTLY is {:.4}x the plain form's ({:.3} s against {:.3} s, medians)",
        ratio,
        stalls[1].median(),
        stalls[0].median()
    );
    let report = json!({
        "benchmark": "stall",
        "build": build,
        "rows": args.rows,
        "rounds": args.rounds,
        "baseline": "plain",
        "forms": FORMS.iter().enumerate().map(|(i, form)| json!({
            "form": form,
            "longest_insert_seconds": stalls[i].to_json(),
            "apply_seconds": applies[i].to_json(),
            "inserts": inserts[i],
        })).collect::<Vec<_>>(),
        "ratio_longest_insert": round(ratio),
    });
    let path = super::output::path(args.output, "stall");
    super::output::write(&path, &report)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

struct Measured {
    stall: f64,
    apply: f64,
    inserts: u64,
}

async fn measure(services: &TestServices, rows: u64, concurrent: bool) -> anyhow::Result<Measured> {
    let server = &services.postgres;
    let name = unique_name("bench_stall");
    let admin = DatabaseUrl::parse(server.admin_url.expose())?;
    let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
    session
        .batch(&format!("CREATE DATABASE {name} OWNER app"))
        .await?;
    session.close().await?;
    let url = DatabaseUrl::parse(server.url_for_database(&name).expose())?;
    let outcome = measure_in(&url, rows, concurrent).await;
    let admin = DatabaseUrl::parse(server.admin_url.expose())?;
    let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
    session
        .batch(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await?;
    session.close().await?;
    outcome
}

async fn measure_in(url: &DatabaseUrl, rows: u64, concurrent: bool) -> anyhow::Result<Measured> {
    let mut session = Session::connect(url, CONNECT_TIMEOUT).await?;
    session
        .batch(&format!(
            "CREATE TABLE orders (id bigserial PRIMARY KEY, sku text NOT NULL, qty int NOT NULL);
             INSERT INTO orders (sku, qty) SELECT md5(g::text), g % 100 FROM generate_series(1, {rows}) g;
             ANALYZE orders"
        ))
        .await?;
    let plan = index_plan(&mut session, concurrent).await?;

    let stop = Arc::new(AtomicBool::new(false));
    let writer = tokio::spawn(write_until(url.clone(), stop.clone()));
    // The writer is at its steady pace before the Apply starts.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    let applied = apply(
        &mut session,
        &plan,
        &ApplyOptions {
            lock_timeout: Duration::ZERO,
            ..ApplyOptions::default()
        },
    )
    .await;
    let apply_seconds = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, Ordering::SeqCst);
    let (stall, inserts) = writer.await.context("the writer")??;
    session.close().await?;
    applied.context("the Apply")?;
    Ok(Measured {
        stall: stall.as_secs_f64(),
        apply: apply_seconds,
        inserts,
    })
}

/// The executor's plan for an index on `sku`; the baseline is the same plan in the plain form.
async fn index_plan(session: &mut Session, concurrent: bool) -> anyhow::Result<Plan> {
    let scope = InspectScope::all();
    let actual = inspect(session, &scope).await?;
    let mut desired = actual.clone();
    let table = desired
        .tables
        .values_mut()
        .find(|t| t.name.name == "orders")
        .context("the orders table")?;
    table.indexes.insert(
        "orders_sku".to_owned(),
        Index {
            name: "orders_sku".to_owned(),
            unique: false,
            parts: vec![IndexPart {
                target: IndexTarget::Column("sku".to_owned()),
                descending: false,
                prefix_length: None,
                opclass: None,
                nulls_first: None,
            }],
            predicate: None,
            method: None,
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        },
    );
    let mut plan = ptah_schema::plan(
        &desired,
        &actual,
        ptah_engine::Dialect::Postgres,
        &PlanOptions::default(),
    )?;
    if plan.statements.len() != 1 || plan.statements[0].transactional {
        bail!(
            "the planner did not plan one concurrent build: {:?}",
            plan.statements
        );
    }
    if !concurrent {
        let s = &mut plan.statements[0];
        s.sql = s.sql.replacen("CREATE INDEX CONCURRENTLY ", "CREATE INDEX ", 1);
        s.transactional = true;
    }
    Ok(plan)
}

/// Inserts one row at a time until `stop`; returns the longest insert and how many ran.
async fn write_until(url: DatabaseUrl, stop: Arc<AtomicBool>) -> anyhow::Result<(Duration, u64)> {
    let mut session = Session::connect(&url, CONNECT_TIMEOUT).await?;
    let mut longest = Duration::ZERO;
    let mut count = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        session
            .batch("INSERT INTO orders (sku, qty) VALUES (md5(random()::text), 1)")
            .await?;
        longest = longest.max(started.elapsed());
        count += 1;
    }
    session.close().await?;
    Ok((longest, count))
}
