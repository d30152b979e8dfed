//! T4, suite `lifecycle` (`cargo xtask e2e --suite lifecycle`): the release lifecycle on the full
//! local cluster, with the chart installed by helm and its ptah-crd-manager hooks.
//!
//! * `upgrade`: the previous release (`support/previous-release.json`, images by `cargo xtask
//!   images --rev`) runs a PtahSchema and a PtahMigration to InSync and leaves a second schema's
//!   plan awaiting approval; `helm upgrade` to HEAD upgrades the CRDs, keeps both InSync without
//!   any Apply and retires the waiting plan for a fresh one; `helm upgrade` back to the previous
//!   release is refused by that release's own preflight, with nothing changed.
//! * `ha`: two replicas; the leader is killed while a schema Apply is in flight; the other replica
//!   takes the leader Lease within the Lease duration, the approval webhook is probed every 200 ms
//!   throughout, and the Apply Job exists exactly once.
//! * `uninstall`: `helm uninstall` leaves the tables, the CRDs and every object, and no admission
//!   configuration; a reinstall adopts the resources, which converge without an Apply.

mod common;
mod lifecycle;
mod migrations;

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use k8s_openapi::{
    api::{
        admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
        apps::v1::Deployment,
        coordination::v1::Lease,
        core::v1::{ConfigMap, Pod, Secret},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams, LogParams, PostParams},
};
use lifecycle::{
    InCluster,
    app::{App, Engine, approve, phase},
    wait_for,
};
use migrations::{
    Release, Spans, applies_of, manager_story, observe_spans, push_migrations, uninstall, v1_files,
};
use ptah_api::{
    CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION_ANNOTATION, PtahMigration, PtahMigrationPlan,
    PtahSchema, PtahSchemaApproval, migration::MigrationPhase, schema::SchemaPhase,
};
use ptah_apitests::{
    e2e::create,
    release::{ChartSource, helm_release, install, install_from},
};
use serde_json::json;

const STEP: Duration = Duration::from_secs(300);
/// The chart's leader Lease and its duration (the manager's `--leader-lease-seconds` default).
const LEADER_LEASE: &str = "ptah-operator-leader";
const LEADER_LEASE_SECONDS: u64 = 15;
const WEBHOOKS: &str = "ptah-operator";

/// Prints a measured figure and appends it to `target/e2e/logs/lifecycle-<phase>.txt`, where it
/// outlives the test's captured output.
fn report(phase: &str, line: &str) {
    use std::io::Write;
    eprintln!("{phase}: {line}");
    let path = ptah_apitests::e2e_log_file(&format!("lifecycle-{phase}.txt"));
    let _ = std::fs::create_dir_all(path.parent().expect("log dir"));
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
        let _ = writeln!(file, "{line}");
    }
}

fn in_sync(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
}

fn awaiting(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::AwaitingApproval) && s.status.as_ref().is_some_and(|st| st.plan.is_some())
}

fn epoch(s: &PtahSchema) -> Option<String> {
    s.status
        .as_ref()?
        .execution_binding
        .as_ref()?
        .epoch
        .as_ref()
        .map(|e| e.as_str().to_owned())
}

/// `orders` from plan to InSync through an approval.
async fn converge(app: &App, manager: &InCluster) -> PtahSchema {
    let s = wait_for(
        &app.schemas,
        "orders",
        "a plan awaiting approval",
        STEP,
        manager,
        awaiting,
    )
    .await;
    approve(&app.client, &app.ns, &s).await;
    wait_for(
        &app.schemas,
        "orders",
        "InSync after the approved Apply",
        STEP,
        manager,
        in_sync,
    )
    .await
}

/// Sets every CRD to the previous release's (spec and identity), as a cluster running it has them.
async fn previous_crds(client: &Client, source: &ChartSource) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let dir = source.chart.join("files/crds");
    let files = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for file in files.flatten() {
        let text = std::fs::read_to_string(file.path()).expect("CRD file");
        let old: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("CRD YAML");
        let name = old.metadata.name.clone().expect("name");
        let mut live = api.get(&name).await.expect("live CRD");
        live.spec = old.spec;
        let annotations = live.metadata.annotations.get_or_insert_with(Default::default);
        for key in [CRD_SCHEMA_VERSION_ANNOTATION, CRD_SCHEMA_DIGEST_ANNOTATION] {
            let value = old
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .cloned()
                .expect("stamped");
            annotations.insert(key.to_owned(), value);
        }
        api.replace(&name, &PostParams::default(), &live)
            .await
            .expect("set the previous CRD");
    }
}

