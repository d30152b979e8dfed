//! Scenario 3 [hung-schema-result-read], PtahMigration: the isolation node is cut off from the
//! API server while a PtahMigration's Apply Pod, placed there, runs. An outside session holds
//! the executor's advisory lock (the migrations take the same one) until the cut, so the Apply
//! finishes unseen; meanwhile a PtahSchema `other`, on the other node and a database of its
//! own, converges (its time measured). The
//! cut outlasts the execution deadline, its grace and the Job's `activeDeadlineSeconds`, and the
//! node stays lost: its Pod is force-deleted (`dataplane::lost_pods`) with its frame, the run's
//! outcome is unknown, and when the node returns the manager reads the migration history
//! (read-only), finds both versions applied and says InSync. With durable result delivery (the
//! default) the runner delivered to the manager's receiver, which the cut does not reach: the run
//! is read from the records as applied although its Pod is gone. One Apply Job for the migration,
//! never replayed.
//!
//! The manager of the data-plane harness runs the PtahMigration controller too; the migration
//! reuses `orders`' namespace, database Secret, CAs and pull secret (`orders` itself suspended),
//! and the migration suites' artifact helper (`migrations::push_migrations`).

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::{Api, ResourceExt, api::ListParams};
use ptah_api::{
    PtahMigration, PtahMigrationApproval, PtahMigrationPlan,
    migration::{MigrationPhase, RunOutcome},
    schema::SchemaPhase,
};
use ptah_apitests::e2e::create;
use ptah_dataplane::Operation;
use ptah_testenv::cluster::faults::IsolationNode;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::json;

use crate::{
    dataplane::{
        database::{LockHolder, tables},
        lost_pods,
        setup::{Run, STEP},
    },
    lifecycle::{
        app::{Engine, approve, phase},
        wait_for,
    },
    migrations::{MIGRATIONS_TYPE, push_migrations, v1_files},
};

const BOUND: Duration = Duration::from_secs(720);
/// The migration's execution deadline and lock timeout.
const DEADLINE: u64 = 60;
const NAME: &str = "billing";

