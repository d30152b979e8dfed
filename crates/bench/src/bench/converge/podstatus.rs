//! Inside each operation Pod, from the kubelet's own container timestamps (whole seconds): how
//! long each container ran and how long the Pod waited between one container ending and the
//! next starting. The watches see the Pod only when the kubelet writes its status, which often
//! folds several container transitions into one write; these timestamps do not.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::{api::core::v1::Pod, apimachinery::pkg::apis::meta::v1::Time};
use kube::ResourceExt;
use serde_json::{Value, json};

use super::watch::Claimed;
use crate::bench::samples::Samples;

fn secs(t: &Time) -> f64 {
    t.0.as_millisecond() as f64 / 1000.0
}

/// Per operation kind, the medians of: scheduled → first container started, each container's
/// run, and each wait between containers (`→ <name>`).
pub(super) fn inside_pods(pods: &[Pod], claims: &[Claimed]) -> Value {
    let kind_of: HashMap<&str, &str> = claims.iter().map(|c| (c.job.as_str(), c.kind.as_str())).collect();
    let mut by_kind: BTreeMap<String, BTreeMap<String, Samples>> = BTreeMap::new();
    for pod in pods {
        let Some(kind) = pod.labels().get("job-name").and_then(|j| kind_of.get(j.as_str())) else {
            continue;
        };
        let Some(status) = &pod.status else { continue };
        let scheduled = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "PodScheduled" && c.status == "True")
            .and_then(|c| c.last_transition_time.as_ref())
            .map(secs);
        let mut previous_end = scheduled;
        let mut first = true;
        let phases = by_kind.entry((*kind).to_owned()).or_default();
        let all = status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(status.container_statuses.iter().flatten());
        for c in all {
            let Some(t) = c.state.as_ref().and_then(|s| s.terminated.as_ref()) else {
                previous_end = None;
                continue;
            };
            let (Some(start), Some(end)) =
                (t.started_at.as_ref().map(secs), t.finished_at.as_ref().map(secs))
            else {
                previous_end = None;
                continue;
            };
            if let Some(before) = previous_end {
                let name = if first {
                    "scheduled → first container".to_owned()
                } else {
                    format!("→ {}", c.name)
                };
                phases.entry(name).or_default().0.push(start - before);
            }
            phases.entry(c.name.clone()).or_default().0.push(end - start);
            previous_end = Some(end);
            first = false;
        }
    }
    let out: serde_json::Map<String, Value> = by_kind
        .into_iter()
        .map(|(kind, phases)| {
            let p: serde_json::Map<String, Value> = phases
                .into_iter()
                .map(|(n, s)| (n, json!({"median": s.median(), "max": s.max(), "n": s.0.len()})))
                .collect();
            (kind, Value::Object(p))
        })
        .collect();
    Value::Object(out)
}