/// Every live CRD carries the identity this checkout ships.
async fn crds_are_heads(client: &Client) -> Result<(), String> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for shipped in ptah_api::crds().expect("crds") {
        let name = shipped.metadata.name.clone().unwrap_or_default();
        let live = api.get(&name).await.expect("live CRD");
        for key in [CRD_SCHEMA_VERSION_ANNOTATION, CRD_SCHEMA_DIGEST_ANNOTATION] {
            let get = |c: &CustomResourceDefinition| {
                c.metadata.annotations.as_ref().and_then(|a| a.get(key)).cloned()
            };
            if get(&live) != get(&shipped) {
                return Err(format!(
                    "{name} {key}: live {:?}, shipped {:?}",
                    get(&live),
                    get(&shipped)
                ));
            }
        }
    }
    Ok(())
}

/// A PtahMigration `billing` on a database of its own, from pending to InSync at version 2.
async fn billing(app: &App, manager: &InCluster) -> Api<PtahMigration> {
    let db = ptah_testservices::unique_name("e2e").replace('-', "_");
    let (_, pod_url) = app.engine.fresh_database(&app.services, &db).await;
    let secrets: Api<Secret> = Api::namespaced(app.client.clone(), &app.ns);
    create(&secrets, json!({"metadata": {"name": "billing-db"}, "stringData": {"url": format!("{pod_url}?sslmode=verify-full")}})).await;
    let cms: Api<ConfigMap> = Api::namespaced(app.client.clone(), &app.ns);
    create(
        &cms,
        json!({"metadata": {"name": "migrations-policy"}, "immutable": true, "data": {
        "policy.yaml": format!("version: 1\nartifact_types: [{}]\n", migrations::MIGRATIONS_TYPE)}}),
    )
    .await;
    let repository = format!("e2e/{}-billing", app.ns);
    push_migrations(&app.services, &repository, "v1", &v1_files());
    let api: Api<PtahMigration> = Api::namespaced(app.client.clone(), &app.ns);
    create(&api, json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": "billing"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "billing",
                       "urlFrom": {"name": "billing-db", "key": "url"}, "caFrom": {"name": "db-ca", "key": "ca.pem"}},
            "artifact": {
                "ociRef": format!("oci://{}/{repository}:v1", app.registry),
                "registryAuthFrom": {"name": "registry"},
                "verificationPolicyFrom": {"name": "migrations-policy", "key": "policy.yaml"},
                "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
            },
            "interval": "10s",
            "policy": {"apply": "OnApproval"},
            "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
        }
    }))
    .await;
    let m = wait_migration(&api, manager, "a migration plan", |m| {
        m.status
            .as_ref()
            .is_some_and(|st| st.phase == Some(MigrationPhase::AwaitingApproval) && st.plan.is_some())
    })
    .await;
    let plan_ref = m.status.as_ref().and_then(|s| s.plan.clone()).expect("plan");
    let plans: Api<PtahMigrationPlan> = Api::namespaced(app.client.clone(), &app.ns);
    let plan = plans.get(&plan_ref.name).await.expect("plan");
    let approvals: Api<ptah_api::PtahMigrationApproval> = Api::namespaced(app.client.clone(), &app.ns);
    create(
        &approvals,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationApproval",
            "metadata": {"name": format!("approve-{}", plan.name_any())},
            "spec": {
                "migrationRef": {"name": "billing", "uid": m.uid().expect("uid")},
                "planRef": {"name": plan.name_any(), "uid": plan.uid().expect("plan uid")},
                "planFingerprint": plan.spec.fingerprint,
            }
        }),
    )
    .await;
    wait_migration(&api, manager, "billing InSync at 2", migration_in_sync).await;
    api
}

fn migration_in_sync(m: &PtahMigration) -> bool {
    m.status.as_ref().is_some_and(|st| {
        st.phase == Some(MigrationPhase::InSync)
            && st.history.as_ref().and_then(|h| h.current_version) == Some(2)
    })
}

