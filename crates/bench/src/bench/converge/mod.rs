//! `cargo xtask bench converge`: cold convergence on the full local cluster. The chart is
//! installed with this checkout's images, N fresh databases get their Secrets, one schema
//! artifact per engine is pushed, and N PtahSchemas with `policy.apply: Always` are applied at
//! once with `kubectl apply -f` of one file; the timer runs from there until every one is InSync
//! (a fresh Plan after the Apply said no changes). Reported, never asserted: the time, each
//! resource's time, where the time went (operation kinds × phases, the critical path), the
//! manager's RSS and CPU. Everything it created is removed at the end, also after a failure.

mod podstatus;
mod report;
mod rss;
mod setup;
pub(super) mod timeline;
mod watch;

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use kube::{
    Api, Client,
    api::{DeleteParams, ListParams, Patch, PatchParams},
};
use ptah_api::PtahSchema;
use ptah_testenv::step::workspace_root;
use ptah_testservices::TestServices;
use serde_json::{Value, json};

use self::setup::{Database, Engine};

/// Arguments of `cargo xtask bench converge`.
#[derive(clap::Args, Clone)]
pub struct Args {
    /// PtahSchemas, each against its own fresh database.
    #[arg(long, default_value_t = 20)]
    schemas: usize,
    /// How many of them run on MariaDB (the rest on PostgreSQL).
    #[arg(long, default_value_t = 0)]
    mariadb: usize,
    /// Tables of the desired schema.
    #[arg(long, default_value_t = 5)]
    tables: usize,
    /// Give up after this many seconds from the apply.
    #[arg(long, default_value_t = 600)]
    timeout_seconds: u64,
    /// Leave the release, namespaces and databases in place (to look at them).
    #[arg(long)]
    keep: bool,
    /// Where the JSON report goes (default target/bench/converge.json).
    #[arg(long)]
    output: Option<PathBuf>,
}

/// What exists so far, for the cleanup.
#[derive(Default)]
struct Created {
    ns: Option<String>,
    release_ns: Option<String>,
    databases: Vec<Database>,
}

type Shared = Arc<Mutex<Created>>;

fn note(created: &Shared, f: impl FnOnce(&mut Created)) {
    if let Ok(mut c) = created.lock() {
        f(&mut c);
    }
}

