//! Running both controllers over one shared context: the PtahSchema and the PtahMigration
//! watches, their owned Jobs and plans, their operation Pods' ends, and the decision objects that
//! wake them.

use std::sync::Arc;

use futures_util::StreamExt;
use k8s_openapi::api::{batch::v1::Job, core::v1::Pod};
use kube::{
    Api, ResourceExt,
    runtime::{
        Controller, WatchStreamExt,
        reflector::{self, ObjectRef},
        watcher::{self, watcher},
    },
};
use ptah_api::{
    PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahMigrationRunAcknowledgment, PtahSchema,
    PtahSchemaApproval, PtahSchemaPlan,
};
use serde::de::DeserializeOwned;
use tracing::info;

use super::{
    Context, Stores, results,
    run::{error_policy, reconcile},
};

fn scoped<K>(client: &kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// The operation Pods of one family (`component`), and only those: the watch never grows with
/// the cluster's other Pods.
fn pods_config(component: &str) -> watcher::Config {
    watcher::Config::default().labels(&format!(
        "{}={},{}={component}",
        ptah_workload::MANAGED_BY_LABEL,
        ptah_workload::MANAGED_BY_VALUE,
        ptah_workload::COMPONENT_LABEL,
    ))
}

/// Wakes the resource named by `owner_label` when an operation Pod ends (its result may be read
/// then, seconds before the kubelet reports the terminal phase and the Job controller marks the
/// Job finished) or cannot start, which the resource reports (`results::wakes_owner`). Pods
/// starting or running normally wake nobody, so a running Job needs no polling pass, only the
/// Lease renewals of one that holds a Lease.
fn pod_owner<K>(owner_label: &'static str) -> impl Fn(Pod) -> Option<ObjectRef<K>>
where
    K: kube::Resource<DynamicType = ()>,
{
    move |pod: Pod| {
        if !results::wakes_owner(&pod) {
            return None;
        }
        Some(ObjectRef::new(pod.labels().get(owner_label)?).within(&pod.namespace()?))
    }
}

fn jobs_config() -> watcher::Config {
    watcher::Config::default().labels(&format!(
        "{}={}",
        ptah_workload::MANAGED_BY_LABEL,
        ptah_workload::MANAGED_BY_VALUE
    ))
}

/// A controller over `api` whose store keeps each object without what no pass reads: the
/// field managers' bookkeeping (which grows with every status write) and `kubectl apply`'s copy
/// of the spec. Every write is conditional on the resourceVersion, which stays.
fn primary<K>(api: Api<K>) -> Controller<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
{
    let (reader, writer) = reflector::store();
    let stream = watcher(api, watcher::Config::default().any_semantic())
        .default_backoff()
        .modify(|o: &mut K| {
            o.meta_mut().managed_fields = None;
            if let Some(a) = o.meta_mut().annotations.as_mut() {
                a.remove(ptah_managercache::LAST_APPLIED_ANNOTATION);
            }
        })
        .reflect(writer)
        .applied_objects();
    Controller::for_stream(stream, reader)
}

/// How many passes of one kind run at once. Unbounded, a start over a thousand resources sends
/// a thousand passes' reads at once: the API server queues them and the manager holds every
/// response in memory together, a peak the allocator keeps long after.
const CONCURRENT_PASSES: u16 = 32;

fn controller_config() -> kube::runtime::controller::Config {
    kube::runtime::controller::Config::default().concurrency(CONCURRENT_PASSES)
}

/// Runs both controllers (over `watch_namespace`, or all) until `shutdown` resolves.
pub async fn run(
    ctx_parts: impl FnOnce(Stores) -> Context,
    client: kube::Client,
    watch_namespace: Option<&str>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let schemas = primary(scoped::<PtahSchema>(&client, watch_namespace));
    let migrations = primary(scoped::<PtahMigration>(&client, watch_namespace));
    let stores = Stores {
        schemas: schemas.store(),
        migrations: migrations.store(),
    };
    let ctx = Arc::new(ctx_parts(stores.clone()));
    // A verification-policy ConfigMap changing (recreated: they are immutable) must wake the
    // resources that name it; the watch carries metadata only, never the policy bytes, and only
    // of ConfigMaps labelled as policies, so the cache does not grow with every ConfigMap.
    let policy_users = |store: kube::runtime::reflector::Store<PtahSchema>| {
        move |cm: ptah_managercache::ConfigMapMeta| {
            let (ns, name) = (cm.namespace(), cm.name_any());
            store
                .state()
                .into_iter()
                .filter(|s| s.namespace() == ns && s.spec.desired.verification_policy_from.name == name)
                .map(|s| ObjectRef::from(&*s))
                .collect::<Vec<_>>()
        }
    };
    let migration_policy_users = |store: kube::runtime::reflector::Store<PtahMigration>| {
        move |cm: ptah_managercache::ConfigMapMeta| {
            let (ns, name) = (cm.namespace(), cm.name_any());
            store
                .state()
                .into_iter()
                .filter(|m| m.namespace() == ns && m.spec.artifact.verification_policy_from.name == name)
                .map(|m| ObjectRef::from(&*m))
                .collect::<Vec<_>>()
        }
    };
    let (tx, rx) = tokio::sync::watch::channel(false);
    let stopped = futures_util::FutureExt::shared(async move {
        let mut rx = rx;
        let _ = rx.wait_for(|s| *s).await;
    });
    let schema_run = schemas
        .watches(
            scoped::<ptah_managercache::ConfigMapMeta>(&client, watch_namespace),
            ptah_managercache::watcher_config(Some(ptah_api::VERIFICATION_POLICY_LABEL)),
            policy_users(stores.schemas.clone()),
        )
        .owns(scoped::<Job>(&client, watch_namespace), jobs_config())
        .watches(
            scoped::<Pod>(&client, watch_namespace),
            pods_config(ptah_workload::SCHEMA_COMPONENT),
            pod_owner::<PtahSchema>(ptah_workload::SCHEMA_LABEL),
        )
        .owns(
            scoped::<PtahSchemaPlan>(&client, watch_namespace),
            watcher::Config::default(),
        )
        .watches(
            scoped::<PtahSchemaApproval>(&client, watch_namespace),
            watcher::Config::default(),
            |a: PtahSchemaApproval| Some(ObjectRef::new(&a.spec.schema_ref.name).within(&a.namespace()?)),
        )
        .with_config(controller_config())
        .graceful_shutdown_on(stopped.clone())
        .run(reconcile::<PtahSchema>, error_policy::<PtahSchema>, ctx.clone())
        .for_each(log_event);
    let migration_run = migrations
        .watches(
            scoped::<ptah_managercache::ConfigMapMeta>(&client, watch_namespace),
            ptah_managercache::watcher_config(Some(ptah_api::VERIFICATION_POLICY_LABEL)),
            migration_policy_users(stores.migrations.clone()),
        )
        .owns(scoped::<Job>(&client, watch_namespace), jobs_config())
        .watches(
            scoped::<Pod>(&client, watch_namespace),
            pods_config(ptah_workload::MIGRATION_COMPONENT),
            pod_owner::<PtahMigration>(ptah_workload::MIGRATION_LABEL),
        )
        .owns(
            scoped::<PtahMigrationPlan>(&client, watch_namespace),
            watcher::Config::default(),
        )
        .watches(
            scoped::<PtahMigrationApproval>(&client, watch_namespace),
            watcher::Config::default(),
            |a: PtahMigrationApproval| {
                Some(ObjectRef::new(&a.spec.migration_ref.name).within(&a.namespace()?))
            },
        )
        .watches(
            scoped::<PtahMigrationRunAcknowledgment>(&client, watch_namespace),
            watcher::Config::default(),
            |a: PtahMigrationRunAcknowledgment| {
                Some(ObjectRef::new(&a.spec.migration_ref.name).within(&a.namespace()?))
            },
        )
        .with_config(controller_config())
        .graceful_shutdown_on(stopped)
        .run(
            reconcile::<PtahMigration>,
            error_policy::<PtahMigration>,
            ctx.clone(),
        )
        .for_each(log_event);
    let gauge_ctx = ctx.clone();
    let gauges = async move {
        let mut tick = tokio::time::interval(super::gauges::REFRESH);
        loop {
            tick.tick().await;
            super::gauges::refresh(&gauge_ctx).await;
        }
    };
    let stop = async move {
        tokio::select! {
            _ = shutdown => {}
            _ = gauges => {}
        }
        let _ = tx.send(true);
    };
    tokio::join!(schema_run, migration_run, stop);
    info!("controllers stopped");
}

async fn log_event<T: std::fmt::Debug, E: std::fmt::Display>(r: Result<T, E>) {
    if let Err(e) = r {
        tracing::debug!(error = %e, "controller event");
    }
}