async fn wait_migration(
    api: &Api<PtahMigration>,
    manager: &InCluster,
    what: &str,
    pred: impl Fn(&PtahMigration) -> bool,
) -> PtahMigration {
    let deadline = Instant::now() + STEP;
    loop {
        let m = api.get("billing").await.expect("billing");
        if pred(&m) {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\nstatus: {}\n{}",
            serde_json::to_string_pretty(&m.status).unwrap_or_default(),
            lifecycle::Diagnose::diagnose(manager)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A second PtahSchema `pending` on a database of its own, left awaiting approval.
async fn pending_schema(app: &App) {
    let db = ptah_testservices::unique_name("e2e").replace('-', "_");
    let (_, pod_url) = app.engine.fresh_database(&app.services, &db).await;
    let secrets: Api<Secret> = Api::namespaced(app.client.clone(), &app.ns);
    create(&secrets, json!({"metadata": {"name": "pending-db"}, "stringData": {"url": format!("{pod_url}?sslmode=verify-full")}})).await;
    let mut spec = app.schemas.get("orders").await.expect("orders").spec;
    spec.target.coordination_key = Some("pending".to_owned());
    spec.target.url_from.name = "pending-db".to_owned();
    let mut schema = PtahSchema::new("pending", spec);
    schema.metadata.namespace = Some(app.ns.clone());
    app.schemas
        .create(&PostParams::default(), &schema)
        .await
        .expect("create pending");
}

/// The manager Deployment's container image.
async fn manager_image(client: &Client, release_ns: &str) -> String {
    let api: Api<Deployment> = Api::namespaced(client.clone(), release_ns);
    let d = api
        .get(ptah_apitests::release::MANAGER_DEPLOYMENT)
        .await
        .expect("manager Deployment");
    d.spec
        .and_then(|s| s.template.spec)
        .and_then(|s| s.containers.first().and_then(|c| c.image.clone()))
        .unwrap_or_default()
}

/// The logs of the release namespace's reconcile hook Pods (a failed hook Job stays).
async fn hook_logs(client: &Client, release_ns: &str) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), release_ns);
    let mut out = String::new();
    let list = pods
        .list(&ListParams::default().labels("app.kubernetes.io/component=reconcile-hook"))
        .await
        .expect("hook pods");
    for pod in list.items {
        out.push_str(
            &pods
                .logs(&pod.name_any(), &LogParams::default())
                .await
                .unwrap_or_default(),
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_upgrade_from_the_previous_release_keeps_resources_in_sync_and_refuses_the_way_back() {
    let app = App::setup(Engine::Postgres, "e2e-upgrade").await;
    let client = app.client.clone();
    let previous = ChartSource::previous();
    let head = ChartSource::head(&app.image);
    previous_crds(&client, &previous).await;
    let release_ns = install_from(&client, &app.ns, &app.services, &previous, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let seen: Spans = observe_spans(&client, &app.ns);

    // Under the previous release: orders and billing InSync, pending awaiting approval.
    let synced = converge(&app, &manager).await;
    billing(&app, &manager).await;
    pending_schema(&app).await;
    let waiting = wait_for(
        &app.schemas,
        "pending",
        "a plan awaiting approval",
        STEP,
        &manager,
        awaiting,
    )
    .await;
    let old_plan = waiting
        .status
        .as_ref()
        .and_then(|s| s.plan.clone())
        .expect("plan");
    let old_epoch = epoch(&synced).expect("a binding");
    let applies = applies_of(&seen);
    assert_eq!(
        applies.len(),
        2,
        "one Apply for orders, one for billing: {applies:?}"
    );

    // Upgrade to HEAD.
    let started = Instant::now();
    let out = ptah_apitests::release::run(&mut helm_release("upgrade", &release_ns, &app.ns, &head, &[]));
    assert!(out.contains("STATUS: deployed"), "{out}");
    report(
        "upgrade",
        &format!("helm upgrade to HEAD took {:?}", started.elapsed()),
    );
    crds_are_heads(&client)
        .await
        .unwrap_or_else(|e| panic!("the CRDs were not upgraded: {e}"));
    assert_eq!(manager_image(&client, &release_ns).await, head.manager);

    // The new manager's binding: orders proves InSync again by a fresh plan, without an Apply.
    let again = wait_for(
        &app.schemas,
        "orders",
        "InSync under the new binding",
        STEP,
        &manager,
        |s| in_sync(s) && epoch(s).is_some_and(|e| e != old_epoch),
    )
    .await;
    assert_eq!(
        again.status.as_ref().and_then(|s| s.applied.clone()),
        synced.status.as_ref().and_then(|s| s.applied.clone())
    );
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &app.ns);
    wait_migration(
        &migrations,
        &manager,
        "billing InSync under the new binding",
        |m| {
            migration_in_sync(m)
                && m.status
                    .as_ref()
                    .and_then(|s| s.execution_binding.as_ref())
                    .and_then(|b| b.epoch.as_ref())
                    .is_some_and(|e| e.as_str() != old_epoch)
        },
    )
    .await;
    // The waiting plan was computed under the old executor: retired, and a fresh one published.
    let binding_changed = previous.data_plane != head.data_plane;
    let fresh = wait_for(
        &app.schemas,
        "pending",
        "a fresh plan under the new binding",
        STEP,
        &manager,
        |s| awaiting(s) && epoch(s).is_some_and(|e| e != old_epoch),
    )
    .await;
    let fresh_plan = fresh.status.as_ref().and_then(|s| s.plan.clone()).expect("plan");
    if binding_changed {
        assert_ne!(
            fresh_plan.name, old_plan.name,
            "the old plan is Stale, a new one is published"
        );
        let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app.ns);
        let stale = approvals
            .create(
                &PostParams::default(),
                &serde_json::from_value(json!({
                    "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
                    "metadata": {"name": "approve-the-old-plan"},
                    "spec": {
                        "schemaRef": {"name": "pending", "uid": fresh.uid().expect("uid")},
                        "planRef": {"name": old_plan.name, "uid": old_plan.uid},
                        "planFingerprint": old_plan.fingerprint,
                    }
                }))
                .expect("approval"),
            )
            .await;
        assert!(
            stale.is_err(),
            "an approval of the retired plan is refused: {stale:?}"
        );
    }
    tokio::time::sleep(Duration::from_secs(20)).await; // two intervals
    assert_eq!(applies_of(&seen), applies, "no Apply after the upgrade");

    // Back to the previous release: its own preflight refuses, and nothing changes.
    let back = helm_release("upgrade", &release_ns, &app.ns, &previous, &[])
        .output()
        .expect("run helm");
    let said = format!(
        "{}{}{}",
        String::from_utf8_lossy(&back.stdout),
        String::from_utf8_lossy(&back.stderr),
        hook_logs(&client, &release_ns).await
    );
    eprintln!(
        "helm upgrade back to the previous release said:\n{}",
        String::from_utf8_lossy(&back.stderr)
    );
    assert!(!back.status.success(), "the downgrade was accepted:\n{said}");
    assert!(
        said.contains("would lower it"),
        "the refusal names the CRD downgrade:\n{said}"
    );
    crds_are_heads(&client)
        .await
        .unwrap_or_else(|e| panic!("the refused downgrade changed a CRD: {e}"));
    assert_eq!(
        manager_image(&client, &release_ns).await,
        head.manager,
        "the manager stays"
    );
    // orders cycles on (Observing, Planning …) under the manager that stayed, and stays in sync.
    wait_for(
        &app.schemas,
        "orders",
        "InSync after the refused downgrade",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    assert_eq!(applies_of(&seen), applies, "no Apply after the refused downgrade");
}

/// What one probe of the approval webhook saw.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Probe {
    /// The webhook answered (and refused the invalid approval on its merits).
    Answered,
    /// The API server could not call the webhook.
    CallFailed,
    /// Stored: a webhook let an unchecked approval through.
    Admitted,
}

/// Probes the approval webhook every 200 ms with a dry-run approval naming no plan, until `stop`.
fn probe_webhook(
    client: Client,
    ns: String,
    schema_uid: String,
    stop: Arc<AtomicBool>,
) -> Arc<Mutex<Vec<(Instant, Probe)>>> {
    let seen: Arc<Mutex<Vec<(Instant, Probe)>>> = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        let api: Api<PtahSchemaApproval> = Api::namespaced(client, &ns);
        let approval: PtahSchemaApproval = serde_json::from_value(json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
            "metadata": {"generateName": "probe-"},
            "spec": {
                "schemaRef": {"name": "orders", "uid": schema_uid},
                "planRef": {"name": "ptah-plan-000000000000000000000000", "uid": "no-such-plan"},
                "planFingerprint": format!("sha256:{}", "0".repeat(64))
            }
        }))
        .expect("probe");
        let params = PostParams {
            dry_run: true,
            ..Default::default()
        };
        while !stop.load(Ordering::Relaxed) {
            let at = Instant::now();
            let probe = match api.create(&params, &approval).await {
                Ok(_) => Probe::Admitted,
                Err(kube::Error::Api(s)) if !s.message.contains("failed calling webhook") => Probe::Answered,
                Err(_) => Probe::CallFailed,
            };
            out.lock().expect("probes").push((at, probe));
            tokio::time::sleep(Duration::from_millis(200).saturating_sub(at.elapsed())).await;
        }
    });
    seen
}

