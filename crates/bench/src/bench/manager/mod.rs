//! `cargo xtask bench manager`: the release manager against the running API server under a load
//! of PtahSchemas, PtahMigrations, unrelated ConfigMaps and published plans. Its Jobs are created
//! and never run (a quota forbids Pods), so only the manager's own cost is measured: resident
//! memory (peak and settled), CPU seconds to settle, API requests per reconcile from its own
//! counters, and the latency from a spec change to the next persisted claim. `--scales` adds the
//! settled memory against the number of PtahSchemas, for the chart of docs/performance.md.

mod complete;
mod load;
mod process;

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use k8s_openapi::api::batch::v1::Job;
use kube::{Api, Client, api::ListParams};
use ptah_testenv::step::{cargo, workspace_root};
use serde_json::{Value, json};

use self::{load::Load, process::Manager};
use super::samples::Samples;

/// Arguments of `cargo xtask bench manager`.
#[derive(clap::Args)]
pub struct Args {
    /// PtahSchemas of the main load.
    #[arg(long, default_value_t = 1000)]
    schemas: usize,
    /// PtahMigrations of the main load.
    #[arg(long, default_value_t = 200)]
    migrations: usize,
    /// Namespaces the load spreads over; with 1 the manager watches that namespace alone, which
    /// a cluster shared with other operators needs (with more it watches every namespace and
    /// refuses a cluster holding other PtahSchemas or PtahMigrations).
    #[arg(long, default_value_t = 50)]
    namespaces: usize,
    /// Unrelated ConfigMaps of the main load.
    #[arg(long, default_value_t = 10_000)]
    configmaps: usize,
    /// KiB of each unrelated ConfigMap.
    #[arg(long, default_value_t = 10)]
    configmap_kib: usize,
    /// Published plans of the main load.
    #[arg(long, default_value_t = 40)]
    plans: usize,
    /// MiB of each published plan.
    #[arg(long, default_value_t = 1)]
    plan_mib: usize,
    /// Spec changes timed to the next claim.
    #[arg(long, default_value_t = 100)]
    samples: usize,
    /// Seconds of steady memory taken as settled.
    #[arg(long, default_value_t = 60)]
    settle_seconds: u64,
    /// PtahSchema counts of the memory curve (a fresh manager and load each), after the main load.
    #[arg(long, value_delimiter = ',')]
    scales: Vec<usize>,
    /// Only the memory curve.
    #[arg(long)]
    curve_only: bool,
    /// The manager binary to measure, instead of building the release one.
    #[arg(long)]
    manager_binary: Option<PathBuf>,
    /// Where the JSON report goes (default target/bench/manager.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// Rounds to two decimals.
pub(super) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn mib(kib: Option<u64>) -> Value {
    kib.map_or(Value::Null, |k| json!(round2(k as f64 / 1024.0)))
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    let build = super::output::build();
    let cluster = ptah_apitests::ClusterFiles::load()
        .map_err(|e| anyhow::anyhow!("{e}; start it with `cargo xtask cluster up --tier api`"))?;
    let binary = match &args.manager_binary {
        Some(path) => path.clone(),
        None => {
            eprintln!("bench manager: {build} build of the bench; building the release manager");
            let status = cargo()
                .args([
                    "build",
                    "--release",
                    "--package",
                    "ptah-manager",
                    "--bin",
                    "manager",
                ])
                .current_dir(workspace_root())
                .status()
                .context("cannot run cargo")?;
            if !status.success() {
                bail!("building the release manager failed");
            }
            workspace_root().join("target/release/manager")
        }
    };
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| workspace_root().join("target/bench/manager.json"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the tokio runtime")?;
    let report = runtime.block_on(async {
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(&cluster.admin_kubeconfig)?,
            &kube::config::KubeConfigOptions::default(),
        )
        .await?;
        let client = Client::try_from(config)?;
        load::install_crds(&client).await?;
        if args.namespaces > 1 {
            load::refuse_foreign(&client).await?;
        }
        let tag = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() % 100_000);
        let bench = Bench {
            client,
            binary,
            kubeconfig: cluster.admin_kubeconfig.clone(),
            tag,
        };
        let mut report = json!({
            "benchmark": "manager",
            "build": build,
            "manager_build": if args.manager_binary.is_some() { "as given" } else { "release" },
            "tier": cluster.tier,
            "kubernetes": cluster.version,
            "main": Value::Null,
            "curve": [],
        });
        // Written after each part: a later part that fails keeps what was measured.
        if !args.curve_only {
            report["main"] = bench.main(&args).await?;
            super::output::write(&path, &report)?;
        }
        for &n in &args.scales {
            let point = bench.curve_point(&args, n).await?;
            if let Some(curve) = report["curve"].as_array_mut() {
                curve.push(point);
            }
            super::output::write(&path, &report)?;
        }
        anyhow::Ok(report)
    })?;
    print_summary(&report);
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// How long a load's deletion may take before the next part starts anyway.
const DELETE_TIMEOUT: Duration = Duration::from_secs(300);

struct Bench {
    client: Client,
    binary: PathBuf,
    kubeconfig: PathBuf,
    tag: u64,
}

impl Bench {
    fn start(&self, load: &Load) -> anyhow::Result<Manager> {
        let log = workspace_root().join(format!("target/bench/manager-{}.log", load.prefix));
        // One namespace is watched alone: the cluster may hold other operators' resources.
        let watch = (load.namespaces == 1).then(|| load.namespace(0));
        Manager::start(
            &self.binary,
            &self.kubeconfig,
            &load.coordination(),
            watch.as_deref(),
            log,
        )
    }