/// Waits for `billing` to satisfy `pred`.
async fn wait(api: &Api<PtahMigration>, what: &str, pred: impl Fn(&PtahMigration) -> bool) -> PtahMigration {
    let until = Instant::now() + STEP;
    loop {
        let m = api.get(NAME).await.expect("the migration");
        if pred(&m) {
            return m;
        }
        assert!(
            Instant::now() < until,
            "timed out waiting for {what}: {}",
            serde_json::to_string(&m.status).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn cut_off_migration(name: &'static str, engine: Engine) {
    let node = IsolationNode::load(&ptah_apitests::workspace_root().join("target/cluster"))
        .expect("the isolation node: run `cargo xtask cluster up --nodes 2`");
    // `orders` stays suspended: the migration uses its database, whose tables `orders` would
    // otherwise plan to drop. The other node's converging schema has a database of its own.
    let run = Run::start(name, engine, json!({"suspend": true})).await;
    run.app.sibling_schema("other", |spec| spec.suspend = false).await;
    let (client, ns) = (run.app.client.clone(), run.app.ns.clone());
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    create(
        &cms,
        json!({"metadata": {"name": "migration-policy"}, "immutable": true, "data": {
            "policy.yaml": format!("version: 1\nartifact_types: [{MIGRATIONS_TYPE}]\n")}}),
    )
    .await;
    let repository = format!("e2e/{ns}-migrations");
    push_migrations(&run.app.services, &repository, "v1", &v1_files());
    // The target, transport and execution of `orders`, placed on the isolation node.
    let orders = serde_json::to_value(run.app.schemas.get("orders").await.expect("orders").spec)
        .expect("the spec as JSON");
    let mut target = orders["target"].clone();
    target["coordinationKey"] = json!(NAME);
    let mut execution = orders["execution"].clone();
    execution["activeDeadlineSeconds"] = json!(DEADLINE);
    execution["nodeSelector"] = json!({"kubernetes.io/hostname": node.node_name});
    execution["tolerations"] = json!([{"key": "operator.ptah.run/isolation", "operator": "Exists",
                                       "effect": "NoSchedule"}]);
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &ns);
    create(
        &migrations,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
            "metadata": {"name": NAME},
            "spec": {
                "target": target,
                "artifact": {
                    "ociRef": format!("oci://{}/{repository}:v1", run.app.registry),
                    "registryAuthFrom": {"name": "registry"},
                    "verificationPolicyFrom": {"name": "migration-policy", "key": "policy.yaml"},
                    "transport": orders["desired"]["transport"].clone()
                },
                "interval": "10s",
                "policy": {"apply": "OnApproval", "lockTimeout": format!("{DEADLINE}s")},
                "execution": execution
            }
        }),
    )
    .await;
    let waiting = wait(&migrations, "a migration plan awaiting approval", |m| {
        m.status
            .as_ref()
            .is_some_and(|st| st.phase == Some(MigrationPhase::AwaitingApproval) && st.plan.is_some())
    })
    .await;
    let plan_ref = waiting
        .status
        .as_ref()
        .and_then(|s| s.plan.clone())
        .expect("a plan");
    let plan = Api::<PtahMigrationPlan>::namespaced(client.clone(), &ns)
        .get(&plan_ref.name)
        .await
        .expect("the PtahMigrationPlan");
    let mut holder = LockHolder::take(engine, &run.app.host_url).await;
    create(
        &Api::<PtahMigrationApproval>::namespaced(client.clone(), &ns),
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationApproval",
            "metadata": {"name": format!("approve-{}", plan.name_any())},
            "spec": {
                "migrationRef": {"name": NAME, "uid": waiting.uid().expect("uid")},
                "planRef": {"name": plan.name_any(), "uid": plan.uid().expect("plan uid")},
                "planFingerprint": plan.spec.fingerprint,
            }
        }),
    )
    .await;
    // The migration's Apply Pod runs on the isolation node and waits on the lock.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let selector = format!("{OPERATION_LABEL}={}", Operation::MigrationApply.as_str());
    let until = Instant::now() + STEP;
    let pod = loop {
        let running = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .expect("list the migration's Apply Pods")
            .items
            .into_iter()
            .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"));
        if let Some(pod) = running {
            break pod;
        }
        assert!(Instant::now() < until, "the migration's Apply Pod never ran");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(
        pod.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some(node.node_name.as_str()),
        "placed on the isolation node"
    );
    let until = Instant::now() + STEP;
    while holder.other_sessions().await == 0 {
        assert!(Instant::now() < until, "the Apply never reached the database");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // How the manager recorded the run: every outcome its status said, seen by a poll.
    let outcomes: Arc<Mutex<Vec<String>>> = Arc::default();
    let (api, seen) = (migrations.clone(), outcomes.clone());
    let poll = tokio::spawn(async move {
        loop {
            if let Ok(m) = api.get(NAME).await
                && let Some(st) = m.status
            {
                let said = [
                    st.unresolved_run.map(|u| format!("unresolved {:?}", u.outcome)),
                    st.last_run.map(|r| format!("last run {:?}", r.outcome)),
                ];
                let mut seen = seen.lock().expect("outcomes");
                for s in said.into_iter().flatten() {
                    if !seen.contains(&s) {
                        seen.push(s);
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    let fault = node.cut_api_server().expect("cut the node off the API server");
    let cut_at = Instant::now();
    // The Apply finishes on the database, unseen by the manager (first: MariaDB's lock is
    // server-wide, and `orders` would wait on it too).
    holder.release().await;
    let until = Instant::now() + STEP;
    while !tables(engine, &run.app.host_url)
        .await
        .iter()
        .any(|t| t == "items")
    {
        assert!(Instant::now() < until, "the Apply never finished during the cut");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The other node keeps converging: `other` is approved and applied during the cut.
    let other = wait_for(
        &run.app.schemas,
        "other",
        "a plan for other",
        STEP,
        &run.manager,
        |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval)
                && s.status.as_ref().is_some_and(|st| st.plan.is_some())
        },
    )
    .await;
    approve(&client, &ns, &other).await;
    wait_for(
        &run.app.schemas,
        "other",
        "other InSync",
        STEP,
        &run.manager,
        |s| phase(s) == Some(SchemaPhase::InSync),
    )
    .await;
    let converged = cut_at.elapsed().as_secs_f64();
    eprintln!("{name}: the other node's schema converged in {converged:.1} s during the cut");
    // Until past the execution deadline, its grace and the Job's `activeDeadlineSeconds` (10 s
    // more, counted from the Job's start, a few seconds after the claim's).
    let claim = migrations
        .get(NAME)
        .await
        .expect("billing")
        .status
        .and_then(|s| s.active_operation)
        .expect("the Apply's claim");
    let end = claim.execution_not_after.expect("an execution deadline").0;
    // A migration claim records no grace: the controller's `TERMINATION_GRACE_SECONDS`, 30 s.
    let left = end.duration_since(jiff::Timestamp::now()).as_secs_f64() + 30.0 + 25.0;
    tokio::time::sleep(Duration::from_secs_f64(left.max(0.0))).await;
    // The node stays lost: its Pod is force-deleted. On the log path the manager, with no Pod
    // left to read, records the run as unknown before the node returns; durably, the runner
    // delivered its result to the manager's receiver (the cut reaches the API server only), and
    // the run is read from the records although its Pod is gone.
    lost_pods::force_delete(&client, &ns, Operation::MigrationApply).await;
    let recorded = if run.durable {
        "last run Applied"
    } else {
        "unresolved Unknown"
    };
    let until = Instant::now() + STEP;
    while !outcomes.lock().expect("outcomes").iter().any(|o| o == recorded) {
        assert!(
            Instant::now() < until,
            "the run was not recorded as {recorded} once the Pod was gone"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    fault.undo().expect("the node returns");

    let settled = wait(&migrations, "billing settled after the node returned", |m| {
        m.status.as_ref().is_some_and(|st| {
            st.active_operation.is_none()
                && st.unresolved_run.is_none()
                && st.phase == Some(MigrationPhase::InSync)
        })
    })
    .await;
    poll.abort();
    let outcomes = outcomes.lock().expect("outcomes").clone();
    let st = settled.status.expect("a status");
    eprintln!(
        "{name}: the run recorded as {outcomes:?}; resolved {:?}",
        st.resolved_run
    );
    if run.durable {
        // The delivered result was read: never unknown, and no proof had to resolve it.
        assert!(
            !outcomes.iter().any(|o| o == "unresolved Unknown"),
            "the delivered run was not recorded as unknown: {outcomes:?}"
        );
        assert_eq!(st.last_run.as_ref().map(|r| r.outcome), Some(RunOutcome::Applied));
    } else {
        // No frame was left: the run's outcome was unknown, and the history reading resolved it.
        assert!(
            outcomes.iter().any(|o| o == "unresolved Unknown"),
            "the run was recorded as unknown, for a proof: {outcomes:?}"
        );
        assert!(st.resolved_run.is_some(), "the proof resolved the run");
        assert_ne!(
            st.last_run.as_ref().map(|r| r.outcome),
            Some(RunOutcome::Applied),
            "no frame was read"
        );
    }
    let history = st.history.expect("the migration history");
    let have = tables(engine, &run.app.host_url).await;
    let database =
        if history.applied_count == 2 && history.pending_count == 0 && have.iter().any(|t| t == "items") {
            Ok(())
        } else {
            Err(format!(
                "history {} applied, {} pending; tables {have:?}",
                history.applied_count, history.pending_count
            ))
        };
    run.conclude(&[1, 1], database, BOUND).await;
    crate::dataplane::scenario::delete_namespace(&client, &ns).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_node_cut_off_from_the_api_server_mid_migration_apply_settles_without_replay_postgresql()
 {
    cut_off_migration(
        "e2e_dataplane_node_cut_off_from_the_api_server_mid_migration_apply_settles_without_replay_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_node_cut_off_from_the_api_server_mid_migration_apply_settles_without_replay_mysql() {
    cut_off_migration(
        "e2e_fault_node_cut_off_from_the_api_server_mid_migration_apply_settles_without_replay_mysql",
        Engine::Mariadb,
    )
    .await;
}
