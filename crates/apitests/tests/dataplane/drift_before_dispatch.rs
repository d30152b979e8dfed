//! Scenario 10 [mysql-drift-before-dispatch, on both engines]: after the plan is approved and
//! before its Apply is dispatched, someone creates one of the plan's tables by hand. The Apply's
//! stale-plan check (the live schema's fingerprint against the plan's `from_fingerprint`, read
//! under the advisory lock before the first statement) runs none of the plan; a new plan, for
//! what is still missing, appears and waits for its own approval. The approved one is never
//! dispatched again.
//!
//! "Before dispatch" is made certain: the manager is stopped while the approval is created and
//! the table made.

use std::time::Duration;

use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{apply_settled, said},
        database::{columns, expect_tables},
        setup::{Run, approval_name, plan_uid},
    },
    lifecycle::app::{Engine, approve},
};

const BOUND: Duration = Duration::from_secs(300);

async fn drift_before_dispatch(name: &'static str, engine: Engine) {
    // A short deadline: the proof of a failed Apply waits until its Pod can no longer run.
    let mut run = Run::start(name, engine, json!({"execution": {"activeDeadlineSeconds": 60}})).await;
    let waiting = run.awaiting(None).await;
    let first = waiting
        .status
        .as_ref()
        .and_then(|st| st.plan.clone())
        .expect("a plan");

    run.manager.kill();
    approve(&run.app.client, &run.app.ns, &waiting).await;
    // `audit` exactly as the artifact declares it: the desired state moves no further, only the
    // database under the approved plan does.
    engine
        .exec(
            &run.app.host_url,
            "CREATE TABLE audit (id bigint NOT NULL PRIMARY KEY)",
        )
        .await;
    run.manager.restart();

    let (refused_or_failed, frames) = apply_settled(&run).await;
    // The executor's own code. The frame still says `mutationStarted` (ptah exits 1 on a stale
    // plan, and the runner trusts only exit 2 to mean that nothing ran), so the database decides:
    // below, and in the manager's proof.
    assert!(
        frames.contains("\"childCode\":\"stale_plan\""),
        "the Apply refused its plan as stale: {frames}\nstatus: {}",
        said(&refused_or_failed)
    );
    assert!(
        run.approval_consumed(&approval_name(&waiting)).await,
        "the approval is consumed by the one dispatch"
    );
    let next = run.awaiting(Some(&plan_uid(&waiting))).await;
    let plan = next
        .status
        .as_ref()
        .and_then(|st| st.plan.clone())
        .expect("a plan");
    assert_ne!(plan.name, first.name, "a new plan, of other content");
    assert!(
        plan.statement_count < first.statement_count,
        "the new plan creates only `items`: {} statements, the first {}",
        plan.statement_count,
        first.statement_count
    );
    // Two intervals: the consumed approval dispatches nothing more, the new plan waits.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let database = match expect_tables(engine, &run.app.host_url, &["audit"]).await {
        Ok(()) if columns(engine, &run.app.host_url, "audit").await == ["id"] => Ok(()),
        Ok(()) => Err("audit is not the table made by hand".to_owned()),
        e => e,
    };
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_drift_after_approval_is_caught_by_the_stale_plan_check_postgresql() {
    drift_before_dispatch(
        "e2e_dataplane_drift_after_approval_is_caught_by_the_stale_plan_check_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_drift_after_approval_is_caught_by_the_stale_plan_check_mysql() {
    drift_before_dispatch(
        "e2e_dataplane_drift_after_approval_is_caught_by_the_stale_plan_check_mysql",
        Engine::Mariadb,
    )
    .await;
}
