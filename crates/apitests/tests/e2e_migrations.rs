//! T4 (`e2e_migrations_<engine>_…`, phases `migrations-postgresql` and `migrations-mysql` of
//! `cargo xtask e2e --suite migrations-<engine>`): the PtahMigration lifecycle on the full local
//! cluster with the manager installed by `helm install` (the locally built images), a real
//! database, the TLS registry and approvals made with `kubectl` by an unprivileged person.
//!
//! Push a migration directory (`ptah migrations push`); a PtahMigration (OnApproval) reads the
//! history (two pending), publishes a PtahMigrationPlan; the person's approval applies them
//! (InSync at the newest version); a new artifact version with two more migrations is planned
//! and applied the same way; (MariaDB) a migration failing halfway is recorded as a Partial,
//! unresolved run that blocks every further Apply until a person repairs the database and
//! acknowledges the run; a modified already-applied file blocks with `HistoryModified`; nothing
//! any Pod, Event, status or plan said contains the database password.

mod common;
mod lifecycle;

use std::{
    collections::BTreeSet,
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    apps::v1::Deployment,
    batch::v1::Job,
    core::v1::{ConfigMap, Event, Namespace, Pod, Secret},
    rbac::v1::RoleBinding,
};
use kube::{
    Api, Client, ResourceExt,
    api::{ListParams, LogParams, Patch, PatchParams},
};
use lifecycle::app::{Engine, password_of};
use ptah_api::{
    PtahMigration, PtahMigrationPlan,
    migration::{MigrationPhase, RunOutcome},
};
use ptah_apitests::{
    ClusterFiles,
    e2e::{build_bin, create, data_plane_image, helm, host_ptah, image_reference, kubectl, pod_endpoints},
    workspace_root,
};
use ptah_testservices::TestServices;
use serde_json::json;

const STEP: Duration = Duration::from_secs(300);
const RELEASE: &str = "ptah";
const NAME: &str = "billing";
const MIGRATIONS_TYPE: &str = "application/vnd.stokaro.ptah.migrations.v1";
const SCHEMA_TYPE: &str = "application/vnd.stokaro.ptah.schema.v1";

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The in-cluster manager's log tails (for failure messages).
async fn manager_story(client: &Client, ns: &str, lines: i64) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut out = String::new();
    for pod in pods
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let params = LogParams {
            tail_lines: Some(lines),
            ..LogParams::default()
        };
        let log = pods
            .logs(&pod.name_any(), &params)
            .await
            .unwrap_or_else(|e| e.to_string());
        out.push_str(&format!("--- {}\n{log}\n", pod.name_any()));
    }
    out
}

