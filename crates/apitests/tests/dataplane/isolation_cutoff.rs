//! Scenario 3 [hung-schema-result-read], PtahSchema, the deadline passing while the node is
//! away: the isolation node is cut off from the API server (`ptah_testenv::cluster::faults`,
//! nftables drops inside its namespace) while the Apply Pod placed there
//! (`spec.execution.nodeSelector`, `tolerations`) runs, so its status and log cannot reach the
//! manager. The outside lock that kept the Apply waiting is let go during the cut, so the Apply
//! finishes unseen; meanwhile a second PtahSchema, on the other node, converges (its time
//! measured), and the cut outlasts the execution deadline and its grace: the manager keeps the claim
//! and dispatches nothing. The node is declared lost, so its Pod is force-deleted
//! (`dataplane::lost_pods`) and no frame is left: when the node returns the manager owes a
//! proof, reads the database (read-only), finds the plan applied and says InSync. With durable
//! result delivery (the default) the runner delivered to the manager's receiver, which the cut
//! does not reach, so the Apply's end is read from the records although its Pod is gone. One
//! Apply Job per plan, never replayed.
//!
//! The node may also come back as soon as the Apply has finished on the database, long before
//! the deadline, once the Node is NotReady (`…_returning_before_the_deadline_…`): its kubelet
//! then reports the Pod's end, and the frame is read.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use ptah_api::schema::{PendingObservationOutcome, SchemaPhase};
use ptah_dataplane::Operation;
use ptah_testenv::cluster::faults::IsolationNode;
use serde_json::json;

use crate::{
    dataplane::{
        database::{LockHolder, expect_tables},
        lost_pods,
        setup::{Run, STEP},
    },
    lifecycle::{
        app::{Engine, approve, phase},
        wait_for,
    },
};

const BOUND: Duration = Duration::from_secs(720);

/// When the node comes back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Return {
    /// After the execution deadline, its grace and the Job's `activeDeadlineSeconds`.
    AfterDeadline,
    /// As soon as the Apply has finished on the database, long before the deadline.
    BeforeDeadline,
}

