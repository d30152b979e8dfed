//! A node that stays away: its Pods declared lost, as the cluster or its on-call does.
//!
//! The Job controller deletes a Pod past its `activeDeadlineSeconds`, but on a node cut off
//! from the API server that is only a `deletionTimestamp`: the object stays until the kubelet
//! confirms, and once the node returns the kubelet first reports the Pod's end, and its log can
//! be read for a moment before the Pod goes. Whether the manager reads the frame in that moment
//! is a race the scenarios must not depend on. A lost node's Pods are force-deleted in
//! practice, by a person or by the PodGC under the `node.kubernetes.io/out-of-service` taint
//! (non-graceful node shutdown); this does the same, so no frame is left to read.

use std::time::{Duration, Instant};

use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams},
};
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;

use crate::dataplane::setup::STEP;

/// Waits until the `op` Jobs of `ns` that have not completed are failing (their deadline
/// passed), then deletes those Jobs' Pods with no grace and waits until the API server has
/// forgotten them. Completed Jobs (another resource's Apply) are left alone.
pub async fn force_delete(client: &Client, ns: &str, op: Operation) {
    let selector = format!("{OPERATION_LABEL}={}", op.as_str());
    let params = ListParams::default().labels(&selector);
    let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
    let until = Instant::now() + STEP;
    let failing: Vec<String> = loop {
        let list = jobs.list(&params).await.expect("list the Jobs").items;
        let failing: Vec<String> = list
            .iter()
            .filter(|j| has(j, &["Failed", "FailureTarget"]))
            .filter_map(|j| j.uid())
            .collect();
        let running = list
            .iter()
            .any(|j| !has(j, &["Failed", "FailureTarget", "Complete"]));
        if !failing.is_empty() && !running {
            break failing;
        }
        assert!(
            Instant::now() < until,
            "the {selector} Jobs never failed at their activeDeadlineSeconds"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let now = DeleteParams {
        grace_period_seconds: Some(0),
        ..DeleteParams::default()
    };
    let until = Instant::now() + STEP;
    loop {
        let left: Vec<Pod> = pods
            .list(&params)
            .await
            .expect("list the Pods")
            .items
            .into_iter()
            .filter(|p| {
                p.labels()
                    .get("batch.kubernetes.io/controller-uid")
                    .is_some_and(|uid| failing.contains(uid))
            })
            .collect();
        if left.is_empty() {
            return;
        }
        for pod in &left {
            // The Job controller may already have removed it: a 404 is the goal.
            let _ = pods.delete(&pod.name_any(), &now).await;
        }
        assert!(
            Instant::now() < until,
            "the {selector} Pods were still there after a forced deletion: {:?}",
            left.iter().map(ResourceExt::name_any).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Whether `job` has one of the conditions `types` true. A failing Job says `FailureTarget`: since
/// Kubernetes 1.31 the Job controller adds `Failed` only once every Pod has terminated, which a
/// lost node's Pod never does by itself.
fn has(job: &Job, types: &[&str]) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| types.contains(&c.type_.as_str()) && c.status == "True")
        })
}
