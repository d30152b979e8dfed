//! Observers of what a run did, polled in the background: every operation Job ever seen (the
//! manager deletes finished Jobs), with its start and completion, and the realm Lease holders.

use std::{collections::BTreeSet, time::Duration};

use k8s_openapi::api::{batch::v1::Job, coordination::v1::Lease};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as Timestamp;
use kube::{Api, Client, ResourceExt, api::ListParams};
use ptah_api::PtahMigrationPlan;

/// The names of every Job seen whose operation label contains `op` (all when `None`).
pub(crate) fn seen_of(spans: &Spans, op: Option<&str>) -> BTreeSet<String> {
    spans
        .lock()
        .expect("spans")
        .iter()
        .filter(|(_, s)| op.is_none_or(|want| s.0.contains(want)))
        .map(|(n, _)| n.clone())
        .collect()
}

/// The names of every Apply Job seen.
pub(crate) fn applies_of(spans: &Spans) -> BTreeSet<String> {
    seen_of(spans, Some("apply"))
}

pub(crate) fn versions(plan: &PtahMigrationPlan) -> Vec<i64> {
    plan.spec.migrations.iter().map(|m| m.version).collect()
}

/// One Job's span: (operation, owner, started, completed).
pub(crate) type Span = (String, String, Option<Timestamp>, Option<Timestamp>);
/// Every operation Job of the namespace ever seen (the manager deletes finished Jobs), by name.
pub(crate) type Spans = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, Span>>>;

/// Records each operation Job's start and completion as the Job status reports them.
pub(crate) fn observe_spans(client: &Client, ns: &str) -> Spans {
    let spans: Spans = Default::default();
    let (jobs, out): (Api<Job>, Spans) = (Api::namespaced(client.clone(), ns), spans.clone());
    tokio::spawn(async move {
        loop {
            if let Ok(list) = jobs.list(&ListParams::default()).await {
                let mut map = out.lock().expect("spans");
                for j in list.items {
                    let op = j
                        .labels()
                        .get("operator.ptah.run/operation")
                        .cloned()
                        .unwrap_or_default();
                    let owner = j
                        .labels()
                        .get("operator.ptah.run/migration")
                        .or_else(|| j.labels().get("operator.ptah.run/schema"))
                        .cloned()
                        .unwrap_or_default();
                    let st = j.status.clone().unwrap_or_default();
                    let entry = map.entry(j.name_any()).or_insert((op, owner, None, None));
                    entry.2 = entry.2.clone().or(st.start_time);
                    entry.3 = entry.3.clone().or(st.completion_time);
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    spans
}

/// Every holder identity each realm Lease of `ns` had, in the order they appeared.
pub(crate) type Holders = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// Records realm Lease holder changes in the coordination namespace.
pub(crate) fn observe_holders(client: &Client, ns: &str) -> Holders {
    let holders: Holders = Default::default();
    let (leases, out): (Api<Lease>, Holders) = (Api::namespaced(client.clone(), ns), holders.clone());
    tokio::spawn(async move {
        loop {
            let params = ListParams::default().labels("operator.ptah.run/coordination=database-target");
            if let Ok(list) = leases.list(&params).await {
                let mut seen = out.lock().expect("holders");
                for l in list.items {
                    let holder = l.spec.and_then(|s| s.holder_identity).unwrap_or_default();
                    if holder.is_empty() {
                        continue;
                    }
                    let name = l.metadata.name.unwrap_or_default();
                    if seen.iter().rev().find(|(n, _)| *n == name).map(|(_, h)| h) != Some(&holder) {
                        seen.push((name, holder));
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    holders
}
