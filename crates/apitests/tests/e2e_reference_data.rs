//! T4 (`e2e_reference_data_<engine>_…`, phases `reference-data-postgresql` and
//! `reference-data-mysql` of the suites `migrations-postgresql` / `migrations-mysql`): reference
//! rows declared in a schema (`data { key = …, rows = […] }`) on the full local cluster with the
//! manager installed by `helm install`.
//!
//! The PtahSchema's desired schema declares a table with two reference rows; a person approves
//! the plan with kubectl → the rows are inserted and the schema is InSync. Then one row is
//! changed out of band; the next Observe reports it in `status.target.driftFindings` as
//! `data_rows_updated`; a new plan is approved → the row reads back as declared and InSync.
//! No row value (keys and values are distinctive `refval-7f3a…` strings) appears in any status,
//! condition message or Event of the namespace; the plan chunks, which are the plan, may hold
//! them (reported, not asserted).

mod common;
mod lifecycle;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{ConfigMap, Event, Pod, Secret};
use kube::{
    Api, Client, ResourceExt,
    api::{ListParams, LogParams},
};
use lifecycle::app::{Engine, password_of, push};
use ptah_api::{
    PtahSchema, PtahSchemaApproval, PtahSchemaPlan, PtahSchemaPlanChunk,
    schema::{DriftCategory, SchemaPhase},
};
use ptah_apitests::{
    ClusterFiles,
    e2e::{create, data_plane_image, kubectl, pod_endpoints},
    release::{self, Release, manager_story, pull_secret},
};
use serde_json::json;

const STEP: Duration = Duration::from_secs(300);
const NAME: &str = "settings";
const SCHEMA_TYPE: &str = "application/vnd.stokaro.ptah.schema.v1";

/// The declared rows: (key, value). Every string is distinctive, so a leak is unambiguous.
const ROWS: [(&str, &str); 2] = [
    ("refkey-7f3a91-a", "refval-7f3a91c2-alpha"),
    ("refkey-7f3a91-b", "refval-7f3a91c2-beta"),
];
/// What the out-of-band change writes into the second row.
const TAMPERED: &str = "refval-7f3a91c2-tampered";

fn schema_hcl(engine: Engine) -> String {
    let (header, attach) = match engine {
        Engine::Postgres => ("schema \"public\" {}\n\n", "  schema = schema.public\n"),
        Engine::Mariadb => ("", ""),
    };
    let rows: Vec<String> = ROWS
        .iter()
        .map(|(k, v)| format!("{{ code = \"{k}\", label = \"{v}\" }}"))
        .collect();
    format!(
        "{header}table \"{NAME}\" {{\n{attach}  column \"code\" {{\n    type = varchar(32)\n  }}\n  column \"label\" {{\n    type = varchar(80)\n  }}\n  primary_key {{\n    columns = [column.code]\n  }}\n  data {{\n    key = [column.code]\n    rows = [{}]\n  }}\n}}\n",
        rows.join(", ")
    )
}

/// The rows of the table as the database has them, sorted by key.
async fn read_rows(engine: Engine, url: &str) -> Vec<(String, String)> {
    let sql = format!("SELECT code, label FROM {NAME} ORDER BY code");
    match engine {
        Engine::Postgres => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .expect("connect");
            tokio::spawn(conn);
            client
                .query(&sql, &[])
                .await
                .expect("select rows")
                .iter()
                .map(|r| (r.get::<_, String>(0), r.get::<_, String>(1)))
                .collect()
        }
        Engine::Mariadb => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(url).await.expect("connect");
            conn.query::<(String, String), _>(sql).await.expect("select rows")
        }
    }
}

