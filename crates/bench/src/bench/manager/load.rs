//! The load the manager is measured under: namespaces whose Pods a quota forbids (so a Job is
//! created and never runs, on the API tier and on a full cluster alike), PtahSchemas and
//! PtahMigrations each with its own realm, unrelated ConfigMaps, and published plans.

use std::collections::BTreeMap;

use anyhow::Context;
use futures_util::{StreamExt, TryStreamExt, stream};
use k8s_openapi::{
    ByteString,
    api::core::v1::{ConfigMap, Namespace, ResourceQuota},
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams, PostParams},
};
use ptah_api::{PtahMigration, PtahSchema};
use serde_json::json;

/// How many API writes are in flight at once while loading.
const PARALLEL: usize = 16;

/// The field manager of the bench's own writes.
pub(super) const FIELD_MANAGER: &str = "ptah-bench";

/// What to create.
#[derive(Clone, Debug)]
pub(super) struct Load {
    /// Prefix of every namespace of this load.
    pub(super) prefix: String,
    /// Namespaces the resources spread over.
    pub(super) namespaces: usize,
    /// PtahSchemas.
    pub(super) schemas: usize,
    /// PtahMigrations.
    pub(super) migrations: usize,
    /// Unrelated ConfigMaps.
    pub(super) configmaps: usize,
    /// Bytes of each unrelated ConfigMap.
    pub(super) configmap_bytes: usize,
    /// Published plans (one per PtahSchema, the first ones).
    pub(super) plans: usize,
    /// Bytes of each plan.
    pub(super) plan_bytes: usize,
}

impl Load {
    /// The namespace of the `i`th object.
    pub(super) fn namespace(&self, i: usize) -> String {
        format!("{}-{:02}", self.prefix, i % self.namespaces)
    }

    /// The coordination namespace of the manager measured under this load.
    pub(super) fn coordination(&self) -> String {
        format!("{}-system", self.prefix)
    }
}

/// Applies the CRDs and waits until they are served.
pub(super) async fn install_crds(client: &Client) -> anyhow::Result<()> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for crd in ptah_api::crds().context("generating the CRDs")? {
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.patch(&name, &params, &Patch::Apply(&crd))
            .await
            .with_context(|| format!("applying CRD {name}"))?;
    }
    // Served once the next list of a kind succeeds.
    for _ in 0..100 {
        let schemas: Api<PtahSchema> = Api::all(client.clone());
        let migrations: Api<PtahMigration> = Api::all(client.clone());
        let lp = kube::api::ListParams::default().limit(1);
        if schemas.list(&lp).await.is_ok() && migrations.list(&lp).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    anyhow::bail!("the ptah CRDs are not served after 20 s")
}

