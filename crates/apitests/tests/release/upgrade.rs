//! The upgrade phase's fixtures: the previous release's CRDs, a second schema and a migration.

use std::time::{Duration, Instant};

use k8s_openapi::{
    api::{
        apps::v1::Deployment,
        core::v1::{ConfigMap, Pod, Secret},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, ResourceExt,
    api::{ListParams, LogParams, PostParams},
};
use ptah_api::{
    CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION_ANNOTATION, PtahMigration, PtahMigrationPlan,
    PtahSchema, migration::MigrationPhase,
};
use ptah_apitests::{e2e::create, release::ChartSource};
use serde_json::json;

use crate::{
    lifecycle::{Diagnose, InCluster, app::App},
    migrations::{self, push_migrations, v1_files},
};

use super::STEP;

/// Sets every CRD to the previous release's (spec and identity), as a cluster running it has them.
pub(crate) async fn previous_crds(client: &Client, source: &ChartSource) {
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
pub(crate) async fn crds_are_heads(client: &Client) -> Result<(), String> {
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
pub(crate) async fn billing(app: &App, manager: &InCluster) -> Api<PtahMigration> {
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

pub(crate) fn migration_in_sync(m: &PtahMigration) -> bool {
    m.status.as_ref().is_some_and(|st| {
        st.phase == Some(MigrationPhase::InSync)
            && st.history.as_ref().and_then(|h| h.current_version) == Some(2)
    })
}

pub(crate) async fn wait_migration(
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
            manager.diagnose()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A second PtahSchema `pending` on a database of its own, left awaiting approval.
pub(crate) async fn pending_schema(app: &App) {
    app.sibling_schema("pending", |_| {}).await;
}

/// The manager Deployment's container image.
pub(crate) async fn manager_image(client: &Client, release_ns: &str) -> String {
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
pub(crate) async fn hook_logs(client: &Client, release_ns: &str) -> String {
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

/// A PtahSchema `legacy` whose registry Secret is one of an earlier release: credentials without
/// the `registry` key that grants them. Created after the upgrade, it must be refused by name
/// (docs/operations.md says how to add the key before upgrading), never sent.
pub(crate) async fn legacy_secret_schema(app: &App) {
    let secrets: Api<Secret> = Api::namespaced(app.client.clone(), &app.ns);
    create(
        &secrets,
        json!({"metadata": {"name": "registry-legacy"}, "stringData": {
            "username": app.services.registry.username, "password": app.services.registry.password.expose()}}),
    )
    .await;
    app.sibling_schema("legacy", |spec| {
        if let Some(auth) = spec.desired.registry_auth_from.as_mut() {
            auth.name = "registry-legacy".to_owned();
        }
    })
    .await;
}

/// Whether `s` was refused for a registry Secret that grants no registry, naming the key to add.
pub(crate) fn refused_for_the_missing_grant(s: &PtahSchema) -> bool {
    s.status.as_ref().is_some_and(|st| {
        st.conditions.iter().any(|c| {
            c.type_ == "ReconciliationFailed"
                && c.reason == "RegistryAuthorityMismatch"
                && c.message.contains("add the key registry")
        })
    })
}