/// One migration file pair: (version, description, up SQL).
type File = (u32, &'static str, String);

/// Writes a migration directory, hashes it (`ptah.sum`) and pushes it as `tag`.
fn push_migrations(services: &TestServices, repository: &str, tag: &str, files: &[File]) -> String {
    let bin = build_bin("ptah-cli", "ptah");
    let dir = std::env::temp_dir().join(ptah_apitests::client::unique("migrations-artifact"));
    std::fs::create_dir_all(&dir).expect("dir");
    for (version, desc, up) in files {
        std::fs::write(dir.join(format!("{version:010}_{desc}.up.sql")), up).expect("up");
        std::fs::write(
            dir.join(format!("{version:010}_{desc}.down.sql")),
            format!("-- down of {desc}\n"),
        )
        .expect("down");
    }
    let d = dir.display().to_string();
    run(Command::new(&bin).args(["migrations", "hash", "--dir", &d]));
    let reference = format!("oci://{}/{repository}:{tag}", services.registry.host);
    let pushed = host_ptah(&bin, services, &["migrations", "push", "--dir", &d, &reference]);
    std::fs::remove_dir_all(&dir).expect("clean");
    pushed["digest"].as_str().expect("digest").to_owned()
}

fn push_schema(services: &TestServices, repository: &str, tag: &str, hcl: &str) {
    lifecycle::app::push(services, repository, tag, hcl);
}

fn v1_files() -> Vec<File> {
    vec![
        (
            1,
            "create_items",
            "CREATE TABLE items (id BIGINT PRIMARY KEY);\n".into(),
        ),
        (
            2,
            "add_name",
            "ALTER TABLE items ADD COLUMN name VARCHAR(40);\n".into(),
        ),
    ]
}

fn v2_files() -> Vec<File> {
    let mut files = v1_files();
    files.push((
        3,
        "create_orders",
        "CREATE TABLE orders (id BIGINT PRIMARY KEY);\n".into(),
    ));
    files.push((
        4,
        "add_total",
        "ALTER TABLE orders ADD COLUMN total BIGINT;\n".into(),
    ));
    files
}

/// The application side: a namespace, a fresh database, Secrets and ConfigMaps, the chart.
struct Mig {
    client: Client,
    services: TestServices,
    ns: String,
    release_ns: String,
    engine: Engine,
    host_url: String,
    password: String,
    registry: String,
    repository: String,
    migrations: Api<PtahMigration>,
}

impl Mig {
    async fn setup(engine: Engine, prefix: &str) -> Mig {
        let services = TestServices::require();
        let endpoints = pod_endpoints();
        let client = common::admin().await;
        ptah_apitests::client::install_crds(&client).await;
        let image = data_plane_image();
        let ns = common::namespace(&client, prefix).await;
        let db = ptah_testservices::unique_name("e2e").replace('-', "_");
        let (host_url, pod_url) = engine.fresh_database(&services, &db).await;
        let password = password_of(&pod_url);
        assert!(password.len() >= 8, "the scan needs a real password");
        let registry = endpoints
            .get("PTAH_POD_REGISTRY")
            .expect("PTAH_POD_REGISTRY")
            .clone();
        let repository = format!("e2e/{ns}-migrations");

        let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
        create(
            &secrets,
            json!({"metadata": {"name": "db"}, "stringData": {"url": pod_url}}),
        )
        .await;
        create(
            &secrets,
            json!({"metadata": {"name": "registry"}, "stringData": {
            "username": services.registry.username, "password": services.registry.password.expose()}}),
        )
        .await;
        pull_secret(&client, &ns, &services).await;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
        let ca = String::from_utf8(services.registry.ca_pem().expect("CA")).expect("PEM");
        create(
            &cms,
            json!({"metadata": {"name": "registry-ca"}, "immutable": true, "data": {"ca.pem": ca}}),
        )
        .await;
        create(
            &cms,
            json!({"metadata": {"name": "policy"}, "immutable": true, "data": {
            "policy.yaml": format!("version: 1\nartifact_types: [{MIGRATIONS_TYPE}, {SCHEMA_TYPE}]\n")}}),
        )
        .await;
        let release_ns = install(&client, &ns, &services, &image).await;
        let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &ns);
        Mig {
            client,
            services,
            ns,
            release_ns,
            engine,
            host_url,
            password,
            registry,
            repository,
            migrations,
        }
    }

    fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Postgres => "postgresql",
            Engine::Mariadb => "mariadb",
        }
    }

    fn oci(&self, tag: &str) -> String {
        format!("oci://{}/{}:{tag}", self.registry, self.repository)
    }

    async fn create_migration(&self, tag: &str, shared: bool) -> PtahMigration {
        create(&self.migrations, json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
            "metadata": {"name": NAME},
            "spec": {
                "target": {"engine": self.engine_name(), "coordinationKey": "orders", "sharedRealm": shared,
                           "urlFrom": {"name": "db", "key": "url"}},
                "artifact": {
                    "ociRef": self.oci(tag),
                    "registryAuthFrom": {"name": "registry"},
                    "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                    "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
                },
                "interval": "10s",
                "policy": {"apply": "OnApproval"},
                "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
            }
        }))
        .await
    }

    async fn point_at(&self, tag: &str) {
        self.migrations
            .patch(
                NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"artifact": {"ociRef": self.oci(tag)}}})),
            )
            .await
            .expect("point the migration at a new artifact");
    }

    async fn wait(&self, what: &str, pred: impl Fn(&PtahMigration) -> bool) -> PtahMigration {
        let deadline = Instant::now() + STEP;
        loop {
            let m = self
                .migrations
                .get(NAME)
                .await
                .unwrap_or_else(|e| panic!("get {NAME}: {e}"));
            if pred(&m) {
                return m;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out after {STEP:?} waiting for {what}\nstatus: {}\n{}",
                    serde_json::to_string_pretty(&m.status).unwrap_or_default(),
                    manager_story(&self.client, &self.release_ns, 60).await
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits for a plan other than `previous` awaiting approval with `pending` migrations.
    async fn wait_plan(&self, previous: Option<&str>, pending: i32) -> (PtahMigration, PtahMigrationPlan) {
        let m = self
            .wait(&format!("a new plan of {pending} pending migrations"), |m| {
                let Some(st) = &m.status else { return false };
                st.phase == Some(MigrationPhase::AwaitingApproval)
                    && st.history.as_ref().is_some_and(|h| h.pending_count == pending)
                    && st
                        .plan
                        .as_ref()
                        .is_some_and(|p| Some(p.name.as_str()) != previous)
            })
            .await;
        let plan_ref = m.status.as_ref().and_then(|s| s.plan.clone()).expect("plan");
        let plans: Api<PtahMigrationPlan> = Api::namespaced(self.client.clone(), &self.ns);
        let plan = plans.get(&plan_ref.name).await.expect("the PtahMigrationPlan");
        assert_eq!(plan.uid().as_deref(), Some(plan_ref.uid.as_str()));
        (m, plan)
    }

    /// The unprivileged person approves `plan` with kubectl.
    async fn approve(&self, m: &PtahMigration, plan: &PtahMigrationPlan) {
        let cluster = ClusterFiles::require();
        let manifest = json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationApproval",
            "metadata": {"name": format!("approve-{}", plan.name_any()), "namespace": self.ns},
            "spec": {
                "migrationRef": {"name": NAME, "uid": m.uid().expect("uid")},
                "planRef": {"name": plan.name_any(), "uid": plan.uid().expect("plan uid")},
                "planFingerprint": plan.spec.fingerprint,
            }
        });
        self.kubectl_create(&cluster, &manifest, "approval");
    }

    fn kubectl_create(&self, cluster: &ClusterFiles, manifest: &serde_json::Value, what: &str) {
        let file = workspace_root().join("target/e2e/logs").join(format!(
            "{}-{what}-{}.json",
            self.ns,
            ptah_apitests::client::unique("m")
        ));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("log dir");
        std::fs::write(&file, manifest.to_string()).expect("manifest");
        run(Command::new(kubectl())
            .env("KUBECONFIG", &cluster.user_kubeconfig)
            .arg("create")
            .arg("-f")
            .arg(&file));
    }

    async fn in_sync(&self, version: i64) -> PtahMigration {
        self.wait(&format!("InSync at version {version}"), |m| {
            m.status.as_ref().is_some_and(|st| {
                st.phase == Some(MigrationPhase::InSync)
                    && st.history.as_ref().and_then(|h| h.current_version) == Some(version)
            })
        })
        .await
    }

    /// Every Pod log, Event, the migration's status and every plan object of the namespace.
    async fn everything_said(&self) -> String {
        let mut text = String::new();
        let m = self.migrations.get(NAME).await.expect("migration");
        text.push_str(&serde_json::to_string(&m.status).unwrap_or_default());
        let plans: Api<PtahMigrationPlan> = Api::namespaced(self.client.clone(), &self.ns);
        for p in plans.list(&ListParams::default()).await.expect("plans").items {
            text.push_str(&serde_json::to_string(&p).unwrap_or_default());
        }
        for ns in [&self.ns, &self.release_ns] {
            let pods: Api<Pod> = Api::namespaced(self.client.clone(), ns);
            for pod in pods.list(&ListParams::default()).await.expect("pods").items {
                let spec = pod.spec.clone().unwrap_or_default();
                for c in spec
                    .init_containers
                    .unwrap_or_default()
                    .into_iter()
                    .chain(spec.containers)
                {
                    let params = LogParams {
                        container: Some(c.name.clone()),
                        ..LogParams::default()
                    };
                    if let Ok(log) = pods.logs(&pod.name_any(), &params).await {
                        text.push_str(&log);
                    }
                }
                text.push_str(&serde_json::to_string(&pod.status).unwrap_or_default());
            }
            let events: Api<Event> = Api::namespaced(self.client.clone(), ns);
            for e in events.list(&ListParams::default()).await.expect("events").items {
                text.push_str(e.message.as_deref().unwrap_or_default());
                text.push_str(e.reason.as_deref().unwrap_or_default());
            }
        }
        text
    }
}

