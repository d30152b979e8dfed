//! Scenario 7: an outside session holds the advisory lock when an approved Apply starts. The
//! Apply waits within `lockTimeout`, then fails typed (the executor's `lock_busy`) with nothing
//! applied, and is not dispatched again: the lock's owner is the outside session throughout, as
//! the server itself reports it (PostgreSQL's `pg_locks`, MariaDB's `IS_USED_LOCK`).

use std::time::Duration;

use serde_json::json;

use crate::{
    dataplane::{
        by_hand::said,
        database::{LockHolder, expect_tables},
        setup::{Run, approval_name},
    },
    lifecycle::app::{Engine, approve},
};

const BOUND: Duration = Duration::from_secs(420);
/// The scenario's `policy.lockTimeout`.
const LOCK_TIMEOUT: Duration = Duration::from_secs(5);

async fn advisory_lock_held(name: &'static str, engine: Engine) {
    let run = Run::start(
        name,
        engine,
        json!({"policy": {"lockTimeout": format!("{}s", LOCK_TIMEOUT.as_secs())},
               "execution": {"activeDeadlineSeconds": 40}}),
    )
    .await;
    let waiting = run.awaiting(None).await;
    let mut holder = LockHolder::take(engine, &run.app.host_url).await;
    let ours = holder.session_id().await;
    approve(&run.app.client, &run.app.ns, &waiting).await;
    run.running_apply_pod().await;

    // The Apply fails on the lock; any failed Apply is settled by a proof, never replayed.
    let failed = run
        .seen("the Apply failed with a proof owed", |s| {
            s.status
                .as_ref()
                .is_some_and(|st| st.active_operation.is_none() && st.pending_observation.is_some())
        })
        .await;
    // Typed: the executor's `lock_busy`, as the runner's result frame (the Pod's log) carries it.
    let frames = run.apply_pod_logs().await;
    assert!(
        frames.contains("\"childCode\":\"lock_busy\""),
        "the Apply failed as lock_busy: {}\nstatus: {}",
        run.apply_pod_summaries().await,
        said(&failed)
    );
    assert_eq!(
        holder.owner().await,
        Some(ours),
        "the outside session owned the lock throughout"
    );
    // The proof finds nothing applied and offers the plan again, for a new approval: the consumed
    // one is never dispatched again.
    run.awaiting(None).await;
    assert!(
        run.approval_consumed(&approval_name(&waiting)).await,
        "the approval is consumed by the one dispatch"
    );
    let database = expect_tables(engine, &run.app.host_url, &[]).await;
    holder.release().await;
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_advisory_lock_held_outside_fails_the_apply_typed_with_nothing_applied_postgresql() {
    advisory_lock_held(
        "e2e_fault_advisory_lock_held_outside_fails_the_apply_typed_with_nothing_applied_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_advisory_lock_held_outside_fails_the_apply_typed_with_nothing_applied_mysql() {
    advisory_lock_held(
        "e2e_fault_advisory_lock_held_outside_fails_the_apply_typed_with_nothing_applied_mysql",
        Engine::Mariadb,
    )
    .await;
}
