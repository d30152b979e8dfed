//! The converge report: the JSON document and the table printed after a run.

use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{Event, Pod},
};
use kube::{Api, Client, api::ListParams};
use serde_json::{Value, json};

use super::{podstatus, setup::Engine, timeline, watch::Snapshot};
use crate::bench::samples::Samples;

/// The reference's cold start of 20 resources (`peers.md` §4, capacity run "lab-20").
const REFERENCE_SECONDS: f64 = 112.0;
/// The goal: half the reference.
const GOAL_SECONDS: f64 = 56.0;

/// What the report is built from.
pub(super) struct Inputs<'a> {
    pub(super) client: &'a Client,
    pub(super) ns: &'a str,
    pub(super) names: &'a [String],
    pub(super) engines: &'a [Engine],
    pub(super) tables: usize,
    pub(super) snapshot: &'a Snapshot,
    pub(super) manager: Value,
    pub(super) apply_seconds: f64,
    /// The release's data-plane image: a Job of another was not the release's.
    pub(super) data_plane: &'a str,
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Image pulls the kubelet reported in the namespace: (pulled, already present).
async fn pulls(client: &Client, ns: &str) -> (usize, usize) {
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    let items = events
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    let pulled = items.iter().filter(|e| e.reason.as_deref() == Some("Pulled"));
    let (mut fresh, mut present) = (0, 0);
    for e in pulled {
        if e.message
            .as_deref()
            .is_some_and(|m| m.contains("already present"))
        {
            present += 1;
        } else {
            fresh += 1;
        }
    }
    (fresh, present)
}

/// Builds the JSON report.
pub(super) async fn build(i: &Inputs<'_>) -> anyhow::Result<Value> {
    let s = i.snapshot;
    let mut times = Samples::default();
    let mut resources = Vec::new();
    for (name, engine) in i.names.iter().zip(i.engines) {
        let key = format!("schema/{name}");
        let at = s.at(&key, "insync");
        if let Some(t) = at {
            times.0.push(t);
        }
        let ops: Vec<&str> = s
            .claims
            .iter()
            .filter(|c| &c.schema == name)
            .map(|c| c.kind.as_str())
            .collect();
        resources.push(json!({
            "name": name, "engine": engine.label(),
            "in_sync_seconds": at.map(round),
            "first_claim_seconds": s.claims.iter().find(|c| &c.schema == name)
                .and_then(|c| s.at(&format!("job/{}", c.job), "claimed")).map(round),
            "operations": ops,
        }));
    }
    let all = i.names.len() == times.0.len();
    let jobs: Api<Job> = Api::namespaced(i.client.clone(), i.ns);
    let listed = jobs.list(&ListParams::default()).await?.items;
    let failed = listed
        .iter()
        .filter(|j| j.status.as_ref().and_then(|s| s.failed).unwrap_or(0) > 0)
        .count();
    // A Job of another image was created by some other manager, not the release's.
    let foreign = listed
        .iter()
        .filter(|j| {
            let image = j
                .spec
                .as_ref()
                .and_then(|s| s.template.spec.as_ref())
                .and_then(|p| p.containers.first())
                .and_then(|c| c.image.as_deref());
            image != Some(i.data_plane)
        })
        .count();
    let (pulled, present) = pulls(i.client, i.ns).await;
    let pods: Api<Pod> = Api::namespaced(i.client.clone(), i.ns);
    let pods = pods.list(&ListParams::default()).await?.items;
    let converged = all.then(|| round(times.max()));
    let pg = i.engines.iter().filter(|e| **e == Engine::Postgres).count();
    Ok(json!({
        "benchmark": "converge",
        "schemas": i.names.len(),
        "engines": {"postgresql": pg, "mariadb": i.engines.len() - pg},
        "tables_per_schema": i.tables,
        "apply_policy": "Always",
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "converged_seconds": converged,
        "goal_seconds": GOAL_SECONDS,
        "reference_seconds": REFERENCE_SECONDS,
        "kubectl_apply_seconds": round(i.apply_seconds),
        "in_sync_seconds": {"median": round(times.median()), "min": round(times.min()), "max": round(times.max())},
        "jobs": {"count": listed.len(), "failed": failed, "foreign": foreign, "claims_seen": s.claims.len()},
        "job_completion_seconds": timeline::job_completion(s),
        "image_pulls": {"pulled": pulled, "already_present": present},
        "manager": i.manager,
        "breakdown": timeline::breakdown(s, i.names),
        "inside_pods_seconds": podstatus::inside_pods(&pods, &s.claims),
        "resources": resources,
    }))
}

