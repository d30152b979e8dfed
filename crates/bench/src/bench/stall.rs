//! `cargo xtask bench stall`: the longest write stall while an index, then a foreign key, is added
//! to a PostgreSQL table of N rows under a steady insert load, through the executor's Apply (issue
//! 37). The plan's lock-safe forms (`CREATE INDEX CONCURRENTLY`; `ADD CONSTRAINT … NOT VALID`
//! then `VALIDATE CONSTRAINT`, both outside the transaction where they scan) are measured against
//! the same change in the plain form (`CREATE INDEX`; `ADD CONSTRAINT`, the baseline) in the same
//! rounds.
//!
//! One writer inserts row after row on its own connection for the whole Apply; a stall is the
//! longest time one insert took. The plain index holds `SHARE` on the table for the whole build,
//! and the plain foreign key `SHARE ROW EXCLUSIVE` for the whole scan of its rows, so an insert
//! waits for all of it; under the lock-safe forms inserts wait only for their own work.

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
use ptah_schema::{ForeignKey, Index, IndexPart, IndexTarget, Plan, PlanOptions, QualifiedName};
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

/// The two forms: the baseline (plain) first, then the plan's.
const FORMS: [&str; 2] = ["plain", "lock_safe"];

/// The changes measured, each in both forms.
#[derive(Clone, Copy)]
enum Change {
    /// A non-unique index on `sku`.
    Index,
    /// A foreign key from `customer_id` to `customers`.
    ForeignKey,
}

impl Change {
    fn name(self) -> &'static str {
        match self {
            Change::Index => "index",
            Change::ForeignKey => "foreign_key",
        }
    }
}

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
    let mut changes = Vec::new();
    for change in [Change::Index, Change::ForeignKey] {
        let mut stalls = [Samples::default(), Samples::default()];
        let mut applies = [Samples::default(), Samples::default()];
        let mut inserts = [0u64; 2];
        for round_no in 0..args.rounds {
            for (i, form) in FORMS.iter().enumerate() {
                let m = runtime.block_on(measure(&services, args.rows, change, i == 1))?;
                eprintln!(
                    "  {} round {}: {form}: longest insert {:.3} s during an Apply of {:.3} s ({} inserts)",
                    change.name(),
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
            "bench stall: {}: the longest insert under the lock-safe form is {:.4}x the plain form's ({:.3} s against {:.3} s, medians)",
            change.name(),
            ratio,
            stalls[1].median(),
            stalls[0].median()
        );
        changes.push(json!({
            "change": change.name(),
            "forms": FORMS.iter().enumerate().map(|(i, form)| json!({
                "form": form,
                "longest_insert_seconds": stalls[i].to_json(),
                "apply_seconds": applies[i].to_json(),
                "inserts": inserts[i],
            })).collect::<Vec<_>>(),
            "ratio_longest_insert": round(ratio),
        }));
    }
    let report = json!({
        "benchmark": "stall",
        "build": build,
        "rows": args.rows,
        "rounds": args.rounds,
        "baseline": "plain",
        "changes": changes,
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

async fn measure(
    services: &TestServices,
    rows: u64,
    change: Change,
    lock_safe: bool,
) -> anyhow::Result<Measured> {
    let server = &services.postgres;
    let name = unique_name("bench_stall");
    let admin = DatabaseUrl::parse(server.admin_url.expose())?;
    let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
    session
        .batch(&format!("CREATE DATABASE {name} OWNER app"))
        .await?;
    session.close().await?;
    let url = DatabaseUrl::parse(server.url_for_database(&name).expose())?;
    let outcome = measure_in(&url, rows, change, lock_safe).await;
    let admin = DatabaseUrl::parse(server.admin_url.expose())?;
    let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
    session
        .batch(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .await?;
    session.close().await?;
    outcome
}

async fn measure_in(
    url: &DatabaseUrl,
    rows: u64,
    change: Change,
    lock_safe: bool,
) -> anyhow::Result<Measured> {
    let mut session = Session::connect(url, CONNECT_TIMEOUT).await?;
    session
        .batch(&format!(
            "CREATE TABLE customers (id int PRIMARY KEY);
             INSERT INTO customers SELECT g FROM generate_series(1, 1000) g;
             CREATE TABLE orders (id bigserial PRIMARY KEY, sku text NOT NULL, qty int NOT NULL,
                                  customer_id int NOT NULL);
             INSERT INTO orders (sku, qty, customer_id)
               SELECT md5(g::text), g % 100, g % 1000 + 1 FROM generate_series(1, {rows}) g;
             ANALYZE orders"
        ))
        .await?;
    let plan = change_plan(&mut session, change, lock_safe).await?;

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

/// The executor's plan for `change`; the baseline is the same plan in the plain form.
async fn change_plan(session: &mut Session, change: Change, lock_safe: bool) -> anyhow::Result<Plan> {
    let scope = InspectScope::all();
    let actual = inspect(session, &scope).await?;
    let mut desired = actual.clone();
    let table = desired
        .tables
        .values_mut()
        .find(|t| t.name.name == "orders")
        .context("the orders table")?;
    let column = |name: &str| IndexPart {
        target: IndexTarget::Column(name.to_owned()),
        descending: false,
        prefix_length: None,
        opclass: None,
        nulls_first: None,
    };
    match change {
        Change::Index => {
            let index = Index {
                name: "orders_sku".to_owned(),
                unique: false,
                parts: vec![column("sku")],
                predicate: None,
                method: None,
                include: Vec::new(),
                nulls_not_distinct: false,
                storage: Vec::new(),
            };
            table.indexes.insert(index.name.clone(), index);
        }
        Change::ForeignKey => {
            let key = ForeignKey {
                name: "orders_customer_fk".to_owned(),
                columns: vec!["customer_id".to_owned()],
                referenced_table: QualifiedName::new(table.name.schema.clone(), "customers"),
                referenced_columns: vec!["id".to_owned()],
                on_delete: Default::default(),
                on_update: Default::default(),
                options: Default::default(),
            };
            table.foreign_keys.insert(key.name.clone(), key);
        }
    }
    let mut plan = ptah_schema::plan(
        &desired,
        &actual,
        ptah_engine::Dialect::Postgres,
        &PlanOptions::default(),
    )?;
    // The plan's forms: one concurrent build, or an unvalidated key and its validation.
    let planned: Vec<(&str, bool)> = plan
        .statements
        .iter()
        .map(|s| (s.sql.as_str(), s.transactional))
        .collect();
    let expected = match change {
        Change::Index => planned.len() == 1 && planned[0].0.contains(" CONCURRENTLY ") && !planned[0].1,
        Change::ForeignKey => {
            planned.len() == 2
                && planned[0].0.ends_with(" NOT VALID")
                && planned[0].1
                && planned[1].0.contains(" VALIDATE CONSTRAINT ")
                && !planned[1].1
        }
    };
    if !expected {
        bail!("the planner did not plan the lock-safe forms: {planned:?}");
    }
    if !lock_safe {
        plan.statements.truncate(1);
        let s = &mut plan.statements[0];
        s.sql = s
            .sql
            .replacen("CREATE INDEX CONCURRENTLY ", "CREATE INDEX ", 1)
            .trim_end_matches(" NOT VALID")
            .to_owned();
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
            .batch("INSERT INTO orders (sku, qty, customer_id) VALUES (md5(random()::text), 1, 1)")
            .await?;
        longest = longest.max(started.elapsed());
        count += 1;
    }
    session.close().await?;
    Ok((longest, count))
}
