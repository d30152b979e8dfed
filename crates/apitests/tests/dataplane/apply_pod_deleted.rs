//! Scenario 4 [job-deletion]: the Apply Pod is deleted gracefully while its Apply runs. The
//! outcome is unknown to the manager, so it is recorded `ApplyOutcomeUnknown`, the approval is
//! consumed, a read-only Observe and Plan settle it, and the plan is never replayed: it waits
//! for a new approval.
//!
//! "Mid-Apply" is made certain, not timed: an outside session holds the advisory lock the Apply
//! takes before its first statement, so the Pod is deleted while the Apply's own session waits
//! on the database (seen there), and nothing of the plan has run.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, ResourceExt, api::DeleteParams};
use ptah_api::{conditions::ConditionType, schema::PendingObservationOutcome};
use serde_json::json;

use crate::{
    dataplane::{
        database::{LockHolder, expect_tables},
        setup::{Run, STEP, approval_name},
    },
    lifecycle::app::{Engine, approve, reason},
};

/// The whole scenario: a plan, its deleted Apply, the proof and two quiet cycles.
const BOUND: Duration = Duration::from_secs(480);

async fn apply_pod_deleted(name: &'static str, engine: Engine) {
    // The lock wait outlasts the deletion. Should the Pod be gone before its frame is read, the
    // deadline bounds how long the manager must assume it may still run (deadline + grace).
    let run = Run::start(
        name,
        engine,
        json!({"policy": {"lockTimeout": "60s"}, "execution": {"activeDeadlineSeconds": 75}}),
    )
    .await;
    let first = run.awaiting(None).await;
    let mut holder = LockHolder::take(engine, &run.app.host_url).await;
    let ours = holder.session_id().await;
    approve(&run.app.client, &run.app.ns, &first).await;

    let pod = run.running_apply_pod().await;
    // The Apply's session is on the database and waiting for the lock: mid-Apply.
    let deadline = std::time::Instant::now() + STEP;
    while holder.other_sessions().await == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the Apply never reached the database"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        holder.owner().await,
        Some(ours),
        "the outside session holds the lock"
    );
    let pods: Api<Pod> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    pods.delete(&pod.name_any(), &DeleteParams::default())
        .await
        .expect("delete the Apply Pod gracefully");

    let unknown = run
        .seen("ApplyOutcomeUnknown with a proof owed", |s| {
            s.status.as_ref().is_some_and(|st| {
                st.pending_observation
                    .as_ref()
                    .is_some_and(|p| p.outcome == PendingObservationOutcome::OutcomeUnknown)
            })
        })
        .await;
    assert_eq!(reason(&unknown, ConditionType::Applying), "ApplyOutcomeUnknown");
    assert!(
        run.approval_consumed(&approval_name(&first)).await,
        "the approval is consumed by the dispatch"
    );
    // The proof (Observe + Plan) reads the database while the lock is still held: it is
    // read-only, so it needs no lock, and the deleted Apply cannot have run any statement.
    run.awaiting(None).await;
    // The same plan waits for a new approval; the consumed one dispatches nothing more: two
    // cycles pass without another Apply Job.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let database = expect_tables(engine, &run.app.host_url, &[]).await;
    holder.release().await;
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_apply_pod_deleted_mid_apply_is_proved_never_replayed_postgresql() {
    apply_pod_deleted(
        "e2e_fault_apply_pod_deleted_mid_apply_is_proved_never_replayed_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_apply_pod_deleted_mid_apply_is_proved_never_replayed_mysql() {
    apply_pod_deleted(
        "e2e_fault_apply_pod_deleted_mid_apply_is_proved_never_replayed_mysql",
        Engine::Mariadb,
    )
    .await;
}
