//! Scenario 11: a PtahSchema whose plan waits for an approval is deleted. Nothing of the plan
//! runs (no Apply Job, no table), and the finalizer goes: the object is gone, not left
//! terminating.

use std::time::{Duration, Instant};

use kube::api::DeleteParams;
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::both,
        database::expect_tables,
        setup::{Run, STEP},
    },
    lifecycle::app::Engine,
};

const BOUND: Duration = Duration::from_secs(300);

async fn unapproved_deleted(name: &'static str, engine: Engine) {
    let run = Run::start(name, engine, json!({})).await;
    run.awaiting(None).await;
    // The Pod logs and Events go with the schema's Jobs: scan them while they exist.
    let before = run
        .scenario
        .leak_scan(&run.app.services, &run.manager_log())
        .await;
    run.app
        .schemas
        .delete("orders", &DeleteParams::default())
        .await
        .expect("delete orders");
    let deadline = Instant::now() + STEP;
    loop {
        match run.app.schemas.get_opt("orders").await.expect("get orders") {
            None => break,
            Some(s) => assert!(
                Instant::now() < deadline,
                "orders still exists (finalizers {:?})\n{}",
                s.metadata.finalizers,
                crate::lifecycle::Diagnose::diagnose(&run.manager)
            ),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Quiet for two intervals: nothing dispatched after the deletion either.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let database = expect_tables(engine, &run.app.host_url, &[]).await;
    let after = run
        .scenario
        .leak_scan(&run.app.services, &run.manager_log())
        .await;
    run.end()
        .await
        .finish(&[], database, both(before, after), BOUND)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_unapproved_schema_deleted_runs_nothing_and_drops_its_finalizer_postgresql() {
    unapproved_deleted(
        "e2e_dataplane_unapproved_schema_deleted_runs_nothing_and_drops_its_finalizer_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_unapproved_schema_deleted_runs_nothing_and_drops_its_finalizer_mysql() {
    unapproved_deleted(
        "e2e_dataplane_unapproved_schema_deleted_runs_nothing_and_drops_its_finalizer_mysql",
        Engine::Mariadb,
    )
    .await;
}
