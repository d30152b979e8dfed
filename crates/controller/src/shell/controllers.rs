//! Running both controllers over one shared context: the PtahSchema and the PtahMigration
//! watches, their owned Jobs and plans, and the decision objects that wake them.

use std::sync::Arc;

use futures_util::StreamExt;
use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, ResourceExt,
    runtime::{Controller, reflector::ObjectRef, watcher},
};
use ptah_api::{
    PtahMigration, PtahMigrationApproval, PtahMigrationPlan, PtahMigrationRunAcknowledgment, PtahSchema,
    PtahSchemaApproval, PtahSchemaPlan,
};
use tracing::info;

use super::{
    Context, Stores,
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

fn jobs_config() -> watcher::Config {
    watcher::Config::default().labels(&format!(
        "{}={}",
        ptah_workload::MANAGED_BY_LABEL,
        ptah_workload::MANAGED_BY_VALUE
    ))
}

/// Runs both controllers (over `watch_namespace`, or all) until `shutdown` resolves.
pub async fn run(
    ctx_parts: impl FnOnce(Stores) -> Context,
    client: kube::Client,
    watch_namespace: Option<&str>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let schemas = Controller::new(
        scoped::<PtahSchema>(&client, watch_namespace),
        watcher::Config::default().any_semantic(),
    );
    let migrations = Controller::new(
        scoped::<PtahMigration>(&client, watch_namespace),
        watcher::Config::default().any_semantic(),
    );
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
        .owns(
            scoped::<PtahSchemaPlan>(&client, watch_namespace),
            watcher::Config::default(),
        )
        .watches(
            scoped::<PtahSchemaApproval>(&client, watch_namespace),
            watcher::Config::default(),
            |a: PtahSchemaApproval| Some(ObjectRef::new(&a.spec.schema_ref.name).within(&a.namespace()?)),
        )
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
