//! Scenario 20 [pod-metadata-admission] on a live release: bounded `spec.execution.podMetadata`
//! (labels and annotations the operation Pods carry) is admitted by the chart's pod-intent
//! webhook, since the Job template says the same; the Plan runs. Then a third party's mutating
//! webhook (`dataplane::injector`) adds an environment variable to the Apply Pod: the pod-intent
//! webhook refuses the changed Pod (the chart's operation-Pod admission policy would refuse a
//! variable outside `PTAH_*` first, so the injected one is `PTAH_E2E_INJECTED`), no Apply Pod ever
//! runs, nothing is applied, and the operation ends typed: `OutcomeUnknown`, settled by a
//! read-only proof that offers the plan again, the approval spent by its one dispatch.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use kube::{Api, ResourceExt, api::ListParams};
use ptah_api::{conditions::ConditionType, schema::SchemaPhase};
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::said,
        database::expect_tables,
        injector::Injector,
        released::{Released, approval_condition},
        setup::approval_name,
    },
    lifecycle::{
        Diagnose,
        app::{Engine, approve, phase, reason},
        everything_said,
    },
};

const BOUND: Duration = Duration::from_secs(600);

async fn pod_metadata(name: &'static str, engine: Engine) {
    let metadata = json!({"labels": {"team": "shop"}, "annotations": {"example.com/owner": "orders-team"}});
    let r = Released::install(
        name,
        engine,
        &[],
        // A short deadline: an Apply whose Pod is never admitted ends at it.
        json!({"execution": {"podMetadata": metadata, "activeDeadlineSeconds": 60}}),
    )
    .await;
    // The Plan Pods carried the metadata and were admitted: the plan is there.
    let waiting = r
        .wait("a plan awaiting approval", |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval)
                && s.status
                    .as_ref()
                    .is_some_and(|st| st.pending_observation.is_none() && st.plan.is_some())
        })
        .await;
    let jobs: Api<Job> = Api::namespaced(r.app.client.clone(), &r.app.ns);
    let templated = jobs
        .list(&ListParams::default())
        .await
        .expect("list the Jobs")
        .items
        .iter()
        .any(|j| {
            j.spec
                .as_ref()
                .and_then(|s| s.template.metadata.as_ref())
                .and_then(|m| m.labels.as_ref())
                .is_some_and(|l| l.get("team").map(String::as_str) == Some("shop"))
        });
    assert!(
        templated,
        "the operation Jobs' Pods carry podMetadata\n{}",
        r.manager.diagnose()
    );

    let injector = Injector::start(&r.app.client, &r.app.ns, Operation::Apply.as_str()).await;
    approve(&r.app.client, &r.app.ns, &waiting).await;
    // The Apply Job is created; its Pod, changed by the injector, is refused by pod-intent.
    let dispatched = std::time::Instant::now() + crate::dataplane::setup::STEP;
    while r.scenario.apply_jobs().await.is_empty() {
        assert!(
            std::time::Instant::now() < dispatched,
            "no Apply Job was created\n{}",
            r.manager.diagnose()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let failed = r
        .wait("the Apply ended", |s| {
            s.status.as_ref().is_some_and(|st| st.active_operation.is_none())
        })
        .await;
    let story = everything_said(&r.app.client, &r.app.ns, &failed).await;
    drop(injector);
    let refused =
        story.contains("validate-operation-pods") || story.contains("differs from the Job template");
    assert!(
        refused,
        "the pod-intent webhook refused the injected Pod\nstatus: {}\n{story}",
        said(&failed)
    );
    let selector = format!("{OPERATION_LABEL}={}", Operation::Apply.as_str());
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(r.app.client.clone(), &r.app.ns);
    let apply_pods = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .expect("list the Apply Pods")
        .items;
    assert!(
        apply_pods.is_empty(),
        "no Apply Pod was ever admitted: {:?}",
        apply_pods.iter().map(|p| p.name_any()).collect::<Vec<_>>()
    );
    let consumed = approval_condition(&r.app.client, &r.app.ns, &approval_name(&waiting), "Consumed").await;
    assert!(
        consumed.as_ref().is_some_and(|(status, _, _)| status == "True"),
        "the approval was spent by the one dispatch: {consumed:?}"
    );
    // Typed: the Job never ran a Pod, yet the manager does not guess; the outcome is
    // `OutcomeUnknown` and a read-only proof decides, then offers the plan again. The proof may
    // already have run when this is read (the Job's deadline comes after the runner's window and
    // grace, so nothing holds the proof back): the Applying condition keeps the verdict.
    assert_eq!(
        reason(&failed, ConditionType::Applying),
        "ApplyOutcomeUnknown",
        "the Apply ends typed, with a proof owed\nstatus: {}",
        said(&failed)
    );
    let owed = failed
        .status
        .as_ref()
        .and_then(|st| st.pending_observation.as_ref())
        .map(|p| serde_json::to_value(p).unwrap_or_default()["outcome"].clone());
    assert!(
        owed.is_none() || owed == Some(json!("OutcomeUnknown")),
        "a proof owed is for an unknown outcome: {owed:?}"
    );
    r.wait("the proof offered the plan again", |s| {
        phase(s) == Some(SchemaPhase::AwaitingApproval)
            && s.status
                .as_ref()
                .is_some_and(|st| st.pending_observation.is_none() && st.plan.is_some())
    })
    .await;
    let database = expect_tables(engine, &r.app.host_url, &[]).await;
    let leak = r
        .scenario
        .leak_scan(&r.app.services, &r.manager_log().await)
        .await;
    let (scenario, cleanup) = r.end();
    scenario.finish(&[1], database, leak, BOUND).await;
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_pod_metadata_is_admitted_and_a_mutated_operation_pod_is_refused_postgresql() {
    pod_metadata(
        "e2e_dataplane_pod_metadata_is_admitted_and_a_mutated_operation_pod_is_refused_postgresql",
        Engine::Postgres,
    )
    .await;
}