/// Runs the benchmark.
pub fn run(args: Args) -> anyhow::Result<()> {
    let build = super::output::build();
    let cluster = ptah_apitests::ClusterFiles::load()
        .map_err(|e| anyhow::anyhow!("{e}; this benchmark needs `cargo xtask cluster up` (the full tier)"))?;
    if cluster.tier != "full" {
        bail!(
            "the cluster is the {} tier; bench converge runs Pods and needs the full tier",
            cluster.tier
        );
    }
    let services =
        TestServices::load().context("the test services are not up: run `cargo xtask services up`")?;
    if args.mariadb > args.schemas {
        bail!("--mariadb {} exceeds --schemas {}", args.mariadb, args.schemas);
    }
    eprintln!(
        "bench converge: {build} build of the bench; manager and data-plane images as `cargo xtask images` \
         last pushed them ({})",
        ptah_apitests::e2e::image_reference("manager")
    );
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
        let created = Shared::default();
        // A spawned task, so that a panicking fixture still leaves the cleanup below to run.
        let body = tokio::spawn(measure(
            client.clone(),
            services.clone(),
            args.clone(),
            created.clone(),
        ));
        let outcome = match body.await {
            Ok(outcome) => outcome,
            Err(panic) => Err(anyhow::anyhow!("the run panicked: {panic}")),
        };
        if args.keep {
            eprintln!("bench converge: --keep: the release, namespaces and databases stay");
        } else {
            cleanup(&client, &services, &created).await;
        }
        outcome
    })?;
    let mut report = report;
    report["build"] = json!(build);
    report["kubernetes"] = json!(cluster.version);
    let path = super::output::path(args.output.clone(), "converge");
    super::output::write(&path, &report)?;
    report::print(&report);
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Everything up to the report: fixtures, install, the timed apply, the collection.
async fn measure(
    client: Client,
    services: TestServices,
    args: Args,
    created: Shared,
) -> anyhow::Result<Value> {
    let prepared = Instant::now();
    let ns = ptah_apitests::client::namespace(&client, "bench-converge").await;
    note(&created, |c| c.ns = Some(ns.clone()));
    eprintln!("bench converge: installing the chart for namespace {ns}");
    let image = ptah_apitests::e2e::data_plane_image();
    let release_ns = ptah_apitests::release::install(&client, &ns, &services, &image, &[]).await;
    note(&created, |c| c.release_ns = Some(release_ns.clone()));

    let engines: Vec<Engine> = (0..args.schemas)
        .map(|i| {
            if i < args.schemas - args.mariadb {
                Engine::Postgres
            } else {
                Engine::Mariadb
            }
        })
        .collect();
    let mut used = engines.clone();
    used.dedup();
    setup::shared_objects(&client, &ns, &services, &used).await?;
    let pod_registry = setup::pod_registry()?;
    let tag = ns.rsplit('-').next().unwrap_or("x").to_owned();
    let mut references = Vec::new();
    for &engine in &used {
        let (s, repository, registry) = (
            services.clone(),
            format!("bench/converge-{tag}-{}", engine.label()),
            pod_registry.clone(),
        );
        let tables = args.tables;
        let reference = tokio::task::spawn_blocking(move || {
            setup::push_artifact(&s, engine, tables, &repository, &registry)
        })
        .await??;
        references.push((engine, reference));
    }
    let mut docs = Vec::new();
    let mut names = Vec::new();
    for (i, &engine) in engines.iter().enumerate() {
        let db = Database {
            schema: format!("app-{i:02}"),
            engine,
            name: format!("bc_{tag}_{i:02}"),
        };
        setup::create_database(&services, engine, &db.name).await?;
        note(&created, |c| c.databases.push(db.clone()));
        let url = setup::pod_url(&services, engine, &db.name)?;
        setup::database_secret(&client, &ns, &db, &url).await?;
        let reference = references
            .iter()
            .find(|(e, _)| *e == engine)
            .map(|(_, r)| r.clone())
            .context("no artifact for the engine")?;
        docs.push(setup::manifest(&ns, &db, &reference, setup::has_db_ca(&services, engine)).to_string());
        names.push(db.schema.clone());
    }
    let manifest = workspace_root().join("target/bench/converge-manifest.yaml");
    std::fs::create_dir_all(workspace_root().join("target/bench"))?;
    std::fs::write(&manifest, docs.join("\n---\n") + "\n")?;
    let leader = wait_for_leader(&client, &release_ns).await?;
    eprintln!(
        "bench converge: ready in {:.0} s (leader {leader}); applying {} PtahSchemas",
        prepared.elapsed().as_secs_f64(),
        names.len()
    );

    let sampler = rss::Sampler::start(&client, &release_ns).await?;
    let others = rss::other_managers(&sampler);
    for (pid, cmdline) in &others {
        eprintln!(
            "bench converge: WARNING: another manager runs on this host (PID {pid}: {cmdline}); if it watches \
             every namespace it reconciles these PtahSchemas too and the figures are not the release's"
        );
    }
    let recorder = watch::Recorder::default();
    let watches = recorder.start(&client, &ns);
    // Let the watches list the (empty) namespace first, so no early event is missed.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let t0 = Instant::now();
    let kubeconfig = ptah_apitests::ClusterFiles::load()?.admin_kubeconfig;
    let file = manifest.clone();
    let applied = tokio::task::spawn_blocking(move || {
        std::process::Command::new(ptah_apitests::e2e::kubectl())
            .env("KUBECONFIG", kubeconfig)
            .arg("apply")
            .arg("-f")
            .arg(&file)
            .output()
    })
    .await??;
    let apply_seconds = t0.elapsed().as_secs_f64();
    if !applied.status.success() {
        bail!(
            "kubectl apply failed: {}",
            String::from_utf8_lossy(&applied.stderr)
        );
    }
    let outcome = wait_all(&client, &ns, &recorder, &names, t0, args.timeout_seconds).await;
    let seconds = t0.elapsed().as_secs_f64();
    // A moment for the last settled claims and Job conditions to reach the watches.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for w in watches {
        w.abort();
    }
    let manager = sampler.report(&client, &release_ns, seconds).await?;
    let snapshot = recorder.snapshot(t0);
    let mut report = report::build(&report::Inputs {
        client: &client,
        ns: &ns,
        names: &names,
        engines: &engines,
        tables: args.tables,
        snapshot: &snapshot,
        manager,
        apply_seconds,
        data_plane: &image,
    })
    .await?;
    report["other_managers"] = json!(
        others
            .iter()
            .map(|(pid, c)| json!({"pid": pid, "cmdline": c}))
            .collect::<Vec<_>>()
    );
    report["images"] = json!({
        "manager": ptah_apitests::e2e::image_reference("manager"),
        "data_plane": image,
    });
    match outcome {
        Ok(()) => Ok(report),
        Err(e) => {
            // Keep what was measured for the post-mortem before failing.
            let path = workspace_root().join("target/bench/converge-failed.json");
            std::fs::write(&path, serde_json::to_string_pretty(&report)? + "\n").ok();
            Err(e.context(format!("the partial report is in {}", path.display())))
        }
    }
}