/// Creates the namespaces, each with its quota and verification policy.
pub(super) async fn namespaces(client: &Client, load: &Load) -> anyhow::Result<()> {
    let names: Vec<String> = (0..load.namespaces)
        .map(|i| load.namespace(i))
        .chain([load.coordination()])
        .collect();
    let api: Api<Namespace> = Api::all(client.clone());
    stream::iter(names)
        .map(|ns| {
            let api = api.clone();
            let client = client.clone();
            async move {
                let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}}))?;
                api.create(&PostParams::default(), &namespace)
                    .await
                    .with_context(|| format!("creating namespace {ns}"))?;
                // No Pod may start here: a full cluster's Job controller then leaves the Jobs
                // as the API tier does, created and never run.
                let quota: ResourceQuota = serde_json::from_value(json!({
                    "metadata": {"name": "no-pods"},
                    "spec": {"hard": {"pods": "0"}}
                }))?;
                Api::<ResourceQuota>::namespaced(client.clone(), &ns)
                    .create(&PostParams::default(), &quota)
                    .await
                    .with_context(|| format!("creating the quota of {ns}"))?;
                let policy: ConfigMap = serde_json::from_value(json!({
                    "metadata": {"name": "policy", "labels": {ptah_api::VERIFICATION_POLICY_LABEL: "true"}},
                    "immutable": true,
                    "data": {"policy.yaml": "version: 1\nartifact_types: [application/vnd.stokaro.ptah.schema.v1]\n"}
                }))?;
                Api::<ConfigMap>::namespaced(client, &ns)
                    .create(&PostParams::default(), &policy)
                    .await
                    .with_context(|| format!("creating the policy of {ns}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(PARALLEL)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// The `i`th PtahSchema's manifest, with the artifact tag `tag`.
pub(super) fn schema(load: &Load, i: usize, tag: &str) -> serde_json::Value {
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": format!("schema-{i:05}"), "namespace": load.namespace(i)},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": format!("realm-s{i:05}"),
                       "urlFrom": {"name": "db", "key": "url"}},
            "desired": {"ociRef": format!("oci://registry.invalid/bench/schema-{i:05}:{tag}"),
                        "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    })
}

fn migration(load: &Load, i: usize) -> serde_json::Value {
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": format!("migration-{i:05}"), "namespace": load.namespace(i)},
        "spec": {
            "target": {"engine": "MySQL", "coordinationKey": format!("realm-m{i:05}"),
                       "urlFrom": {"name": "db", "key": "url"}},
            "artifact": {"ociRef": format!("oci://registry.invalid/bench/migration-{i:05}:v1"),
                         "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}},
            "interval": "10m",
            "policy": {"apply": "OnApproval"}
        }
    })
}

/// Creates the PtahSchemas and PtahMigrations; returns the PtahSchemas.
pub(super) async fn resources(client: &Client, load: &Load) -> anyhow::Result<Vec<PtahSchema>> {
    let schemas = stream::iter(0..load.schemas)
        .map(|i| {
            let client = client.clone();
            async move {
                let s: PtahSchema = serde_json::from_value(schema(load, i, "v1"))?;
                Api::<PtahSchema>::namespaced(client, &load.namespace(i))
                    .create(&PostParams::default(), &s)
                    .await
                    .with_context(|| format!("creating PtahSchema {i}"))
            }
        })
        .buffer_unordered(PARALLEL)
        .try_collect::<Vec<_>>()
        .await?;
    stream::iter(0..load.migrations)
        .map(|i| {
            let client = client.clone();
            async move {
                let m: PtahMigration = serde_json::from_value(migration(load, i))?;
                Api::<PtahMigration>::namespaced(client, &load.namespace(i))
                    .create(&PostParams::default(), &m)
                    .await
                    .with_context(|| format!("creating PtahMigration {i}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(PARALLEL)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(schemas)
}

/// Creates the unrelated ConfigMaps, as an application's would be (no ptah label).
pub(super) async fn configmaps(client: &Client, load: &Load) -> anyhow::Result<()> {
    let value = "x".repeat(load.configmap_bytes);
    stream::iter(0..load.configmaps)
        .map(|i| {
            let client = client.clone();
            let value = value.clone();
            async move {
                let cm = ConfigMap {
                    metadata: kube::api::ObjectMeta {
                        name: Some(format!("app-config-{i:05}")),
                        labels: Some(BTreeMap::from([("app".to_owned(), "unrelated".to_owned())])),
                        ..Default::default()
                    },
                    binary_data: Some(BTreeMap::from([(
                        "blob".to_owned(),
                        ByteString(value.into_bytes()),
                    )])),
                    ..Default::default()
                };
                Api::<ConfigMap>::namespaced(client, &load.namespace(i))
                    .create(&PostParams::default(), &cm)
                    .await
                    .with_context(|| format!("creating ConfigMap {i}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(PARALLEL)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Publishes a plan of `plan_bytes` for each of the first `plans` PtahSchemas, as the manager
/// would (plan object, chunks, `Ready`).
pub(super) async fn plans(client: &Client, load: &Load, schemas: &[PtahSchema]) -> anyhow::Result<()> {
    let store = ptah_planstore::PlanStore::new(client.clone()).with_field_manager(FIELD_MANAGER);
    stream::iter(schemas.iter().take(load.plans).enumerate())
        .map(|(i, schema)| {
            let store = store.clone();
            async move {
                let line = format!("ALTER TABLE orders_{i} ADD COLUMN note text;\n");
                let bytes: Vec<u8> = line.bytes().cycle().take(load.plan_bytes).collect();
                store
                    .publish(
                        schema,
                        ptah_apitests::fixtures::schema_plan_spec(1, false),
                        &bytes,
                    )
                    .await
                    .with_context(|| format!("publishing plan {i}"))?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(4)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// Deletes every namespace of the load and waits (up to `timeout`) until none of its PtahSchemas
/// and PtahMigrations is left. Call it while the manager still runs: only a manager releases
/// their finalizers, once the namespace's Jobs are gone.
pub(super) async fn delete(client: &Client, load: &Load, timeout: std::time::Duration) {
    let api: Api<Namespace> = Api::all(client.clone());
    for ns in (0..load.namespaces)
        .map(|i| load.namespace(i))
        .chain([load.coordination()])
    {
        let _ = api.delete(&ns, &DeleteParams::background()).await;
    }
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        match owners(client).await {
            Ok(namespaces) if !namespaces.iter().any(|ns| ns.starts_with(&load.prefix)) => return,
            _ => tokio::time::sleep(std::time::Duration::from_secs(2)).await,
        }
    }
    eprintln!("  warning: resources of {} are still being deleted", load.prefix);
}

/// The namespaces that hold a PtahSchema or a PtahMigration.
pub(super) async fn owners(client: &Client) -> anyhow::Result<std::collections::BTreeSet<String>> {
    let lp = kube::api::ListParams::default();
    let schemas = Api::<PtahSchema>::all(client.clone()).list_metadata(&lp).await?;
    let migrations = Api::<PtahMigration>::all(client.clone())
        .list_metadata(&lp)
        .await?;
    Ok(schemas
        .items
        .iter()
        .filter_map(|s| s.metadata.namespace.clone())
        .chain(
            migrations
                .items
                .iter()
                .filter_map(|m| m.metadata.namespace.clone()),
        )
        .collect())
}

/// Refuses a cluster that holds PtahSchemas or PtahMigrations already: the manager under test
/// watches every namespace, so it would reconcile them too (and fight their own operator).
pub(super) async fn refuse_foreign(client: &Client) -> anyhow::Result<()> {
    let namespaces = owners(client).await?;
    if namespaces.is_empty() {
        return Ok(());
    }
    let shown: Vec<&String> = namespaces.iter().take(5).collect();
    anyhow::bail!(
        "{} namespaces hold PtahSchemas or PtahMigrations already ({shown:?}…): the measured manager \
         watches every namespace and would reconcile them too. Run the bench on a cluster of its own \
         (`cargo xtask cluster down && cargo xtask cluster up --tier api`) or delete them first",
        namespaces.len()
    )
}
