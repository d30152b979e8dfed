//! Scenario 1 [registry outage]: the registry goes down during a cycle. The Pods reach the TLS
//! registry only through its Toxiproxy proxy; once `orders` is InSync the test disables the
//! proxy. The next Resolve fails, once, and is recorded as such; the stored evidence (the
//! resolved source) stays byte-identical and the source's freshness is `Unknown`. Once the
//! registry is back the cycle recovers in order, with zero Applies.

use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use kube::{Api, ResourceExt, api::ListParams};
use ptah_api::{PtahSchema, conditions::Reason, schema::SchemaPhase};
use ptah_dataplane::Operation;
use ptah_faultproxy::Toxiproxy;
use ptah_testservices::proxies;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::json;

use crate::{
    dataplane::{
        database::expect_tables,
        setup::{Run, STEP, Via, pod_address},
    },
    lifecycle::app::{Engine, approve, phase},
};

const BOUND: Duration = Duration::from_secs(600);

fn evidence(s: &PtahSchema) -> String {
    serde_json::to_string(&s.status.as_ref().and_then(|st| st.source.clone())).expect("source JSON")
}

fn says(s: &PtahSchema, reason: Reason) -> bool {
    s.status
        .as_ref()
        .is_some_and(|st| st.conditions.iter().any(|c| c.reason == reason.as_str()))
}

/// The Resolve Jobs of the namespace created at or after `since` (whole seconds, as the API
/// server stamps them).
async fn resolves_since(run: &Run, since: jiff::Timestamp) -> Vec<String> {
    let jobs: Api<Job> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    jobs.list(&ListParams::default().labels(&format!("{OPERATION_LABEL}={}", Operation::Resolve.as_str())))
        .await
        .expect("list the Resolve Jobs")
        .items
        .into_iter()
        .filter(|j| {
            j.creation_timestamp()
                .is_some_and(|t| t.0.as_second() >= since.as_second())
        })
        .map(|j| j.name_any())
        .collect()
}

async fn registry_outage(name: &'static str, engine: Engine) {
    let run = Run::start_via(
        name,
        engine,
        // The failed Resolve is retried after this, and recovery waits for that retry.
        json!({"execution": {"failureRetryInterval": "10s"}}),
        Via {
            registry: Some(pod_address("PTAH_POD_REGISTRY_PROXY")),
            ..Via::default()
        },
    )
    .await;
    let first = run.awaiting(None).await;
    approve(&run.app.client, &run.app.ns, &first).await;
    let synced = run
        .wait("InSync", |s| phase(s) == Some(SchemaPhase::InSync))
        .await;
    let before = evidence(&synced);
    assert!(before.contains("sha256:"), "a resolved source: {before}");

    let toxiproxy = Toxiproxy::require();
    let cut = toxiproxy
        .cut(proxies::REGISTRY)
        .await
        .expect("disable the registry proxy");
    let outage = Instant::now();
    let cut_at = jiff::Timestamp::now();
    let unknown = run
        .wait("the source's freshness Unknown after a failed Resolve", |s| {
            says(s, Reason::SourceFreshnessUnknown) || says(s, Reason::ResolveFailed)
        })
        .await;
    let failed = resolves_since(&run, cut_at).await;
    cut.restore().await.expect("enable the registry proxy");
    eprintln!(
        "{name}: the failed Resolve was recorded {:?} into the outage",
        outage.elapsed()
    );
    assert_eq!(
        evidence(&unknown),
        before,
        "the stored evidence is byte-identical"
    );
    assert_eq!(
        failed.len(),
        1,
        "one failed Resolve, not a loop of Jobs: {failed:?}"
    );

    // Recovery: a fresh Resolve, and InSync again without any Apply.
    let deadline = Instant::now() + STEP;
    let recovered = loop {
        let s = run.app.schemas.get("orders").await.expect("orders");
        let fresh = !says(&s, Reason::SourceFreshnessUnknown) && !says(&s, Reason::ResolveFailed);
        if fresh && phase(&s) == Some(SchemaPhase::InSync) {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "no recovery: {}",
            crate::lifecycle::summary(&s)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    // The recovered source is the same artifact, resolved afresh (its times move on).
    let digest = |s: &PtahSchema| {
        s.status
            .as_ref()
            .and_then(|st| st.source.as_ref())
            .and_then(|src| src.resolved_reference.clone())
    };
    assert_eq!(
        digest(&recovered),
        digest(&synced),
        "the same artifact resolves again"
    );
    let database = expect_tables(engine, &run.app.host_url, &["audit", "items"]).await;
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_registry_outage_through_toxiproxy_keeps_evidence_and_recovers_without_apply_postgresql() {
    registry_outage(
        "e2e_fault_registry_outage_through_toxiproxy_keeps_evidence_and_recovers_without_apply_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_registry_outage_through_toxiproxy_keeps_evidence_and_recovers_without_apply_mysql() {
    registry_outage(
        "e2e_fault_registry_outage_through_toxiproxy_keeps_evidence_and_recovers_without_apply_mysql",
        Engine::Mariadb,
    )
    .await;
}