/// Waits until the leader Lease names a holder; returns it.
async fn wait_for_leader(client: &Client, release_ns: &str) -> anyhow::Result<String> {
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> = Api::namespaced(client.clone(), release_ns);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let holder = leases
            .get_opt("ptah-operator-leader")
            .await?
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
            .filter(|h| !h.is_empty());
        if let Some(h) = holder {
            return Ok(h);
        }
        if Instant::now() > deadline {
            bail!("no manager replica became leader within 120 s");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the watches saw every PtahSchema InSync; fails on a Failed or Blocked one, or at
/// the timeout.
async fn wait_all(
    client: &Client,
    ns: &str,
    recorder: &watch::Recorder,
    names: &[String],
    t0: Instant,
    timeout: u64,
) -> anyhow::Result<()> {
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
    let mut last_check = Instant::now();
    let mut last_print = Instant::now();
    loop {
        let snap = recorder.snapshot(t0);
        let done = names
            .iter()
            .filter(|n| snap.at(&format!("schema/{n}"), "insync").is_some())
            .count();
        if done == names.len() {
            return Ok(());
        }
        if last_print.elapsed() >= Duration::from_secs(10) {
            eprintln!(
                "  {:>4.0} s: {done}/{} InSync",
                t0.elapsed().as_secs_f64(),
                names.len()
            );
            last_print = Instant::now();
        }
        if last_check.elapsed() >= Duration::from_secs(2) {
            last_check = Instant::now();
            for s in schemas.list(&ListParams::default()).await?.items {
                let st = s.status.as_ref();
                let phase = st.and_then(|st| st.phase);
                use ptah_api::schema::SchemaPhase::{Blocked, Failed};
                if matches!(phase, Some(Failed | Blocked)) {
                    let conditions: Vec<String> = st
                        .map(|st| {
                            st.conditions
                                .iter()
                                .map(|c| format!("{}={} {}: {}", c.type_, c.status, c.reason, c.message))
                                .collect()
                        })
                        .unwrap_or_default();
                    bail!(
                        "PtahSchema {} is {:?}:\n  {}",
                        kube::ResourceExt::name_any(&s),
                        phase,
                        conditions.join("\n  ")
                    );
                }
            }
        }
        if t0.elapsed() > Duration::from_secs(timeout) {
            bail!("{done}/{} PtahSchemas InSync after {timeout} s", names.len());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Removes what the run created: the PtahSchemas while their manager still runs (it takes its
/// finalizer off), the release, whatever finalizer is left, the namespaces, the databases.
async fn cleanup(client: &Client, services: &TestServices, created: &Shared) {
    let (ns, release_ns, databases) = match created.lock() {
        Ok(mut c) => (c.ns.take(), c.release_ns.take(), std::mem::take(&mut c.databases)),
        Err(_) => return,
    };
    eprintln!("bench converge: cleaning up");
    if let Some(ns) = &ns {
        let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
        let _ = schemas
            .delete_collection(&DeleteParams::default(), &ListParams::default())
            .await;
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            match schemas.list(&ListParams::default()).await {
                Ok(l) if l.items.is_empty() => break,
                Err(_) => break,
                Ok(_) => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }
    // An install that failed returned no namespace; it is the one named after this process.
    let release_ns = match release_ns {
        Some(n) => Some(n),
        None => own_release_namespace(client).await,
    };
    if let Some(release_ns) = release_ns.clone() {
        // The guard's drop runs `helm uninstall --wait` and removes the release's policies.
        let _ = tokio::task::spawn_blocking(move || drop(ptah_apitests::release::Release(release_ns))).await;
    }
    if let Some(ns) = &ns {
        let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
        for s in schemas
            .list(&ListParams::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default()
        {
            let name = kube::ResourceExt::name_any(&s);
            let patch = json!({"metadata": {"finalizers": null}});
            let _ = schemas
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await;
        }
    }
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    for n in ns.iter().chain(release_ns.iter()) {
        if let Err(e) = namespaces.delete(n, &DeleteParams::default()).await {
            eprintln!("bench converge: cannot delete namespace {n}: {e}");
        }
    }
    for db in &databases {
        if let Err(e) = setup::drop_database(services, db).await {
            eprintln!("bench converge: {e:#}");
        }
    }
}

/// The release namespace `ptah_apitests::release::install` created in this process, if any
/// (`ptah-system-<pid>-…`, see `ptah_apitests::client::unique`).
async fn own_release_namespace(client: &Client) -> Option<String> {
    let prefix = format!("ptah-system-{}-", std::process::id());
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .list(&ListParams::default())
        .await
        .ok()?
        .items
        .into_iter()
        .map(|n| kube::ResourceExt::name_any(&n))
        .find(|n| n.starts_with(&prefix))
}