async fn cut_off(name: &'static str, engine: Engine, back: Return) {
    let node = IsolationNode::load(&ptah_apitests::workspace_root().join("target/cluster"))
        .expect("the isolation node: run `cargo xtask cluster up --nodes 2`");
    let deadline = match back {
        Return::AfterDeadline => 60,
        Return::BeforeDeadline => 240,
    };
    let run = Run::start(
        name,
        engine,
        json!({"policy": {"lockTimeout": format!("{deadline}s")},
               "execution": {"activeDeadlineSeconds": deadline,
                   "nodeSelector": {"kubernetes.io/hostname": node.node_name},
                   "tolerations": [{"key": "operator.ptah.run/isolation", "operator": "Exists",
                                    "effect": "NoSchedule"}]}}),
    )
    .await;
    // The other schema runs on node 1: the spec of `orders` without the placement.
    run.app
        .sibling_schema("other", |spec| {
            spec.execution.node_selector = None;
            spec.execution.tolerations = None;
        })
        .await;
    let first = run.awaiting(None).await;
    let mut holder = LockHolder::take(engine, &run.app.host_url).await;
    approve(&run.app.client, &run.app.ns, &first).await;
    let pod = run.running_apply_pod().await;
    let placed = pod.spec.as_ref().and_then(|s| s.node_name.clone());
    assert_eq!(
        placed.as_deref(),
        Some(node.node_name.as_str()),
        "placed on the isolation node"
    );
    let until = Instant::now() + STEP;
    while holder.other_sessions().await == 0 {
        assert!(Instant::now() < until, "the Apply never reached the database");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // How the manager recorded the Apply's end: the outcome of the proof it then owes (every
    // Apply is followed by one; `ApplySucceeded` when the frame was read, `OutcomeUnknown` when
    // none was left), seen by a poll.
    let outcomes: Arc<Mutex<Vec<PendingObservationOutcome>>> = Arc::default();
    let (schemas, seen) = (run.app.schemas.clone(), outcomes.clone());
    let poll = tokio::spawn(async move {
        loop {
            if let Ok(s) = schemas.get("orders").await
                && let Some(p) = s.status.and_then(|st| st.pending_observation)
            {
                let mut seen = seen.lock().expect("outcomes");
                if !seen.contains(&p.outcome) {
                    seen.push(p.outcome);
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    let fault = node.cut_api_server().expect("cut the node off the API server");
    let cut_at = Instant::now();
    // The Apply finishes on the database, unseen by the manager. First, because MariaDB's
    // `GET_LOCK` names are server-wide: the other schema's Apply, on another database of the
    // same server, would wait on the outside session's lock too.
    holder.release().await;
    let until = Instant::now() + STEP;
    while expect_tables(engine, &run.app.host_url, &["audit", "items"])
        .await
        .is_err()
    {
        assert!(Instant::now() < until, "the Apply never finished during the cut");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The other node keeps converging: a plan, its approval, its Apply, InSync.
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
    approve(&run.app.client, &run.app.ns, &other).await;
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
    if back == Return::AfterDeadline {
        // Until past the execution deadline, its grace and the Job's `activeDeadlineSeconds`
        // (10 s more, counted from the Job's start, a few seconds after the claim's): the
        // manager cannot have read a result, and the Pod can no longer run.
        let claim = run
            .app
            .schemas
            .get("orders")
            .await
            .expect("orders")
            .status
            .and_then(|s| s.active_operation)
            .expect("the Apply's claim");
        let grace = claim.termination_grace_period_seconds.expect("a grace period");
        let end = claim.execution_not_after.expect("an execution deadline").0;
        let left = end.duration_since(jiff::Timestamp::now()).as_secs_f64() + grace as f64 + 25.0;
        tokio::time::sleep(Duration::from_secs_f64(left.max(0.0))).await;
        // The node is declared lost: its Pod is force-deleted, so no frame can be read once the
        // node returns. It returns at once: the proof's Jobs need it (`orders` is placed there),
        // and Jobs made while it is away would outlive their 60 s `activeDeadlineSeconds`.
        lost_pods::force_delete(&run.app.client, &run.app.ns, Operation::Apply).await;
    } else {
        // Away long enough for the cluster to see it (the Node NotReady, about 45 s here), yet
        // back long before the deadline.
        let nodes: Api<Node> = Api::all(run.app.client.clone());
        let until = Instant::now() + STEP;
        loop {
            let n = nodes.get(&node.node_name).await.expect("the isolation Node");
            let ready = n
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .into_iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
            if !ready {
                break;
            }
            assert!(Instant::now() < until, "the Node never went NotReady");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
    let during = run.app.schemas.get("orders").await.expect("orders");
    eprintln!(
        "{name}: after {:.0} s cut off: {}",
        cut_at.elapsed().as_secs_f64(),
        crate::lifecycle::summary(&during)
    );
    fault.undo().expect("the node returns");
    let settled = run
        .wait("orders settled after the node returned", |s| {
            s.status
                .as_ref()
                .is_some_and(|st| st.active_operation.is_none() && st.pending_observation.is_none())
                && matches!(
                    phase(s),
                    Some(SchemaPhase::InSync | SchemaPhase::AwaitingApproval)
                )
        })
        .await;
    poll.abort();
    let outcomes = outcomes.lock().expect("outcomes").clone();
    eprintln!(
        "{name}: settled {:?}, the Apply recorded as {outcomes:?}",
        phase(&settled)
    );
    // With the Pod force-deleted while the node was away no log is left: on the log path the
    // outcome is unknown and only the proof decides. Durably, the runner delivered its result to
    // the manager's receiver (the node was cut off from the API server only), so the Apply's end
    // is read from the records although its Pod is gone. A node back in time reports the Pod's
    // end either way.
    let expected = match back {
        Return::AfterDeadline if !run.durable => PendingObservationOutcome::OutcomeUnknown,
        Return::AfterDeadline | Return::BeforeDeadline => PendingObservationOutcome::ApplySucceeded,
    };
    assert_eq!(outcomes, [expected], "how the Apply's end was recorded");
    let database = match expect_tables(engine, &run.app.host_url, &["audit", "items"]).await {
        Ok(()) if phase(&settled) != Some(SchemaPhase::InSync) => {
            Err("the Apply ran but the schema does not say InSync".to_owned())
        }
        other => other,
    };
    run.conclude(&[1, 1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_node_cut_off_from_the_api_server_mid_apply_settles_without_replay_postgresql() {
    cut_off(
        "e2e_fault_node_cut_off_from_the_api_server_mid_apply_settles_without_replay_postgresql",
        Engine::Postgres,
        Return::AfterDeadline,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_node_cut_off_from_the_api_server_mid_apply_settles_without_replay_mysql() {
    cut_off(
        "e2e_dataplane_node_cut_off_from_the_api_server_mid_apply_settles_without_replay_mysql",
        Engine::Mariadb,
        Return::AfterDeadline,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_node_cut_off_from_the_api_server_returning_before_the_deadline_settles_without_replay_postgresql()
 {
    cut_off(
        "e2e_dataplane_node_cut_off_from_the_api_server_returning_before_the_deadline_settles_without_replay_postgresql",
        Engine::Postgres,
        Return::BeforeDeadline,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_node_cut_off_from_the_api_server_returning_before_the_deadline_settles_without_replay_mysql()
 {
    cut_off(
        "e2e_dataplane_node_cut_off_from_the_api_server_returning_before_the_deadline_settles_without_replay_mysql",
        Engine::Mariadb,
        Return::BeforeDeadline,
    )
    .await;
}
