//! The HA phase's tools: the webhook probe, the leader crash, the leader Lease.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::api::{coordination::v1::Lease, core::v1::Pod};
use kube::{Api, Client};
use ptah_api::PtahSchemaApproval;

use crate::lifecycle::{Probe, probe};

use super::LEADER_LEASE;

/// Probes the approval webhook every 200 ms with a dry-run approval naming no plan, until `stop`.
pub(crate) fn probe_webhook(
    client: Client,
    ns: String,
    schema_uid: String,
    stop: Arc<AtomicBool>,
) -> Arc<Mutex<Vec<(Instant, Probe)>>> {
    let seen: Arc<Mutex<Vec<(Instant, Probe)>>> = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        let api: Api<PtahSchemaApproval> = Api::namespaced(client, &ns);
        while !stop.load(Ordering::Relaxed) {
            let at = Instant::now();
            let (probe, _) = probe(&api, &schema_uid).await;
            out.lock().expect("probes").push((at, probe));
            tokio::time::sleep(Duration::from_millis(200).saturating_sub(at.elapsed())).await;
        }
    });
    seen
}

/// SIGKILLs the manager container of `pod` through the local node's containerd (`ctr`).
pub(crate) async fn crash(pods: &Api<Pod>, pod: &str) {
    let live = pods.get(pod).await.expect("the leader Pod");
    let id = live
        .status
        .and_then(|s| s.container_statuses)
        .and_then(|c| c.into_iter().find(|c| c.name == "manager"))
        .and_then(|c| c.container_id)
        .and_then(|id| id.strip_prefix("containerd://").map(str::to_owned))
        .expect("the manager container's containerd id");
    let socket = ptah_apitests::workspace_root().join("target/cluster/containerd/containerd.sock");
    let out = std::process::Command::new("ctr")
        .arg("--address")
        .arg(&socket)
        .args(["-n", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", &id])
        .output()
        .unwrap_or_else(|e| {
            panic!("ctr: {e}; the local provider's containerd (cargo xtask cluster up) is needed")
        });
    assert!(
        out.status.success(),
        "ctr tasks kill: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) async fn leader(client: &Client, ns: &str) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    leases
        .get_opt(LEADER_LEASE)
        .await
        .ok()
        .flatten()?
        .spec?
        .holder_identity
}