    /// The main load: everything of the issue at once, then the latency sample.
    async fn main(&self, args: &Args) -> anyhow::Result<Value> {
        let load = Load {
            prefix: format!("pbm{}", self.tag),
            namespaces: args.namespaces,
            schemas: args.schemas,
            migrations: args.migrations,
            configmaps: args.configmaps,
            configmap_bytes: args.configmap_kib * 1024,
            plans: args.plans.min(args.schemas),
            plan_bytes: args.plan_mib * 1024 * 1024,
        };
        let t = Instant::now();
        load::namespaces(&self.client, &load).await?;
        load::configmaps(&self.client, &load).await?;
        let schemas = load::resources(&self.client, &load).await?;
        load::plans(&self.client, &load, &schemas).await?;
        let loading = t.elapsed().as_secs_f64();
        eprintln!("  loaded {load:?} in {loading:.1} s");
        let mut manager = self.start(&load)?;
        let outcome = self.measure(&mut manager, &load, args, &schemas).await;
        load::delete(&self.client, &load, DELETE_TIMEOUT).await;
        drop(manager);
        let mut report = outcome?;
        report["load"] = json!({
            "namespaces": load.namespaces, "schemas": load.schemas, "migrations": load.migrations,
            "configmaps": load.configmaps, "configmap_bytes": load.configmap_bytes,
            "plans": load.plans, "plan_bytes": load.plan_bytes, "seconds_to_create": round2(loading),
        });
        Ok(report)
    }

    async fn measure(
        &self,
        manager: &mut Manager,
        load: &Load,
        args: &Args,
        schemas: &[ptah_api::PtahSchema],
    ) -> anyhow::Result<Value> {
        let at_start = self.counters(manager).await?;
        let dispatched = self.wait_dispatched(manager, load).await?;
        let cpu_dispatched = manager.cpu_seconds();
        let after_dispatch = manager.counters().await?;
        eprintln!("  every Job created {dispatched:.1} s after the start; settling");
        tokio::time::sleep(Duration::from_secs(args.settle_seconds)).await;
        manager.alive()?;
        let settled = manager.settled_kib(args.settle_seconds as f64 / 2.0);
        let after_settle = manager.counters().await?;
        // The latency sample: PtahSchemas without a published plan, whose Jobs are failed
        // (the manager records the failure and holds no claim), then changed one by one.
        let sample: Vec<_> = schemas.iter().rev().take(args.samples).cloned().collect();
        complete::fail_and_settle(&self.client, &sample, Duration::from_secs(300)).await?;
        let before_changes = manager.counters().await?;
        let latencies = complete::claim_latencies(
            &self.client,
            load,
            &sample,
            Duration::from_millis(100),
            Duration::from_secs(300),
        )
        .await?;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let after_changes = manager.counters().await?;
        let latency = Samples(latencies);
        Ok(json!({
            "seconds_to_dispatch_all": round2(dispatched),
            "cpu_seconds_to_dispatch_all": cpu_dispatched.map(round2),
            "cpu_seconds_total": manager.cpu_seconds().map(round2),
            "peak_rss_mib": mib(manager.peak_kib()),
            "settled_rss_mib": mib(settled),
            "rss_samples_mib": manager.samples().iter().step_by(4)
                .map(|s| json!([round2(s.at), round2(s.rss_kib as f64 / 1024.0)])).collect::<Vec<_>>(),
            "requests_to_dispatch_all": after_dispatch.since(&at_start),
            "requests_while_idle": after_settle.since(&after_dispatch),
            "idle_seconds": args.settle_seconds,
            "requests_for_changes": after_changes.since(&before_changes),
            "claim_latency_seconds": {
                "p50": round2(latency.median() * 1000.0) / 1000.0,
                "p99": round2(percentile(&latency.0, 0.99) * 1000.0) / 1000.0,
                "max": round2(latency.max() * 1000.0) / 1000.0,
                "samples": latency.0.len(),
            },
            "log": manager.log.display().to_string(),
        }))
    }

