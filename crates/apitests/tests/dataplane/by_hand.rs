//! What the refusal and gate scenarios (9–16) do by hand, around the shared `Run`: edit the spec
//! and the database Secret, follow the phases a schema passes through, and scan the namespace for
//! a secret of the scenario's own.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams},
};
use ptah_api::{
    PtahSchema, PtahSchemaPlan, PtahSchemaPlanChunk,
    schema::{SchemaOperationType, SchemaPhase},
};
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::Value;

use crate::{
    dataplane::setup::{Run, STEP},
    lifecycle::{app::phase, everything_said},
};

/// Merges `spec` into `orders`' spec.
pub async fn patch_spec(run: &Run, spec: Value) {
    run.app
        .schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "spec": spec })),
        )
        .await
        .expect("patch the spec");
}

/// The Pod URL the database Secret `db` holds.
pub async fn db_url(run: &Run) -> String {
    let secrets: Api<Secret> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let secret = secrets.get("db").await.expect("the database Secret");
    secret
        .data
        .as_ref()
        .and_then(|d| d.get("url"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .expect("the database URL")
}

/// Replaces the URL the database Secret `db` holds.
pub async fn set_db_url(run: &Run, url: &str) {
    let secrets: Api<Secret> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    secrets
        .patch(
            "db",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"stringData": {"url": url}})),
        )
        .await
        .expect("edit the database Secret");
}

/// Everything the status says, for a typed reason or message.
pub fn said(s: &PtahSchema) -> String {
    serde_json::to_string(&s.status).unwrap_or_default()
}

/// The phases `orders` passed through during `span` (each recorded once, in order), and its last
/// state. A poll, not a watch: a phase held for less than the poll period may be missed, which
/// only weakens "never entered" claims made by the caller, never strengthens them.
pub async fn phases_during(run: &Run, span: Duration) -> (Vec<SchemaPhase>, PtahSchema) {
    let end = Instant::now() + span;
    let mut seen = Vec::new();
    loop {
        let s = run.app.schemas.get("orders").await.expect("get orders");
        if let Some(p) = phase(&s)
            && seen.last() != Some(&p)
        {
            seen.push(p);
        }
        if Instant::now() >= end {
            return (seen, s);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Scans what `Scenario::leak_scan` scans (every Pod log, Event, PtahSchema status, plan, plan
/// chunk, ConfigMap and the manager's log) for `secret`, a credential the scenario itself put
/// into an artifact or a URL, which the services' password scan would not know.
pub async fn scan_for(run: &Run, what: &str, secret: &str) -> Result<(), String> {
    let (client, ns) = (&run.app.client, &run.app.ns);
    let mut places: Vec<(String, String)> = vec![("the manager's log".into(), run.manager_log())];
    if let Ok(s) = run.app.schemas.get("orders").await {
        places.push((
            "Pod logs, Events and the status of orders".into(),
            everything_said(client, ns, &s).await,
        ));
    }
    let plans: Api<PtahSchemaPlan> = Api::namespaced(client.clone(), ns);
    for p in plans
        .list(&ListParams::default())
        .await
        .expect("list plans")
        .items
    {
        places.push((format!("plan {}", p.name_any()), to_json(&p)));
    }
    let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(client.clone(), ns);
    for c in chunks
        .list(&ListParams::default())
        .await
        .expect("list chunks")
        .items
    {
        places.push((format!("plan chunk {}", c.name_any()), to_json(&c)));
    }
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    for c in cms
        .list(&ListParams::default())
        .await
        .expect("list ConfigMaps")
        .items
    {
        places.push((format!("ConfigMap {}", c.name_any()), to_json(&c)));
    }
    let leaked: Vec<String> = places
        .iter()
        .filter(|(_, text)| text.contains(secret))
        .map(|(place, _)| format!("{what} in {place}"))
        .collect();
    if leaked.is_empty() {
        Ok(())
    } else {
        Err(leaked.join("; "))
    }
}

fn to_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Both scans' verdicts as one: the first leak named, or clean.
pub fn both(a: Result<(), String>, b: Result<(), String>) -> Result<(), String> {
    match (a, b) {
        (Ok(()), Ok(())) => Ok(()),
        (Err(x), Ok(())) | (Ok(()), Err(x)) => Err(x),
        (Err(x), Err(y)) => Err(format!("{x}; {y}")),
    }
}

/// Waits until an Apply Job was dispatched (seen by the scenario's poll: a runner that refuses
/// at once may end before its Pod is ever seen Running), then until `orders` no longer has an
/// Apply in flight. Returns the schema then, and the Apply Pods' logs (the runner's frames) as
/// read while they existed: the manager shortens a settled Job's life, and its Pod goes with it.
pub async fn apply_settled(run: &Run) -> (PtahSchema, String) {
    let pods: Api<Pod> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let selector = format!("{OPERATION_LABEL}={}", Operation::Apply.as_str());
    let mut logs: BTreeMap<String, String> = BTreeMap::new();
    let deadline = Instant::now() + STEP;
    loop {
        for pod in pods
            .list(&ListParams::default().labels(&selector))
            .await
            .expect("list the Apply Pods")
            .items
        {
            if let Ok(log) = pods.logs(&pod.name_any(), &Default::default()).await
                && log.len() > logs.get(&pod.name_any()).map_or(0, String::len)
            {
                logs.insert(pod.name_any(), log);
            }
        }
        let s = run.app.schemas.get("orders").await.expect("get orders");
        let dispatched = !run.scenario.apply_jobs().await.is_empty();
        let settled = s.status.as_ref().is_some_and(|st| {
            st.active_operation
                .as_ref()
                .is_none_or(|op| op.operation_type != SchemaOperationType::Apply)
        });
        if dispatched && settled {
            let mut said = logs.into_values().collect::<Vec<_>>().join("\n");
            said.push_str(&super::delivered::delivered_results(&run.app.client, &run.app.ns).await);
            return (s, said);
        }
        assert!(
            Instant::now() < deadline,
            "no Apply was dispatched and settled\n{}",
            crate::lifecycle::Diagnose::diagnose(&run.manager)
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}