fn num(v: &Value) -> String {
    v.as_f64().map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"))
}

/// Prints the summary table.
pub(super) fn print(r: &Value) {
    println!(
        "bench converge ({} build of the bench; images: {}): {} PtahSchemas ({} PostgreSQL, {} MariaDB), apply Always, {} tables, {} cores",
        r["build"].as_str().unwrap_or("?"),
        r["images"]["manager"].as_str().unwrap_or("?"),
        r["schemas"],
        r["engines"]["postgresql"],
        r["engines"]["mariadb"],
        r["tables_per_schema"],
        r["cores"]
    );
    println!(
        "  converged (kubectl apply → all InSync): {} s   goal ≤ {} s, reference {} s",
        num(&r["converged_seconds"]),
        r["goal_seconds"],
        r["reference_seconds"]
    );
    let t = &r["in_sync_seconds"];
    println!(
        "  per resource InSync: median {} s, min {} s, max {} s",
        num(&t["median"]),
        num(&t["min"]),
        num(&t["max"])
    );
    let j = &r["job_completion_seconds"];
    println!(
        "  Jobs: {} ({} failed, {} of another manager); Job created → finished p50/p95/max {}/{}/{} s; image pulls {} (already present {})",
        r["jobs"]["count"],
        r["jobs"]["failed"],
        r["jobs"]["foreign"],
        num(&j["median"]),
        num(&j["p95"]),
        num(&j["max"]),
        r["image_pulls"]["pulled"],
        r["image_pulls"]["already_present"]
    );
    for m in r["manager"]["replicas"].as_array().into_iter().flatten() {
        println!(
            "  manager {}{}: RSS max {} MiB (VmHWM {} MiB, at end {} MiB), CPU {} s ({} cores avg)",
            m["pod"].as_str().unwrap_or("?"),
            if m["leader"].as_bool() == Some(true) {
                " (leader)"
            } else {
                ""
            },
            num(&m["rss_max_mib"]),
            num(&m["vm_hwm_mib"]),
            num(&m["rss_end_mib"]),
            num(&m["cpu_seconds"]),
            num(&m["cpu_cores_avg"])
        );
    }
    let b = &r["breakdown"];
    let phases: Vec<&str> = super::timeline::phase_names().collect();
    println!("  medians by operation (s):");
    print!("  {:<16}", "kind");
    for p in &phases {
        print!(" {p:>14}");
    }
    println!();
    for (kind, v) in b["by_kind"].as_object().into_iter().flatten() {
        print!("  {kind:<16}");
        for p in &phases {
            print!(" {:>14}", num(&v[*p]["median"]));
        }
        println!();
    }
    println!("  inside the Pods, medians from the kubelet's container timestamps (whole seconds):");
    for (kind, v) in r["inside_pods_seconds"].as_object().into_iter().flatten() {
        let cells: Vec<String> = v
            .as_object()
            .into_iter()
            .flatten()
            .map(|(n, s)| format!("{n} {}", num(&s["median"])))
            .collect();
        println!("  {kind:<16} {}", cells.join(", "));
    }
    println!(
        "  apply → first claim median {} s; settled → next claim median {} s; last settled → InSync median {} s",
        num(&b["apply_to_first_claim"]["median"]),
        num(&b["settled_to_next_claim"]["median"]),
        num(&b["last_settled_to_in_sync"]["median"])
    );
    let c = &b["critical_path"];
    if !c.is_null() {
        println!(
            "  critical path: {} InSync at {} s",
            c["schema"].as_str().unwrap_or("?"),
            num(&c["in_sync_at"])
        );
        for op in c["operations"].as_array().into_iter().flatten() {
            println!(
                "    {:<16} claimed {:>7} settled {:>7}  run {:>6}  pod start {:>6}",
                op["kind"].as_str().unwrap_or("?"),
                num(&op["claimed_at"]),
                num(&op["settled_at"]),
                num(&op["phases"]["main run"]),
                num(&op["phases"]["sandbox"])
            );
        }
        println!("    phase sums: {}", c["phase_sums"]);
    }
}