async fn pull_secret(client: &Client, ns: &str, services: &TestServices) {
    let auth = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!(
            "{}:{}",
            services.registry.username,
            services.registry.password.expose()
        ),
    );
    let docker = json!({"auths": {services.registry.host.clone(): {"auth": auth}}}).to_string();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    create(
        &secrets,
        json!({"metadata": {"name": "pull"}, "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": docker}}),
    )
    .await;
}

fn helm_cmd(kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(helm());
    cmd.env("KUBECONFIG", kubeconfig);
    cmd
}

/// `helm install` scoped to `app_ns` (watch scope and webhook namespaceSelector); waits for both
/// manager replicas; binds the chart's approver role to the unprivileged user in `app_ns`.
async fn install(client: &Client, app_ns: &str, services: &TestServices, image: &str) -> String {
    let cluster = ClusterFiles::require();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            app_ns,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"ptah-e2e": app_ns}}})),
        )
        .await
        .expect("label the application namespace");
    // A release left by an earlier, aborted run holds the cluster-scoped webhook names.
    let _ = helm_cmd(&cluster.admin_kubeconfig)
        .args(["list", "-A", "-q"])
        .output()
        .map(|o| {
            for line in String::from_utf8_lossy(&o.stdout).lines() {
                if line.trim() == RELEASE {
                    eprintln!("a release {RELEASE} from an earlier run is still installed");
                }
            }
        });
    let release_ns = common::namespace(client, "ptah-system").await;
    pull_secret(client, &release_ns, services).await;
    let chart = workspace_root().join("charts/ptah-operator");
    let out = run(helm_cmd(&cluster.admin_kubeconfig)
        .args(["install", RELEASE])
        .arg(&chart)
        .args(["--namespace", &release_ns, "--wait", "--timeout", "5m"])
        .args(["--set", &format!("image.manager={}", image_reference("manager"))])
        .args([
            "--set",
            &format!("image.certRotator={}", image_reference("cert-rotator")),
        ])
        .args(["--set", &format!("image.executor={image}")])
        .args(["--set", &format!("image.runner={image}")])
        .args(["--set", "imagePullSecrets[0].name=pull"])
        .args(["--set", &format!("watchNamespace={app_ns}")])
        .args([
            "--set",
            &format!("webhooks.namespaceSelector.matchLabels.ptah-e2e={app_ns}"),
        ]));
    assert!(out.contains("STATUS: deployed"), "{out}");
    let deadline = Instant::now() + STEP;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &release_ns);
    loop {
        let ready = deployments
            .get_opt("ptah-ptah-operator-manager")
            .await
            .ok()
            .flatten()
            .and_then(|d| d.status)
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        if ready >= 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the manager never became ready\n{}",
            manager_story(client, &release_ns, 30).await
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), app_ns);
    create(&bindings, json!({
        "metadata": {"name": "approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ptah-ptah-operator-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cluster.user_name}]
    }))
    .await;
    release_ns
}

