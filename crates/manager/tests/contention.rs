//! T3 against the real API server (`cargo xtask cluster up --tier api`; no kubelet, so operation
//! Jobs are created but never run): two manager processes contend, only the leader reconciles,
//! the claim's Job is created exactly once across a leader change, and deletion waits for the
//! active operation and then releases the finalizer without creating anything.

use std::{
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use k8s_openapi::api::{batch::v1::Job, coordination::v1::Lease, core::v1::ConfigMap};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams},
};
use ptah_api::PtahSchema;
use ptah_apitests::{
    ClusterFiles,
    client::{admin_client, install_crds, namespace},
    e2e::create,
};
use serde_json::json;

const IMAGE: &str =
    "registry.invalid/ptah@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn manager(ns: &str, identity: &str) -> Proc {
    let log = std::env::temp_dir().join(format!("{ns}-{identity}.log"));
    let out = std::fs::File::create(&log).expect("log");
    let err = out.try_clone().expect("log");
    let child = Command::new(env!("CARGO_BIN_EXE_manager"))
        .args([
            format!("--coordination-namespace={ns}"),
            format!("--watch-namespace={ns}"),
            format!("--executor-image={IMAGE}"),
            format!("--runner-image={IMAGE}"),
            format!("--identity={identity}"),
            "--http-addr=127.0.0.1:0".to_owned(),
            "--leader-lease-seconds=5".to_owned(),
            "--log-format=json".to_owned(),
        ])
        .env("KUBECONFIG", &ClusterFiles::require().admin_kubeconfig)
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .expect("start the manager");
    Proc(child)
}

async fn eventually<T>(what: &str, timeout: Duration, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn jobs(client: &Client, ns: &str) -> Vec<Job> {
    Api::<Job>::namespaced(client.clone(), ns)
        .list(&ListParams::default())
        .await
        .expect("jobs")
        .items
}

async fn leader(client: &Client, ns: &str) -> Option<String> {
    let lease = Api::<Lease>::namespaced(client.clone(), ns)
        .get_opt("ptah-operator-leader")
        .await
        .expect("lease")?;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
}

async fn setup(client: &Client) -> String {
    install_crds(client).await;
    let ns = namespace(client, "manager-t3").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    create(
        &cms,
        json!({"metadata": {"name": "policy"}, "immutable": true,
        "data": {"policy.yaml": "version: 1\nartifact_types: [application/vnd.stokaro.ptah.schema.v1]\n"}}),
    )
    .await;
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
    create(&schemas, json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": "orders"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}},
            "desired": {"ociRef": "oci://registry.invalid/shop/orders:v1", "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    })).await;
    ns
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_leader_reconciles_and_a_dispatched_job_survives_a_leader_change() {
    let client = admin_client().await;
    let ns = setup(&client).await;
    let a = manager(&ns, "replica-a");
    let b = manager(&ns, "replica-b");
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
    let s = eventually(
        "a dispatched Resolve claim",
        Duration::from_secs(60),
        async || {
            let s = schemas.get("orders").await.ok()?;
            let c = s.status.as_ref()?.active_operation.as_ref()?;
            (c.dispatch_started == Some(true) && c.job_uid.is_some()).then_some(s)
        },
    )
    .await;
    assert!(
        s.finalizers().iter().any(|f| f == "operator.ptah.run/finalizer"),
        "the finalizer precedes the claim"
    );
    let first = jobs(&client, &ns).await;
    assert_eq!(first.len(), 1, "one claim, one Job");
    let claimed = s
        .status
        .as_ref()
        .and_then(|st| st.active_operation.as_ref())
        .map(|c| c.job_name.clone());
    assert_eq!(first[0].metadata.name, claimed);
    let holder = leader(&client, &ns).await.expect("a leader");
    // Kill the leader without a graceful release; the other replica takes over after the
    // Lease duration (measured on its own clock) and supervises the same claim.
    let (dead, survivor, survivor_id) = if holder == "replica-a" {
        (a, b, "replica-b")
    } else {
        (b, a, "replica-a")
    };
    drop(dead);
    eventually("the other replica leading", Duration::from_secs(30), async || {
        (leader(&client, &ns).await.as_deref() == Some(survivor_id)).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = jobs(&client, &ns).await;
    assert_eq!(after.len(), 1, "the new leader never re-creates a dispatched Job");
    assert_eq!(after[0].uid(), first[0].uid());

    // Deletion waits while the operation's Job exists, then the claim is settled without SQL.
    schemas
        .delete("orders", &DeleteParams::default())
        .await
        .expect("delete");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pending = schemas
        .get("orders")
        .await
        .expect("still there while the Job exists");
    assert!(pending.metadata.deletion_timestamp.is_some());
    Api::<Job>::namespaced(client.clone(), &ns)
        .delete(
            first[0].metadata.name.as_deref().unwrap_or_default(),
            &DeleteParams::background(),
        )
        .await
        .expect("delete the Job");
    eventually("the PtahSchema gone", Duration::from_secs(60), async || {
        schemas
            .get_opt("orders")
            .await
            .ok()
            .and_then(|o| o.is_none().then_some(()))
    })
    .await;
    let left: Vec<String> = jobs(&client, &ns)
        .await
        .iter()
        .filter(|j| j.metadata.deletion_timestamp.is_none())
        .map(|j| j.name_any())
        .collect();
    assert!(left.is_empty(), "deletion created no Job: {left:?}");
    drop(survivor);
}