fn declared() -> Vec<(String, String)> {
    ROWS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

struct Ref {
    client: Client,
    ns: String,
    release_ns: String,
    engine: Engine,
    host_url: String,
    schemas: Api<PtahSchema>,
}

impl Ref {
    async fn setup(engine: Engine) -> (Ref, Release) {
        let services = ptah_testservices::TestServices::require();
        let endpoints = pod_endpoints();
        let client = common::admin().await;
        ptah_apitests::client::install_crds(&client).await;
        let image = data_plane_image();
        let ns = common::namespace(&client, "e2e-refdata").await;
        let db = ptah_testservices::unique_name("e2e").replace('-', "_");
        let (host_url, pod_url) = engine.fresh_database(&services, &db).await;
        assert!(password_of(&pod_url).len() >= 8);
        let registry = endpoints
            .get("PTAH_POD_REGISTRY")
            .expect("PTAH_POD_REGISTRY")
            .clone();
        let repository = format!("e2e/{ns}-refdata");
        push(&services, &repository, "v1", &schema_hcl(engine));

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
            "policy.yaml": format!("version: 1\nartifact_types: [{SCHEMA_TYPE}]\n")}}),
        )
        .await;
        let release_ns = release::install(&client, &ns, &services, &image, &[]).await;
        let guard = Release(release_ns.clone());
        let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
        let engine_name = if engine == Engine::Postgres {
            "PostgreSQL"
        } else {
            "MySQL"
        };
        create(&schemas, json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
            "metadata": {"name": NAME},
            "spec": {
                "target": {"engine": engine_name, "coordinationKey": "settings", "urlFrom": {"name": "db", "key": "url"}},
                "desired": {
                    "ociRef": format!("oci://{registry}/{repository}:v1"),
                    "registryAuthFrom": {"name": "registry"},
                    "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                    "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
                },
                "interval": "10s",
                "policy": {"apply": "OnApproval"},
                "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
            }
        }))
        .await;
        (
            Ref {
                client,
                ns,
                release_ns,
                engine,
                host_url,
                schemas,
            },
            guard,
        )
    }

    async fn wait(&self, what: &str, pred: impl Fn(&PtahSchema) -> bool) -> PtahSchema {
        let deadline = Instant::now() + STEP;
        loop {
            let s = self
                .schemas
                .get(NAME)
                .await
                .unwrap_or_else(|e| panic!("get {NAME}: {e}"));
            if pred(&s) {
                return s;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out after {STEP:?} waiting for {what}\nstatus: {}\n{}",
                    serde_json::to_string_pretty(&s.status).unwrap_or_default(),
                    manager_story(&self.client, &self.release_ns, 60).await
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Waits for a plan other than `previous` awaiting approval.
    async fn wait_plan(&self, previous: Option<&str>) -> PtahSchema {
        self.wait("a new plan awaiting approval", |s| {
            s.status.as_ref().is_some_and(|st| {
                st.phase == Some(SchemaPhase::AwaitingApproval)
                    && st
                        .plan
                        .as_ref()
                        .is_some_and(|p| Some(p.name.as_str()) != previous)
            })
        })
        .await
    }

    /// The unprivileged person approves the schema's current plan with kubectl.
    fn approve(&self, s: &PtahSchema) -> String {
        let cluster = ClusterFiles::require();
        let plan = s.status.as_ref().and_then(|st| st.plan.clone()).expect("plan");
        let manifest = json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
            "metadata": {"name": format!("approve-{}", plan.name), "namespace": self.ns},
            "spec": {
                "schemaRef": {"name": NAME, "uid": s.uid().expect("uid")},
                "planRef": {"name": plan.name, "uid": plan.uid},
                "planFingerprint": plan.fingerprint,
            }
        });
        let file = ptah_apitests::e2e_log_file(&format!(
            "{}-approval-{}.json",
            self.ns,
            ptah_apitests::client::unique("a")
        ));
        std::fs::create_dir_all(file.parent().expect("dir")).expect("log dir");
        std::fs::write(&file, manifest.to_string()).expect("manifest");
        release::run(
            Command::new(kubectl())
                .env("KUBECONFIG", &cluster.user_kubeconfig)
                .arg("create")
                .arg("-f")
                .arg(&file),
        );
        plan.name
    }

    async fn in_sync_after(&self, plan: &str) -> PtahSchema {
        self.wait(&format!("InSync with plan {plan} applied"), |s| {
            s.status.as_ref().is_some_and(|st| {
                st.phase == Some(SchemaPhase::InSync)
                    && st.applied.as_ref().is_some_and(|a| a.plan_ref.name == plan)
            })
        })
        .await
    }

    /// Every status (schemas, plans, approvals), condition message and Event of the namespace:
    /// what must never carry a row value.
    async fn statuses_and_events(&self) -> String {
        let mut text = String::new();
        for s in self
            .schemas
            .list(&ListParams::default())
            .await
            .expect("schemas")
            .items
        {
            text.push_str(&serde_json::to_string(&s.status).unwrap_or_default());
        }
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), &self.ns);
        for p in plans.list(&ListParams::default()).await.expect("plans").items {
            text.push_str(&serde_json::to_string(&p.status).unwrap_or_default());
        }
        let approvals: Api<PtahSchemaApproval> = Api::namespaced(self.client.clone(), &self.ns);
        for a in approvals
            .list(&ListParams::default())
            .await
            .expect("approvals")
            .items
        {
            text.push_str(&serde_json::to_string(&a.status).unwrap_or_default());
        }
        for ns in [&self.ns, &self.release_ns] {
            let events: Api<Event> = Api::namespaced(self.client.clone(), ns);
            for e in events.list(&ListParams::default()).await.expect("events").items {
                text.push_str(e.message.as_deref().unwrap_or_default());
                text.push_str(e.reason.as_deref().unwrap_or_default());
            }
            let ev2: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(self.client.clone(), ns);
            for e in ev2.list(&ListParams::default()).await.expect("events").items {
                text.push_str(e.note.as_deref().unwrap_or_default());
            }
        }
        text
    }

    /// The plan objects' specs and their chunks' bytes (the plan itself).
    async fn plan_documents(&self) -> String {
        let mut text = String::new();
        let plans: Api<PtahSchemaPlan> = Api::namespaced(self.client.clone(), &self.ns);
        for p in plans.list(&ListParams::default()).await.expect("plans").items {
            text.push_str(&serde_json::to_string(&p.spec).unwrap_or_default());
        }
        let chunks: Api<PtahSchemaPlanChunk> = Api::namespaced(self.client.clone(), &self.ns);
        for c in chunks.list(&ListParams::default()).await.expect("chunks").items {
            text.push_str(&String::from_utf8_lossy(&c.spec.data.0.0));
        }
        text
    }

    /// Every Pod log of both namespaces, by `namespace/pod/container`.
    async fn pod_logs(&self) -> Vec<(String, String)> {
        let mut text = Vec::new();
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
                        text.push((format!("{ns}/{}/{}", pod.name_any(), c.name), log));
                    }
                }
            }
        }
        text
    }
}

