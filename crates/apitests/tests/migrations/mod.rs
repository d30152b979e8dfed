//! The migration suites' support: the application namespace and database, the chart installed
//! by helm, artifacts pushed with `ptah`, approvals made with kubectl, and observers of Jobs.

// Each suite that includes this module uses a different part of it.
#![allow(dead_code, unused_imports)]

mod observe;
mod release;

pub(crate) use observe::*;
pub(crate) use release::*;

use std::{
    process::Command,
    time::{Duration, Instant},
};

pub(crate) use crate::lifecycle::app::{Engine, password_of};
use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod, Secret};
use kube::{
    Api, Client, ResourceExt,
    api::{ListParams, LogParams, Patch, PatchParams},
};
use ptah_api::{PtahMigration, PtahMigrationPlan, migration::MigrationPhase};
use ptah_apitests::{
    ClusterFiles,
    e2e::{build_bin, create, data_plane_image, host_ptah, kubectl, pod_endpoints},
};
use ptah_testservices::TestServices;
use serde_json::json;

pub(crate) const STEP: Duration = Duration::from_secs(300);
pub(crate) const NAME: &str = "billing";
pub(crate) const MIGRATIONS_TYPE: &str = "application/vnd.stokaro.ptah.migrations.v1";
pub(crate) const SCHEMA_TYPE: &str = "application/vnd.stokaro.ptah.schema.v1";

/// One migration file pair: (version, description, up SQL).
pub(crate) type File = (u32, &'static str, String);

/// Writes a migration directory, hashes it (`ptah.sum`) and pushes it as `tag`.
pub(crate) fn push_migrations(
    services: &TestServices,
    repository: &str,
    tag: &str,
    files: &[File],
) -> String {
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

pub(crate) fn push_schema(services: &TestServices, repository: &str, tag: &str, hcl: &str) {
    crate::lifecycle::app::push(services, repository, tag, hcl);
}

pub(crate) fn v1_files() -> Vec<File> {
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

pub(crate) fn v2_files() -> Vec<File> {
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
pub(crate) struct Mig {
    pub(crate) client: Client,
    pub(crate) services: TestServices,
    pub(crate) ns: String,
    pub(crate) release_ns: String,
    pub(crate) engine: Engine,
    pub(crate) host_url: String,
    pub(crate) password: String,
    pub(crate) registry: String,
    pub(crate) repository: String,
    pub(crate) migrations: Api<PtahMigration>,
}

impl Mig {
    pub(crate) async fn setup(engine: Engine, prefix: &str) -> Mig {
        let services = TestServices::require();
        let endpoints = pod_endpoints();
        let client = crate::common::admin().await;
        ptah_apitests::client::install_crds(&client).await;
        let image = data_plane_image();
        let ns = crate::common::namespace(&client, prefix).await;
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
        ptah_apitests::release::registry_secret(&client, &ns, &services, &registry).await;
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

    pub(crate) fn engine_name(&self) -> &'static str {
        match self.engine {
            Engine::Postgres => "postgresql",
            Engine::Mariadb => "mariadb",
        }
    }

    pub(crate) fn oci(&self, tag: &str) -> String {
        format!("oci://{}/{}:{tag}", self.registry, self.repository)
    }

    /// The PtahMigration `billing` (OnApproval, every 10 s) of artifact `tag`.
    pub(crate) fn manifest(&self, tag: &str, shared: bool) -> serde_json::Value {
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
            "metadata": {"name": NAME, "namespace": self.ns},
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
        })
    }

    pub(crate) async fn create_migration(&self, tag: &str, shared: bool) -> PtahMigration {
        create(&self.migrations, self.manifest(tag, shared)).await
    }

    /// Waits for a run that failed halfway: Blocked, the last run Partial and unresolved.
    pub(crate) async fn wait_partial(&self) -> PtahMigration {
        self.wait(
            "a Partial, unresolved run blocking the migration",
            ptah_apitests::fixtures::partial_unresolved,
        )
        .await
    }

    pub(crate) async fn point_at(&self, tag: &str) {
        self.migrations
            .patch(
                NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"artifact": {"ociRef": self.oci(tag)}}})),
            )
            .await
            .expect("point the migration at a new artifact");
    }

    pub(crate) async fn wait(&self, what: &str, pred: impl Fn(&PtahMigration) -> bool) -> PtahMigration {
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
    pub(crate) async fn wait_plan(
        &self,
        previous: Option<&str>,
        pending: i32,
    ) -> (PtahMigration, PtahMigrationPlan) {
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

    /// The unprivileged person approves `plan` with kubectl, as a person would: when the
    /// migration is waiting for it. Every interval the migration re-resolves its tag and leaves
    /// AwaitingApproval for a moment, and the webhook refuses an approval then ("not waiting for
    /// a decision"); such a refusal is retried once the plan waits again.
    pub(crate) async fn approve(&self, m: &PtahMigration, plan: &PtahMigrationPlan) {
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
        let plan_uid = plan.uid().expect("plan uid");
        let deadline = Instant::now() + STEP;
        loop {
            self.wait("the plan awaiting its approval", |m| {
                m.status.as_ref().is_some_and(|st| {
                    st.phase == Some(MigrationPhase::AwaitingApproval)
                        && st.plan.as_ref().is_some_and(|p| p.uid == plan_uid)
                })
            })
            .await;
            match self.try_kubectl_create(&cluster, &manifest, "approval") {
                Ok(_) => return,
                Err(e) if e.contains("not waiting for a decision") && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => panic!("approving {}: {e}", plan.name_any()),
            }
        }
    }

    pub(crate) fn kubectl_create(&self, cluster: &ClusterFiles, manifest: &serde_json::Value, what: &str) {
        if let Err(e) = self.try_kubectl_create(cluster, manifest, what) {
            panic!("kubectl create ({what}): {e}");
        }
    }

    /// `kubectl create -f` of `manifest` as the unprivileged person: its output, or its error.
    fn try_kubectl_create(
        &self,
        cluster: &ClusterFiles,
        manifest: &serde_json::Value,
        what: &str,
    ) -> Result<String, String> {
        let file = ptah_apitests::e2e_log_file(&format!(
            "{}-{what}-{}.json",
            self.ns,
            ptah_apitests::client::unique("m")
        ));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("log dir");
        std::fs::write(&file, manifest.to_string()).expect("manifest");
        let out = Command::new(kubectl())
            .env("KUBECONFIG", &cluster.user_kubeconfig)
            .arg("create")
            .arg("-f")
            .arg(&file)
            .output()
            .map_err(|e| format!("run kubectl: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    pub(crate) async fn in_sync(&self, version: i64) -> PtahMigration {
        self.wait(&format!("InSync at version {version}"), |m| {
            m.status.as_ref().is_some_and(|st| {
                st.phase == Some(MigrationPhase::InSync)
                    && st.history.as_ref().and_then(|h| h.current_version) == Some(version)
            })
        })
        .await
    }

    /// Every Pod log, Event, the migration's status and every plan object of the namespace.
    pub(crate) async fn everything_said(&self) -> String {
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
