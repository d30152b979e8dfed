//! Scenario 6 [manager-restart]: the manager is killed (SIGKILL: no shutdown, no Lease release)
//! while an Apply runs, and started again. Nothing of the Apply changes hands: its Job and Pod
//! (names and uids), the realm Lease (name, uid, holder, transitions, and the epoch the claim
//! persisted) and the database session waiting for the advisory lock are the same before and
//! after. Then the lock is let go and that one Apply finishes: the plan ran once, and the
//! restarted manager settles it from its frame without another dispatch.
//!
//! "Mid-Apply" is made certain as in scenario 4: an outside session holds the advisory lock, so
//! the Apply's own session waits on the server (seen there) across the restart.

use std::time::{Duration, Instant};

use k8s_openapi::api::{batch::v1::Job, coordination::v1::Lease, core::v1::Pod};
use kube::{Api, ResourceExt, api::ListParams};
use mysql_async::prelude::Queryable;
use ptah_api::schema::SchemaPhase;
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::json;

use crate::{
    dataplane::{
        database::{LockHolder, expect_tables},
        setup::{Run, STEP},
    },
    lifecycle::app::{Engine, approve, phase},
};

const BOUND: Duration = Duration::from_secs(480);

/// Everything whose identity must survive the restart.
#[derive(Debug, PartialEq, Eq)]
struct Identities {
    /// The Apply Jobs (name, uid).
    jobs: Vec<(String, String)>,
    /// The Apply Pods (name, uid).
    pods: Vec<(String, String)>,
    /// The realm Leases (name, uid, holder, transitions).
    leases: Vec<(String, String, String, i32)>,
    /// The claim's Lease epoch and Job uid.
    claim: (String, Option<String>),
    /// The advisory lock's owner and the sessions waiting for it.
    lock: (Option<i64>, Vec<i64>),
}

/// The sessions waiting for the Apply's advisory lock, as the server lists them. The executor
/// polls `pg_try_advisory_lock` on PostgreSQL (so no waiter shows in `pg_locks`): its session is
/// the one whose last statement that is. On MariaDB `GET_LOCK` blocks in the server.
async fn lock_waiters(holder: &mut LockHolder) -> Vec<i64> {
    let mut out: Vec<i64> = match holder {
        LockHolder::Postgres(c) => c
            .query(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND query LIKE '%pg_try_advisory_lock%'",
                &[],
            )
            .await
            .expect("read pg_stat_activity")
            .iter()
            .map(|r| i64::from(r.get::<_, i32>(0)))
            .collect(),
        // `GET_LOCK` waits show as the state `User lock` in the process list.
        LockHolder::Mariadb(c) => c
            .query(
                "SELECT id FROM information_schema.PROCESSLIST WHERE db = DATABASE() \
                 AND state = 'User lock' AND info LIKE '%GET_LOCK%'",
            )
            .await
            .expect("read the process list"),
    };
    out.sort_unstable();
    out
}

async fn identities(run: &Run, holder: &mut LockHolder) -> Identities {
    let selector = format!("{OPERATION_LABEL}={}", Operation::Apply.as_str());
    let named = |name: String, uid: Option<String>| (name, uid.unwrap_or_default());
    let jobs: Api<Job> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let jobs = jobs
        .list(&ListParams::default().labels(&selector))
        .await
        .expect("list the Apply Jobs")
        .items
        .into_iter()
        .map(|j| named(j.name_any(), j.uid()))
        .collect();
    let pods: Api<Pod> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let pods = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .expect("list the Apply Pods")
        .items
        .into_iter()
        .map(|p| named(p.name_any(), p.uid()))
        .collect();
    let leases: Api<Lease> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let leases = leases
        .list(&ListParams::default().labels("operator.ptah.run/coordination=database-target"))
        .await
        .expect("list the realm Leases")
        .items
        .into_iter()
        .map(|l| {
            let spec = l.spec.clone().unwrap_or_default();
            (
                l.name_any(),
                l.uid().unwrap_or_default(),
                spec.holder_identity.unwrap_or_default(),
                spec.lease_transitions.unwrap_or_default(),
            )
        })
        .collect();
    let schema = run.app.schemas.get("orders").await.expect("orders");
    let claim = schema
        .status
        .and_then(|s| s.active_operation)
        .expect("the Apply's claim");
    let epoch = serde_json::to_string(&claim.lease_epoch).unwrap_or_default();
    Identities {
        jobs,
        pods,
        leases,
        claim: (epoch, claim.job_uid),
        lock: (holder.owner().await, lock_waiters(holder).await),
    }
}

/// When the realm Lease was last renewed.
async fn renewed(run: &Run) -> Option<jiff::Timestamp> {
    let leases: Api<Lease> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    leases
        .list(&ListParams::default().labels("operator.ptah.run/coordination=database-target"))
        .await
        .expect("list the realm Leases")
        .items
        .into_iter()
        .filter_map(|l| l.spec.and_then(|s| s.renew_time).map(|t| t.0))
        .max()
}

async fn manager_restart(name: &'static str, engine: Engine) {
    // A lock wait and a deadline far longer than the restart: the Apply must outlive it.
    let mut run = Run::start(
        name,
        engine,
        json!({"policy": {"lockTimeout": "150s"}, "execution": {"activeDeadlineSeconds": 200}}),
    )
    .await;
    let first = run.awaiting(None).await;
    let mut holder = LockHolder::take(engine, &run.app.host_url).await;
    let ours = holder.session_id().await;
    approve(&run.app.client, &run.app.ns, &first).await;
    run.running_apply_pod().await;
    let deadline = Instant::now() + STEP;
    while lock_waiters(&mut holder).await.is_empty() {
        assert!(Instant::now() < deadline, "the Apply never waited on the lock");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let before = identities(&run, &mut holder).await;
    assert_eq!(before.lock.0, Some(ours), "the outside session holds the lock");
    assert_eq!(before.lock.1.len(), 1, "one Apply session waits: {before:?}");
    assert_eq!(before.jobs.len(), 1, "one Apply Job: {before:?}");

    run.manager.restart();
    let restarted = jiff::Timestamp::now();
    // The restarted manager has taken the schema up again once it renews the realm Lease.
    let deadline = Instant::now() + STEP;
    while renewed(&run).await.is_none_or(|t| t <= restarted) {
        assert!(
            Instant::now() < deadline,
            "the restarted manager never renewed the realm Lease"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // Two more of its cycles, in which a manager that lost track would dispatch again.
    tokio::time::sleep(Duration::from_secs(15)).await;
    let after = identities(&run, &mut holder).await;
    assert_eq!(before, after, "the restart changed an identity");

    holder.release().await;
    run.wait("InSync after the restart", |s| {
        phase(s) == Some(SchemaPhase::InSync)
    })
    .await;
    let database = expect_tables(engine, &run.app.host_url, &["audit", "items"]).await;
    run.conclude(&[1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_manager_restart_mid_apply_keeps_job_pod_lease_and_lock_identities_postgresql() {
    manager_restart(
        "e2e_dataplane_manager_restart_mid_apply_keeps_job_pod_lease_and_lock_identities_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_manager_restart_mid_apply_keeps_job_pod_lease_and_lock_identities_mysql() {
    manager_restart(
        "e2e_dataplane_manager_restart_mid_apply_keeps_job_pod_lease_and_lock_identities_mysql",
        Engine::Mariadb,
    )
    .await;
}
