//! T3: the manager's leader election against the real kube-apiserver.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    coordination::v1::Lease,
    rbac::v1::{Role, RoleBinding},
};
use kube::{
    Api, Client,
    api::{DeleteParams, PostParams},
};
use ptah_apitests::{
    ClusterFiles,
    client::{admin_client, namespace, user_client},
};
use ptah_targetlock::{COORDINATION_LABEL, ManualClock, leader::LeaderElector};
use serde_json::json;
use tokio::{sync::watch, task::JoinHandle};

const LEASE: &str = "ptah-operator-leader";

struct Running {
    is_leader: watch::Receiver<bool>,
    shutdown: watch::Sender<bool>,
    task: JoinHandle<()>,
}

fn start(elector: LeaderElector) -> Running {
    let is_leader = elector.is_leader();
    let (shutdown, stop) = watch::channel(false);
    let task = tokio::spawn(async move { elector.run(stop).await.expect("run") });
    Running {
        is_leader,
        shutdown,
        task,
    }
}

fn elector(client: Client, ns: &str, identity: &str) -> LeaderElector {
    LeaderElector::new(
        client,
        ns,
        LEASE,
        identity,
        Duration::from_secs(5),
        Duration::from_millis(300),
    )
}

async fn wait_for(what: &str, within: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "{what} not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn one_leader_at_a_time_and_a_prompt_successor_after_shutdown() {
    let client = admin_client().await;
    let ns = namespace(&client, "leader").await;
    let a = start(elector(client.clone(), &ns, "replica-a"));
    let b = start(elector(client.clone(), &ns, "replica-b"));
    let leaders = || usize::from(*a.is_leader.borrow()) + usize::from(*b.is_leader.borrow());
    wait_for("a leader", Duration::from_secs(10), || leaders() == 1).await;
    let sampled_until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < sampled_until {
        assert_eq!(leaders(), 1, "exactly one leader");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (leader, follower) = if *a.is_leader.borrow() { (a, b) } else { (b, a) };
    let lease = Api::<Lease>::namespaced(client.clone(), &ns)
        .get(LEASE)
        .await
        .expect("lease");
    let labels = lease.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels.get(COORDINATION_LABEL).map(String::as_str),
        Some("manager-leader")
    );

    let stopped = Instant::now();
    leader.shutdown.send_replace(true);
    leader.task.await.expect("leader task");
    assert!(!*leader.is_leader.borrow(), "stepped down on shutdown");
    // Released, so the successor need not wait out the 5 s Lease.
    let mut follower_rx = follower.is_leader.clone();
    wait_for("the successor", Duration::from_secs(3), || {
        *follower_rx.borrow_and_update()
    })
    .await;
    assert!(
        stopped.elapsed() < Duration::from_secs(4),
        "{:?}",
        stopped.elapsed()
    );

    follower.shutdown.send_replace(true);
    follower.task.await.expect("follower task");
    let lease = Api::<Lease>::namespaced(client, &ns)
        .get(LEASE)
        .await
        .expect("lease");
    assert_eq!(lease.spec.and_then(|s| s.holder_identity).unwrap_or_default(), "");
}

#[tokio::test]
async fn leader_steps_down_when_renewals_fail_past_the_lease_duration() {
    let files = ClusterFiles::require();
    let admin = admin_client().await;
    let ns = namespace(&admin, "leader-rbac").await;
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "leases", "namespace": ns},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]}]
    }))
    .expect("role");
    Api::<Role>::namespaced(admin.clone(), &ns)
        .create(&PostParams::default(), &role)
        .await
        .expect("create role");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "leases", "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "leases"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": files.user_name}]
    }))
    .expect("binding");
    let bindings = Api::<RoleBinding>::namespaced(admin.clone(), &ns);
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("create binding");

    let user = user_client().await;
    let clock = ManualClock::new();
    let running = start(elector(user.clone(), &ns, "replica-a").with_clock(Arc::new(clock.clone())));
    wait_for("leadership", Duration::from_secs(10), || {
        *running.is_leader.borrow()
    })
    .await;

    // Renewals now fail with 403 (once the authorizer has seen the deletion).
    bindings
        .delete("leases", &DeleteParams::default())
        .await
        .expect("delete binding");
    let leases = Api::<Lease>::namespaced(user, &ns);
    let deadline = Instant::now() + Duration::from_secs(10);
    while leases.get(LEASE).await.is_ok() {
        assert!(Instant::now() < deadline, "RBAC revocation never took effect");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        *running.is_leader.borrow(),
        "a failed renewal alone is no reason to step down"
    );
    clock.advance(Duration::from_secs(6));
    wait_for("step-down", Duration::from_secs(3), || {
        !*running.is_leader.borrow()
    })
    .await;

    running.shutdown.send_replace(true);
    running.task.await.expect("task");
}