fn uninstall(release_ns: &str) {
    let cluster = ClusterFiles::require();
    run(helm_cmd(&cluster.admin_kubeconfig).args([
        "uninstall",
        RELEASE,
        "--namespace",
        release_ns,
        "--wait",
    ]));
}

/// Uninstalls the release when the test ends (also when it panics), so the next one can install.
struct Release(String);

impl Drop for Release {
    fn drop(&mut self) {
        let cluster = ClusterFiles::require();
        let _ = helm_cmd(&cluster.admin_kubeconfig)
            .args(["uninstall", RELEASE, "--namespace", &self.0, "--wait"])
            .output();
    }
}

/// Every operation Job of the namespace ever seen (the manager deletes finished Jobs), by name:
/// (operation label, owner label, creation). Polled twice a second in the background.
type Seen = std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, (String, String)>>>;

fn observe_jobs(client: &Client, ns: &str) -> Seen {
    let seen: Seen = Default::default();
    let (jobs, out): (Api<Job>, Seen) = (Api::namespaced(client.clone(), ns), seen.clone());
    tokio::spawn(async move {
        loop {
            if let Ok(list) = jobs.list(&ListParams::default()).await {
                let mut map = out.lock().expect("seen");
                for j in list.items {
                    let op = j.labels().get("operator.ptah.run/operation").cloned().unwrap_or_default();
                    let owner = j
                        .labels()
                        .get("operator.ptah.run/migration")
                        .or_else(|| j.labels().get("operator.ptah.run/schema"))
                        .cloned()
                        .unwrap_or_default();
                    map.entry(j.name_any()).or_insert((op, owner));
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
    seen
}

fn applies_of(seen: &Seen) -> BTreeSet<String> {
    seen.lock()
        .expect("seen")
        .iter()
        .filter(|(_, (o, _))| o.contains("apply"))
        .map(|(n, _)| n.clone())
        .collect()
}

fn seen_of(seen: &Seen, op: Option<&str>) -> BTreeSet<String> {
    seen.lock()
        .expect("seen")
        .iter()
        .filter(|(_, (o, _))| op.is_none_or(|want| o == want))
        .map(|(n, _)| n.clone())
        .collect()
}

fn versions(plan: &PtahMigrationPlan) -> Vec<i64> {
    plan.spec.migrations.iter().map(|m| m.version).collect()
}

async fn lifecycle(engine: Engine) {
    let app = Mig::setup(engine, "e2e-mig").await;
    let _release = Release(app.release_ns.clone());
    let seen = observe_jobs(&app.client, &app.ns);
    let t0 = Instant::now();

    // v1: two migrations pending, planned, approved by the person, applied.
    push_migrations(&app.services, &app.repository, "v1", &v1_files());
    app.create_migration("v1", false).await;
    let (m, plan) = app.wait_plan(None, 2).await;
    assert_eq!(
        versions(&plan),
        vec![1, 2],
        "the plan lists the pending migrations"
    );
    assert!(
        !app.engine.has_table(&app.host_url, "items").await,
        "nothing is applied before the approval"
    );
    assert!(applies_of(&seen).is_empty(), "no Apply Job before the approval");
    app.approve(&m, &plan).await;
    let done = app.in_sync(2).await;
    assert_eq!(
        done.status
            .as_ref()
            .and_then(|s| s.last_run.as_ref())
            .map(|r| r.outcome),
        Some(RunOutcome::Applied)
    );
    assert!(app.engine.has_table(&app.host_url, "items").await);
    eprintln!("v1 applied after {:?}", t0.elapsed());

    // v2: two more migrations → a new plan → InSync at 4.
    push_migrations(&app.services, &app.repository, "v2", &v2_files());
    app.point_at("v2").await;
    let (m, plan2) = app.wait_plan(Some(&plan.name_any()), 2).await;
    assert_eq!(versions(&plan2), vec![3, 4]);
    app.approve(&m, &plan2).await;
    app.in_sync(4).await;
    assert!(app.engine.has_table(&app.host_url, "orders").await);
    assert_eq!(applies_of(&seen).len(), 2, "one Apply per approved plan: {seen:?}");
    eprintln!("v2 applied after {:?}", t0.elapsed());

    let mut current = 4;
    let mut files = v2_files();
    if engine == Engine::Mariadb {
        // A migration failing halfway: its first DDL commits (MariaDB DDL is not transactional).
        let mut broken = files.clone();
        broken.push((
            5,
            "half",
            "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\nINSERT INTO no_such_table VALUES (1);\n".into(),
        ));
        push_migrations(&app.services, &app.repository, "v3-broken", &broken);
        app.point_at("v3-broken").await;
        let (m, plan3) = app.wait_plan(None, 1).await;
        app.approve(&m, &plan3).await;
        let blocked = app
            .wait("a Partial, unresolved run blocking the migration", |m| {
                m.status.as_ref().is_some_and(|st| {
                    st.phase == Some(MigrationPhase::Blocked)
                        && st.unresolved_run.is_some()
                        && st
                            .last_run
                            .as_ref()
                            .is_some_and(|r| r.outcome == RunOutcome::Partial)
                })
            })
            .await;
        let run_id = blocked
            .status
            .as_ref()
            .and_then(|s| s.unresolved_run.as_ref())
            .map(|r| r.operation_id.as_str().to_owned())
            .expect("unresolvedRun");
        assert!(
            app.engine.has_table(&app.host_url, "half_done").await,
            "the first DDL committed"
        );
        let applies = applies_of(&seen);
        tokio::time::sleep(Duration::from_secs(30)).await; // three intervals
        assert_eq!(
            applies_of(&seen),
            applies,
            "no Apply while the run is unresolved"
        );
        let still = app.migrations.get(NAME).await.expect("migration");
        assert_eq!(
            still.status.as_ref().and_then(|s| s.phase),
            Some(MigrationPhase::Blocked)
        );

        // A person repairs the database by hand, fixes the migration and acknowledges the run.
        app.engine
            .exec(
                &app.host_url,
                "DROP TABLE half_done; DELETE FROM schema_migrations WHERE version = 5",
            )
            .await;
        files.push((
            5,
            "half",
            "CREATE TABLE half_done (id BIGINT PRIMARY KEY);\n".into(),
        ));
        push_migrations(&app.services, &app.repository, "v3", &files);
        app.point_at("v3").await;
        let cluster = ClusterFiles::require();
        app.kubectl_create(
            &cluster,
            &json!({
                "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationRunAcknowledgment",
                "metadata": {"name": "ack-half", "namespace": app.ns},
                "spec": {"migrationRef": {"name": NAME, "uid": blocked.uid().expect("uid")}, "operationID": run_id}
            }),
            "ack",
        );
        let (m, plan4) = app.wait_plan(Some(&plan3.name_any()), 1).await;
        assert_eq!(versions(&plan4), vec![5]);
        app.approve(&m, &plan4).await;
        let done = app.in_sync(5).await;
        assert!(
            done.status
                .as_ref()
                .and_then(|s| s.resolved_run.as_ref())
                .is_some(),
            "the acknowledgment is recorded as resolvedRun"
        );
        current = 5;
        eprintln!("partial run acknowledged and repaired after {:?}", t0.elapsed());
    }

    // A modified already-applied file: Blocked on HistoryModified, no Job beyond History.
    let mut modified = files.clone();
    modified[0].2 = "CREATE TABLE items (id BIGINT PRIMARY KEY, extra INT);\n".into();
    push_migrations(&app.services, &app.repository, "v-modified", &modified);
    let before = seen_of(&seen, None);
    app.point_at("v-modified").await;
    app.wait("Blocked with reason HistoryModified", |m| {
        m.status.as_ref().is_some_and(|st| {
            st.phase == Some(MigrationPhase::Blocked)
                && st.conditions.iter().any(|c| c.reason == "HistoryModified")
        })
    })
    .await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    let new: Vec<String> = seen
        .lock()
        .expect("seen")
        .iter()
        .filter(|(n, _)| !before.contains(*n))
        .filter(|(_, (op, _))| !op.contains("history") && !matches!(op.as_str(), "resolve" | "verify"))
        .map(|(n, (op, _))| format!("{n} ({op})"))
        .collect();
    assert!(new.is_empty(), "Jobs beyond History while blocked: {new:?}");
    let blocked = app.migrations.get(NAME).await.expect("migration");
    assert_eq!(
        blocked
            .status
            .as_ref()
            .and_then(|s| s.history.as_ref())
            .map(|h| h.modified_versions.clone()),
        Some(vec![1])
    );
    assert_eq!(
        blocked
            .status
            .as_ref()
            .and_then(|s| s.history.as_ref())
            .and_then(|h| h.current_version),
        Some(current)
    );

    let said = app.everything_said().await;
    assert!(said.len() > 1000, "the scan read the run's output");
    assert!(
        !said.contains(&app.password),
        "the database password appeared in a log, Event, status or plan"
    );
    eprintln!("migrations lifecycle done after {:?}", t0.elapsed());
    uninstall(&app.release_ns);
    let _ = push_schema; // used by the shared-realm case
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_migrations_postgresql_lifecycle() {
    lifecycle(Engine::Postgres).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_migrations_mysql_lifecycle() {
    lifecycle(Engine::Mariadb).await;
}