/// SIGKILLs the manager container of `pod` through the local node's containerd (`ctr`).
async fn crash(pods: &Api<Pod>, pod: &str) {
    let live = pods.get(pod).await.expect("the leader Pod");
    let id = live
        .status
        .and_then(|s| s.container_statuses)
        .and_then(|c| c.into_iter().find(|c| c.name == "manager"))
        .and_then(|c| c.container_id)
        .and_then(|id| id.strip_prefix("containerd://").map(str::to_owned))
        .expect("the manager container's containerd id");
    let socket = ptah_apitests::workspace_root().join("target/cluster/containerd/containerd.sock");
    let out = std::process::Command::new("ctr")
        .arg("--address")
        .arg(&socket)
        .args(["-n", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", &id])
        .output()
        .unwrap_or_else(|e| {
            panic!("ctr: {e}; the local provider's containerd (cargo xtask cluster up) is needed")
        });
    assert!(
        out.status.success(),
        "ctr tasks kill: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

async fn leader(client: &Client, ns: &str) -> Option<String> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), ns);
    leases
        .get_opt(LEADER_LEASE)
        .await
        .ok()
        .flatten()?
        .spec?
        .holder_identity
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_ha_the_leader_dies_mid_apply_and_the_other_replica_finishes_it_once() {
    let app = App::setup(Engine::Postgres, "e2e-ha").await;
    let client = app.client.clone();
    let release_ns = install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let seen = observe_spans(&client, &app.ns);
    let s = wait_for(
        &app.schemas,
        "orders",
        "a plan awaiting approval",
        STEP,
        &manager,
        awaiting,
    )
    .await;
    let stop = Arc::new(AtomicBool::new(false));
    let probes = probe_webhook(
        client.clone(),
        app.ns.clone(),
        s.uid().expect("uid"),
        stop.clone(),
    );

    approve(&client, &app.ns, &s).await;
    let deadline = Instant::now() + STEP;
    while applies_of(&seen).is_empty() {
        assert!(
            Instant::now() < deadline,
            "no Apply Job\n{}",
            manager_story(&client, &release_ns, 40).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let old = leader(&client, &release_ns).await.expect("a leader");
    let pods: Api<Pod> = Api::namespaced(client.clone(), &release_ns);
    // A crash, not a shutdown: SIGKILL through the node's containerd, so the leader cannot release
    // its Lease; then the Pod goes, so it does not come back under the same identity.
    crash(&pods, &old).await;
    let killed = Instant::now();
    pods.delete(&old, &DeleteParams::default().grace_period(0))
        .await
        .expect("delete the crashed leader's Pod");
    let handover = loop {
        match leader(&client, &release_ns).await {
            Some(now) if now != old => break killed.elapsed(),
            _ => {}
        }
        assert!(
            killed.elapsed() < Duration::from_secs(120),
            "no replica took the leader Lease"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let done = wait_for(
        &app.schemas,
        "orders",
        "InSync after the Apply",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(300)).await;

    let probes = probes.lock().expect("probes").clone();
    let answered = probes.iter().filter(|(_, p)| *p == Probe::Answered).count();
    let mut longest = Duration::ZERO;
    let mut since: Option<Instant> = None;
    for (at, probe) in &probes {
        match (probe, since) {
            (Probe::Answered, Some(start)) => {
                longest = longest.max(*at - start);
                since = None;
            }
            (Probe::Answered, None) => {}
            (_, None) => since = Some(*at),
            (_, Some(_)) => {}
        }
    }
    report(
        "ha",
        &format!(
            "leader handover {handover:?} after a SIGKILL (lease {LEADER_LEASE_SECONDS} s); webhook probes every \
             200 ms: {answered}/{} answered, longest unanswered stretch {longest:?}",
            probes.len()
        ),
    );
    assert!(
        // Expiry (at most the Lease duration after the kill) plus one retry period of the standby.
        handover <= Duration::from_secs(LEADER_LEASE_SECONDS + LEADER_LEASE_SECONDS / 3 + 1),
        "the Lease moved after {handover:?}"
    );
    assert!(
        probes.iter().all(|(_, p)| *p != Probe::Admitted),
        "a webhook admitted an unchecked approval"
    );
    // A crashed replica's endpoint stays in the Service until its Pod is gone: the API server's
    // calls that reach it in that moment fail (closed). Everything else the live replica answers.
    assert!(
        answered * 100 >= probes.len() * 95 && longest < Duration::from_secs(2),
        "the live replica answered {answered} of {} probes; longest unanswered stretch {longest:?}",
        probes.len()
    );
    assert!(
        probes.len() >= 10,
        "the probe ran throughout: {} probes",
        probes.len()
    );
    let applies = applies_of(&seen);
    assert_eq!(applies.len(), 1, "the Apply Job exists exactly once: {applies:?}");
    assert!(app.engine_has_table("items").await);
    assert!(
        done.status
            .as_ref()
            .is_some_and(|st| st.active_operation.is_none())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_uninstall_leaves_tables_crds_and_objects_and_no_webhook_and_a_reinstall_adopts_them() {
    let app = App::setup(Engine::Postgres, "e2e-uninstall").await;
    let client = app.client.clone();
    let release_ns = install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let seen = observe_spans(&client, &app.ns);
    let synced = converge(&app, &manager).await;
    let applies = applies_of(&seen);

    uninstall(&release_ns);
    assert!(app.engine_has_table("items").await, "the tables are untouched");
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for shipped in ptah_api::crds().expect("crds") {
        let name = shipped.metadata.name.clone().unwrap_or_default();
        assert!(crds.get_opt(&name).await.expect("get").is_some(), "{name} stays");
    }
    let kept = app.schemas.get("orders").await.expect("the PtahSchema stays");
    assert_eq!(phase(&kept), Some(SchemaPhase::InSync));
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    assert!(
        mutating.get_opt(WEBHOOKS).await.expect("get").is_none(),
        "no mutating webhook left"
    );
    assert!(
        validating.get_opt(WEBHOOKS).await.expect("get").is_none(),
        "no validating webhook left"
    );
    // An approval is no longer refused by a dead webhook (no webhook answers, none is configured).
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app.ns);
    create(
        &approvals,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
            "metadata": {"name": "after-uninstall"},
            "spec": {
                "schemaRef": {"name": "orders", "uid": kept.uid().expect("uid")},
                "planRef": {"name": "ptah-plan-000000000000000000000000", "uid": "no-such-plan"},
                "planFingerprint": format!("sha256:{}", "0".repeat(64))
            }
        }),
    )
    .await;
    approvals
        .delete("after-uninstall", &DeleteParams::default())
        .await
        .expect("delete it");

    // A reinstall adopts what stayed: orders proves InSync under the new release without an Apply.
    let release_ns = install(&client, &app.ns, &app.services, &app.image, &[]).await;
    let _release = Release(release_ns.clone());
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let old_epoch = epoch(&synced);
    let adopted = wait_for(
        &app.schemas,
        "orders",
        "InSync under the reinstalled release",
        STEP,
        &manager,
        |s| in_sync(s) && epoch(s) != old_epoch,
    )
    .await;
    assert_eq!(
        adopted.status.as_ref().and_then(|s| s.applied.clone()),
        synced.status.as_ref().and_then(|s| s.applied.clone()),
        "the record of the last Apply is the one from before"
    );
    tokio::time::sleep(Duration::from_secs(20)).await;
    assert_eq!(applies_of(&seen), applies, "no Apply after the reinstall");
}
