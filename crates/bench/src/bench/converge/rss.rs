//! The in-cluster manager's memory and CPU, read from `/proc` of this host: the full tier runs its
//! containers here, so each manager Pod's `/manager` is a local process, found by the Pod UID in
//! its cgroup path.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::Context;
use k8s_openapi::api::coordination::v1::Lease;
use kube::{Api, Client, ResourceExt, api::ListParams};
use serde_json::{Value, json};

/// The manager's leader-election Lease (its `--leader-lease` default, which the chart keeps).
const LEADER_LEASE: &str = "ptah-operator-leader";

/// One manager replica's process.
#[derive(Clone, Debug)]
struct Replica {
    pod: String,
    pid: u32,
    /// Highest VmRSS sampled during the run, KiB.
    max_rss_kib: u64,
    /// VmRSS at the last sample, KiB.
    last_rss_kib: u64,
    /// CPU seconds at the start of the sampling.
    cpu_start: f64,
}

/// Samples every manager replica's VmRSS until dropped.
pub(super) struct Sampler {
    replicas: Arc<Mutex<Vec<Replica>>>,
    task: tokio::task::JoinHandle<()>,
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command may hold spaces; the fields after it start past the last ')'.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // USER_HZ is 100 on Linux for every architecture this runs on.
    Some(ticks as f64 / 100.0)
}

/// The PID of the `manager` process whose cgroup names Pod `uid` (cgroupfs or systemd spelling).
fn find_pid(uid: &str) -> Option<u32> {
    let systemd = uid.replace('-', "_");
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() != "manager" {
            continue;
        }
        let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
        if cgroup.contains(uid) || cgroup.contains(&systemd) {
            return Some(pid);
        }
    }
    None
}

/// Other manager processes on this host (PID and command line): one watching every namespace
/// reconciles this run's PtahSchemas too, and two managers' claims replace each other.
pub(super) fn other_managers(sampler: &Sampler) -> Vec<(u32, String)> {
    let known: Vec<u32> = sampler
        .replicas
        .lock()
        .map(|r| r.iter().map(|r| r.pid).collect())
        .unwrap_or_default();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| !known.contains(pid))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim().starts_with("manager"))
        })
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let text: String = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (pid, text.chars().take(200).collect())
        })
        .collect()
}

impl Sampler {
    /// Finds the running manager Pods of the release in `release_ns` and samples them every 250 ms.
    pub(super) async fn start(client: &Client, release_ns: &str) -> anyhow::Result<Sampler> {
        let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), release_ns);
        let mut replicas = Vec::new();
        for pod in pods.list(&ListParams::default()).await?.items {
            let name = pod.name_any();
            if !name.starts_with(ptah_apitests::release::MANAGER_DEPLOYMENT) {
                continue;
            }
            let Some(uid) = pod.uid() else { continue };
            let Some(pid) = find_pid(&uid) else {
                eprintln!("bench converge: no local process for manager Pod {name}; its memory is not read");
                continue;
            };
            replicas.push(Replica {
                pod: name,
                pid,
                max_rss_kib: status_kib(pid, "VmRSS:").unwrap_or(0),
                last_rss_kib: 0,
                cpu_start: cpu_seconds(pid).unwrap_or(0.0),
            });
        }
        let replicas = Arc::new(Mutex::new(replicas));
        let sink = replicas.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                if let Ok(mut rs) = sink.lock() {
                    for r in rs.iter_mut() {
                        if let Some(kib) = status_kib(r.pid, "VmRSS:") {
                            r.max_rss_kib = r.max_rss_kib.max(kib);
                            r.last_rss_kib = kib;
                        }
                    }
                }
            }
        });
        Ok(Sampler { replicas, task })
    }

    /// Each replica's memory (MiB) and CPU over the run, the leader marked.
    pub(super) async fn report(
        &self,
        client: &Client,
        release_ns: &str,
        seconds: f64,
    ) -> anyhow::Result<Value> {
        let leases: Api<Lease> = Api::namespaced(client.clone(), release_ns);
        let leader = leases
            .get_opt(LEADER_LEASE)
            .await
            .context("read the leader Lease")?
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity);
        let replicas = self.replicas.lock().map(|r| r.clone()).unwrap_or_default();
        let mib = |k: u64| (k as f64 / 1024.0 * 10.0).round() / 10.0;
        let rows: Vec<Value> = replicas
            .iter()
            .map(|r| {
                let cpu = cpu_seconds(r.pid).map(|c| c - r.cpu_start);
                json!({
                    "pod": r.pod,
                    "leader": leader.as_deref() == Some(r.pod.as_str()),
                    "rss_max_mib": mib(r.max_rss_kib),
                    "rss_end_mib": mib(r.last_rss_kib),
                    "vm_hwm_mib": status_kib(r.pid, "VmHWM:").map(mib),
                    "cpu_seconds": cpu.map(|c| (c * 100.0).round() / 100.0),
                    "cpu_cores_avg": cpu.map(|c| (c / seconds.max(0.001) * 1000.0).round() / 1000.0),
                })
            })
            .collect();
        Ok(json!({"leader": leader, "replicas": rows}))
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.task.abort();
    }
}
