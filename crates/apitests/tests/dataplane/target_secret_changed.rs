//! Scenario 9 [approval-target-secret-change]: after the plan is approved and before its Apply is
//! dispatched, the URL Secret is pointed at another database. The Apply Pod's runner refuses on
//! the target identity (`target_identity_mismatch`) before its child starts, so no statement of
//! the plan reaches either database; the Apply is dispatched once and never again.
//!
//! "Before dispatch" is made certain, not timed: the manager is stopped while the approval is
//! created and the Secret edited, and started again after both.

use std::time::Duration;

use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{apply_settled, db_url, said, set_db_url},
        database::expect_tables,
        setup::{Run, approval_name},
    },
    lifecycle::app::{Engine, approve},
};

const BOUND: Duration = Duration::from_secs(300);

async fn target_secret_changed(name: &'static str, engine: Engine) {
    let mut run = Run::start(name, engine, json!({})).await;
    let waiting = run.awaiting(None).await;
    // The other database: same server, same user, another name (so another target identity).
    let other = ptah_testservices::unique_name("e2e").replace('-', "_");
    let (other_host, other_pod) = engine.fresh_database(&run.app.services, &other).await;
    let query = db_url(&run)
        .await
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();

    run.manager.kill();
    approve(&run.app.client, &run.app.ns, &waiting).await;
    set_db_url(&run, &format!("{other_pod}{query}")).await;
    run.manager.restart();

    let (refused_or_failed, frames) = apply_settled(&run).await;
    assert!(
        frames.contains("\"code\":\"target_identity_mismatch\"") && frames.contains("\"childExitCode\":-1"),
        "the runner refused on the target identity before its child started: {frames}\nstatus: {}",
        said(&refused_or_failed)
    );
    assert!(
        run.approval_consumed(&approval_name(&waiting)).await,
        "the approval is consumed by the one dispatch"
    );
    // Two intervals with no second Apply on either database.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let database = match (
        expect_tables(engine, &run.app.host_url, &[]).await,
        expect_tables(engine, &other_host, &[]).await,
    ) {
        (Ok(()), Ok(())) => Ok(()),
        (planned, other) => Err(format!(
            "the planned database: {planned:?}; the other database: {other:?}"
        )),
    };
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_target_secret_changed_after_approval_is_refused_on_identity_postgresql() {
    target_secret_changed(
        "e2e_dataplane_target_secret_changed_after_approval_is_refused_on_identity_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_target_secret_changed_after_approval_is_refused_on_identity_mysql() {
    target_secret_changed(
        "e2e_dataplane_target_secret_changed_after_approval_is_refused_on_identity_mysql",
        Engine::Mariadb,
    )
    .await;
}