    /// One point of the memory curve: `n` PtahSchemas and nothing else.
    async fn curve_point(&self, args: &Args, n: usize) -> anyhow::Result<Value> {
        let load = Load {
            prefix: format!("pbc{}-{n}", self.tag),
            namespaces: args.namespaces,
            schemas: n,
            migrations: 0,
            configmaps: 0,
            configmap_bytes: 0,
            plans: 0,
            plan_bytes: 0,
        };
        load::namespaces(&self.client, &load).await?;
        load::resources(&self.client, &load).await?;
        let mut manager = self.start(&load)?;
        let outcome = async {
            let dispatched = self.wait_dispatched(&mut manager, &load).await?;
            tokio::time::sleep(Duration::from_secs(args.settle_seconds)).await;
            manager.alive()?;
            let point = json!({
                "schemas": n,
                "seconds_to_dispatch_all": round2(dispatched),
                "cpu_seconds_total": manager.cpu_seconds().map(round2),
                "peak_rss_mib": mib(manager.peak_kib()),
                "settled_rss_mib": mib(manager.settled_kib(args.settle_seconds as f64 / 2.0)),
            });
            eprintln!("  curve: {point}");
            anyhow::Ok(point)
        }
        .await;
        load::delete(&self.client, &load, DELETE_TIMEOUT).await;
        drop(manager);
        outcome
    }

    async fn counters(&self, manager: &mut Manager) -> anyhow::Result<process::Counters> {
        for _ in 0..100 {
            manager.alive()?;
            if let Ok(c) = manager.counters().await {
                return Ok(c);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bail!(
            "the manager's metrics endpoint did not answer; its log is {}",
            manager.log.display()
        )
    }

    /// Waits until every resource of `load` has its Job; returns the seconds since the start.
    async fn wait_dispatched(&self, manager: &mut Manager, load: &Load) -> anyhow::Result<f64> {
        let want = load.schemas + load.migrations;
        let jobs: Api<Job> = Api::all(self.client.clone());
        let selector = format!(
            "{}={}",
            ptah_workload::MANAGED_BY_LABEL,
            ptah_workload::MANAGED_BY_VALUE
        );
        let deadline = Instant::now() + Duration::from_secs(600 + want as u64);
        loop {
            manager.alive()?;
            let list = jobs
                .list_metadata(&ListParams::default().labels(&selector))
                .await?;
            let have = list
                .items
                .iter()
                .filter(|j| {
                    j.metadata
                        .namespace
                        .as_deref()
                        .is_some_and(|ns| ns.starts_with(&load.prefix))
                })
                .count();
            if have >= want {
                return Ok(manager.elapsed());
            }
            if Instant::now() > deadline {
                bail!(
                    "{have} of {want} Jobs after {:.0} s; the manager's log is {}",
                    manager.elapsed(),
                    manager.log.display()
                );
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

fn percentile(samples: &[f64], q: f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let Some(last) = s.len().checked_sub(1) else {
        return f64::NAN;
    };
    s[((last as f64) * q).round() as usize]
}

fn print_summary(report: &Value) {
    let m = &report["main"];
    if !m.is_null() {
        println!("manager under {}", m["load"]);
        println!(
            "  peak RSS {} MiB, settled RSS {} MiB (goal ≤ 28 MB); every Job after {} s, {} CPU s",
            m["peak_rss_mib"],
            m["settled_rss_mib"],
            m["seconds_to_dispatch_all"],
            m["cpu_seconds_to_dispatch_all"]
        );
        println!(
            "  spec change → next claim: p50 {} s, p99 {} s over {} changes",
            m["claim_latency_seconds"]["p50"],
            m["claim_latency_seconds"]["p99"],
            m["claim_latency_seconds"]["samples"]
        );
        println!("  requests to dispatch all: {}", m["requests_to_dispatch_all"]);
        println!("  requests while idle: {}", m["requests_while_idle"]);
        println!("  requests for the changes: {}", m["requests_for_changes"]);
    }
    for p in report["curve"].as_array().into_iter().flatten() {
        println!(
            "  {:>5} PtahSchemas: settled {} MiB, peak {} MiB",
            p["schemas"], p["settled_rss_mib"], p["peak_rss_mib"]
        );
    }
}
