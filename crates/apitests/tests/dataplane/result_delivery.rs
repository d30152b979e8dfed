//! Durable result delivery (issue 36) on the real cluster, whatever the run's default path: a
//! Plan's SQL and its Apply's result reach the manager's receiver and its `PtahResultRecord`s,
//! and no Pod log, Event or status of the namespace holds a statement of the plan. A Plan Pod
//! removed as soon as it has delivered still settles its operation: the result is read from the
//! records, never from the Pod.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, ListParams},
};
use ptah_api::{PtahResultRecord, PtahSchema, resultrecord::ResultRecordType, schema::SchemaPhase};
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::json;

use crate::{
    dataplane::{
        database::expect_tables,
        delivered::delivered_results,
        setup::{Run, STEP, Via},
    },
    lifecycle::{
        app::{Engine, approve, phase},
        everything_said,
    },
};

/// The whole scenario: a plan, its approval, the Apply and its proof.
const BOUND: Duration = Duration::from_secs(480);

/// A statement every plan of the fixture holds; no log may show it.
const PLAN_SQL: &str = "CREATE TABLE";

/// Deletes each Plan Pod of the namespace (at once, no grace) as soon as its runner has exited,
/// that is after it delivered, until `until` holds. Returns how many it deleted.
async fn delete_plan_pods_once_exited(run: &Run, until: impl Fn(&PtahSchema) -> bool) -> usize {
    let pods: Api<Pod> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let selector = format!("{OPERATION_LABEL}={}", Operation::Plan.as_str());
    let mut deleted = 0;
    let deadline = Instant::now() + STEP;
    loop {
        for pod in pods
            .list(&ListParams::default().labels(&selector))
            .await
            .expect("list the Plan Pods")
            .items
        {
            let exited = pod
                .status
                .as_ref()
                .and_then(|s| s.container_statuses.as_ref())
                .is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c.state.as_ref().is_some_and(|st| st.terminated.is_some()))
                });
            if exited && pod.metadata.deletion_timestamp.is_none() {
                let gone = pods
                    .delete(&pod.name_any(), &DeleteParams::default().grace_period(0))
                    .await;
                if gone.is_ok() {
                    deleted += 1;
                }
            }
        }
        let s = run.app.schemas.get("orders").await.expect("orders");
        if until(&s) {
            return deleted;
        }
        assert!(
            Instant::now() < deadline,
            "the plan never arrived\n{}",
            crate::lifecycle::Diagnose::diagnose(&run.manager)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn complete_records(run: &Run) -> usize {
    let records: Api<PtahResultRecord> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    records
        .list(&ListParams::default())
        .await
        .expect("list the result records")
        .items
        .iter()
        .filter(|r| r.spec.record_type == ResultRecordType::Complete)
        .count()
}

async fn results_are_delivered_durably(name: &'static str, engine: Engine) {
    let run = Run::start_via(
        name,
        engine,
        json!({}),
        Via {
            durable: true,
            ..Via::default()
        },
    )
    .await;
    let awaiting = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::AwaitingApproval)
            && s.status
                .as_ref()
                .is_some_and(|st| st.plan.is_some() && st.pending_observation.is_none())
    };
    let deleted = delete_plan_pods_once_exited(&run, awaiting).await;
    assert!(deleted >= 1, "a Plan Pod was deleted as soon as it had delivered");
    let first = run.wait("a plan awaiting approval", awaiting).await;

    approve(&run.app.client, &run.app.ns, &first).await;
    let synced = run
        .wait("in sync after the Apply and its proof", |s| {
            phase(s) == Some(SchemaPhase::InSync)
        })
        .await;

    let delivered = delivered_results(&run.app.client, &run.app.ns).await;
    assert!(
        delivered.contains(PLAN_SQL),
        "the Plan's SQL arrived in the records"
    );
    assert!(
        complete_records(&run).await >= 3,
        "Resolve, Plan and Apply (at least) delivered durably"
    );
    let said = everything_said(&run.app.client, &run.app.ns, &synced).await;
    assert!(
        !said.to_uppercase().contains(PLAN_SQL),
        "no Pod log, Event or status shows the plan's SQL"
    );
    assert!(
        !said.contains("\"childExitCode\""),
        "no Pod log holds a result frame"
    );
    let database = expect_tables(engine, &run.app.host_url, &["audit", "items"]).await;
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_plan_pod_deleted_once_delivered_settles_from_records_and_nothing_is_logged_postgresql() {
    results_are_delivered_durably(
        "e2e_fault_plan_pod_deleted_once_delivered_settles_from_records_and_nothing_is_logged_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_plan_pod_deleted_once_delivered_settles_from_records_and_nothing_is_logged_mysql() {
    results_are_delivered_durably(
        "e2e_fault_plan_pod_deleted_once_delivered_settles_from_records_and_nothing_is_logged_mysql",
        Engine::Mariadb,
    )
    .await;
}
