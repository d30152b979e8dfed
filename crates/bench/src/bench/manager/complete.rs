//! Playing the kubelet and the runner where the bench needs a Job to finish: the Job's status is
//! written as the Job controller would for a Pod that failed without a result, which the manager
//! records as a failed read-only operation. Then the latency of the next claim after a spec change.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use futures_util::{StreamExt, TryStreamExt, stream};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, Client, ResourceExt,
    api::{Patch, PatchParams},
    runtime::{WatchStreamExt, watcher},
};
use ptah_api::PtahSchema;
use serde_json::json;

use super::load::{FIELD_MANAGER, Load};

/// Writes a failed terminal status to the Job `name` of `ns`, as the Job controller does once
/// its Pod failed past the backoff limit.
pub(super) async fn fail_job(client: &Client, ns: &str, name: &str) -> anyhow::Result<()> {
    let jobs = Api::<Job>::namespaced(client.clone(), ns);
    let live = jobs
        .get(name)
        .await
        .with_context(|| format!("reading Job {ns}/{name}"))?;
    // Whole seconds: the API server's times have no fraction.
    let now = Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let condition = |type_: &str| {
        json!({"type": type_, "status": "True", "reason": "BackoffLimitExceeded",
               "message": "Job has reached the specified backoff limit (ptah-bench)",
               "lastProbeTime": now, "lastTransitionTime": now})
    };
    let mut status = json!({
        "failed": 1,
        "active": 0,
        "conditions": [condition("FailureTarget"), condition("Failed")],
    });
    // A Job controller (full tier) has set it already and it may not change; the API tier has none.
    if live.status.as_ref().and_then(|s| s.start_time.as_ref()).is_none() {
        status["startTime"] = json!(now);
    }
    jobs.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": status})),
    )
    .await
    .with_context(|| format!("completing Job {ns}/{name}"))?;
    Ok(())
}

/// The claimed Job of `s`, once its dispatch is committed.
pub(super) fn dispatched_job(s: &PtahSchema) -> Option<(String, String)> {
    let c = s.status.as_ref()?.active_operation.as_ref()?;
    (c.dispatch_started == Some(true) && c.job_uid.is_some())
        .then(|| (s.namespace().unwrap_or_default(), c.job_name.clone()))
}

/// Fails the claimed Jobs of `sample` and waits until the manager has recorded every failure
/// (no active operation left).
pub(super) async fn fail_and_settle(
    client: &Client,
    sample: &[PtahSchema],
    timeout: Duration,
) -> anyhow::Result<()> {
    // The live objects: the claim is in their status, not in the objects as created.
    stream::iter(sample)
        .map(|s| async move {
            let api: Api<PtahSchema> = Api::namespaced(client.clone(), &s.namespace().unwrap_or_default());
            let live = api.get(&s.name_any()).await?;
            let (ns, job) = dispatched_job(&live)
                .with_context(|| format!("{} has no dispatched claim to fail", s.name_any()))?;
            fail_job(client, &ns, &job).await
        })
        .buffer_unordered(8)
        .try_collect::<Vec<()>>()
        .await?;
    let deadline = Instant::now() + timeout;
    loop {
        let mut open = 0;
        for s in sample {
            let api: Api<PtahSchema> = Api::namespaced(client.clone(), &s.namespace().unwrap_or_default());
            let live = api.get(&s.name_any()).await?;
            if live
                .status
                .as_ref()
                .is_none_or(|st| st.active_operation.is_some())
            {
                open += 1;
            }
        }
        if open == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{open} of {} PtahSchemas still hold a claim {timeout:?} after their Jobs failed",
                sample.len()
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Changes the artifact tag of each of `sample` (one every `spacing`) and returns, per change,
/// the seconds until the manager persisted its next claim.
pub(super) async fn claim_latencies(
    client: &Client,
    load: &Load,
    sample: &[PtahSchema],
    spacing: Duration,
    timeout: Duration,
) -> anyhow::Result<Vec<f64>> {
    let wanted: HashSet<(String, String)> = sample
        .iter()
        .map(|s| (s.namespace().unwrap_or_default(), s.name_any()))
        .collect();
    let patched: Arc<Mutex<HashMap<(String, String), Instant>>> = Arc::default();
    let claimed: Arc<Mutex<HashMap<(String, String), Instant>>> = Arc::default();
    let (seen_patched, seen_claimed) = (patched.clone(), claimed.clone());
    // One watch over every PtahSchema: the first event showing a claim after its change counts.
    let watch = watcher(Api::<PtahSchema>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .try_for_each(move |s| {
            let key = (s.namespace().unwrap_or_default(), s.name_any());
            let has_claim = s.status.as_ref().is_some_and(|st| st.active_operation.is_some());
            if has_claim
                && let (Ok(p), Ok(mut c)) = (seen_patched.lock(), seen_claimed.lock())
                && p.contains_key(&key)
            {
                c.entry(key).or_insert_with(Instant::now);
            }
            futures_util::future::ready(Ok(()))
        });
    let watch = tokio::spawn(watch);
    // Let the watch list everything first.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for (i, s) in sample.iter().enumerate() {
        let ns = s.namespace().unwrap_or_default();
        let index: usize = s.name_any().trim_start_matches("schema-").parse().unwrap_or(i);
        let desired = &super::load::schema(load, index, "v2")["spec"]["desired"];
        let patch = json!({"spec": {"desired": desired}});
        // Recorded before the request: the claim cannot precede the change it answers.
        if let Ok(mut p) = patched.lock() {
            p.insert((ns.clone(), s.name_any()), Instant::now());
        }
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        Api::<PtahSchema>::namespaced(client.clone(), &ns)
            .patch(&s.name_any(), &params, &Patch::Merge(&patch))
            .await
            .with_context(|| format!("changing {ns}/{}", s.name_any()))?;
        tokio::time::sleep(spacing).await;
    }
    let deadline = Instant::now() + timeout;
    loop {
        let done = claimed.lock().map(|c| c.len()).unwrap_or(0);
        if done >= wanted.len() {
            break;
        }
        if Instant::now() > deadline {
            watch.abort();
            bail!(
                "{} of {} changed PtahSchemas were not claimed within {timeout:?}",
                wanted.len() - done,
                wanted.len()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    watch.abort();
    let (p, c) = (
        patched.lock().map_err(|_| anyhow::anyhow!("poisoned"))?,
        claimed.lock().map_err(|_| anyhow::anyhow!("poisoned"))?,
    );
    Ok(wanted
        .iter()
        .filter_map(|k| Some(c.get(k)?.duration_since(*p.get(k)?).as_secs_f64()))
        .collect())
}