fn row_categories(s: &PtahSchema) -> Vec<(DriftCategory, i32)> {
    s.status
        .as_ref()
        .and_then(|st| st.target.as_ref())
        .map(|t| {
            t.drift_findings
                .iter()
                .filter(|f| {
                    matches!(
                        f.category,
                        DriftCategory::DataRowsUpdated
                            | DriftCategory::DataRowsInserted
                            | DriftCategory::DataRowsDeleted
                    )
                })
                .map(|f| (f.category, f.count))
                .collect()
        })
        .unwrap_or_default()
}

async fn reference_data(engine: Engine) {
    let t0 = Instant::now();
    let (app, _release) = Ref::setup(engine).await;

    // The declared rows are planned, approved by the person, inserted.
    let s = app.wait_plan(None).await;
    let first = app.approve(&s);
    app.in_sync_after(&first).await;
    assert_eq!(
        read_rows(engine, &app.host_url).await,
        declared(),
        "the approved Apply inserted the declared rows"
    );
    eprintln!("rows inserted, InSync after {:?}", t0.elapsed());

    // One row changed out of band.
    let quote = |v: &str| format!("'{v}'");
    app.engine
        .exec(
            &app.host_url,
            &format!(
                "UPDATE {NAME} SET label = {} WHERE code = {}",
                quote(TAMPERED),
                quote(ROWS[1].0)
            ),
        )
        .await;
    let changed = Instant::now();
    let drifted = app
        .wait("data_rows_updated in status.target.driftFindings", |s| {
            row_categories(s)
                .iter()
                .any(|(c, n)| *c == DriftCategory::DataRowsUpdated && *n >= 1)
        })
        .await;
    let categories = row_categories(&drifted);
    assert_eq!(
        categories,
        vec![(DriftCategory::DataRowsUpdated, 1)],
        "exactly the one updated row is reported"
    );
    eprintln!(
        "drift {categories:?} observed {:?} after the change",
        changed.elapsed()
    );

    // A new plan repairs it once approved.
    let s = app.wait_plan(Some(&first)).await;
    let second = app.approve(&s);
    let done = app.in_sync_after(&second).await;
    assert_eq!(
        read_rows(engine, &app.host_url).await,
        declared(),
        "the repaired row reads back as declared"
    );
    assert!(
        row_categories(&done).is_empty(),
        "the proof's Observe found no row drift: {:?}",
        row_categories(&done)
    );
    eprintln!("row repaired, InSync after {:?}", t0.elapsed());

    // No row value in any status, condition message or Event.
    let said = app.statuses_and_events().await;
    assert!(said.len() > 500, "the scan read the statuses");
    let values: Vec<&str> = ROWS
        .iter()
        .flat_map(|(k, v)| [*k, *v])
        .chain([TAMPERED])
        .collect();
    for v in &values {
        assert!(
            !said.contains(v),
            "row value {v} appeared in a status, condition message or Event"
        );
    }
    let plans = app.plan_documents().await;
    let logs = app.pod_logs().await;
    let in_plans: Vec<&&str> = values.iter().filter(|v| plans.contains(**v)).collect();
    let in_logs: Vec<&String> = logs
        .iter()
        .filter(|(_, log)| values.iter().any(|v| log.contains(v)))
        .map(|(name, _)| name)
        .collect();
    eprintln!(
        "row values in the plan objects/chunks (the plan itself): {in_plans:?}; Pod logs holding one: {in_logs:?}"
    );
    // Durable delivery (the default) carries plans and Observe results over mutual TLS into
    // result records: no Pod log, the manager's included, may hold a declared or drifted value.
    if ptah_apitests::resultdelivery::durable() {
        assert!(
            in_logs.is_empty(),
            "a row value reached a Pod log with durable delivery: {in_logs:?}"
        );
    }
    release::uninstall(&app.release_ns);
    eprintln!("reference-data done after {:?}", t0.elapsed());
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_reference_data_postgresql_rows_inserted_drift_repaired() {
    reference_data(Engine::Postgres).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_reference_data_mysql_rows_inserted_drift_repaired() {
    reference_data(Engine::Mariadb).await;
}
