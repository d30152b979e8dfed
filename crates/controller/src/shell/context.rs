//! What every reconciliation shares: clients, the Lease and plan stores, the binding, Events.

use std::sync::Arc;

use kube::{
    Client,
    runtime::{
        events::{Recorder, Reporter},
        reflector::Store,
    },
};
use ptah_api::{PtahMigration, PtahSchema};
use ptah_planstore::PlanStore;
use ptah_targetlock::RealmLeases;
use ptah_telemetry::Metrics;

use crate::operation::Binding;

/// Manager settings that are not per resource.
#[derive(Clone, Debug)]
pub struct ManagerConfig {
    /// The namespace holding realm Leases, the leader Lease and the state ConfigMap.
    pub coordination_namespace: String,
    /// This replica's identity (Pod name).
    pub identity: String,
    /// Reconcile only this namespace (all namespaces when `None`).
    pub watch_namespace: Option<String>,
}

/// Shared by every reconciliation.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// Realm Leases.
    pub leases: RealmLeases,
    /// Plan publication and loading.
    pub plans: PlanStore,
    /// The execution binding and manager identity.
    pub binding: Binding,
    /// Settings.
    pub config: ManagerConfig,
    /// Event recorder.
    pub recorder: Recorder,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Every PtahSchema the controller watches (for the realm census).
    pub schemas: Store<PtahSchema>,
    /// Every PtahMigration the controller watches (for the realm census).
    pub migrations: Store<PtahMigration>,
    /// The result CA bundle (public) handed to operation Pods with their tickets, as the
    /// manager's receiver currently trusts it; `None` when results travel through Pod logs.
    pub result_ca: Option<tokio::sync::watch::Receiver<String>>,
}

/// The watch stores of both families, for the realm census.
#[derive(Clone)]
pub struct Stores {
    /// PtahSchemas.
    pub schemas: Store<PtahSchema>,
    /// PtahMigrations.
    pub migrations: Store<PtahMigration>,
}

impl Context {
    /// A context for `binding`, with the controllers' stores for the census.
    pub fn new(
        client: Client,
        binding: Binding,
        config: ManagerConfig,
        metrics: Arc<Metrics>,
        stores: Stores,
    ) -> Self {
        let reporter = Reporter {
            controller: ptah_api::FIELD_MANAGER.into(),
            instance: Some(config.identity.clone()),
        };
        Context {
            leases: RealmLeases::new(client.clone(), config.coordination_namespace.clone()),
            plans: PlanStore::new(client.clone()).with_field_manager(ptah_api::FIELD_MANAGER),
            recorder: Recorder::new(client.clone(), reporter),
            client,
            binding,
            config,
            metrics,
            schemas: stores.schemas,
            migrations: stores.migrations,
            result_ca: None,
        }
    }

    /// The same context, handing `ca` (the result CA bundle, kept current) to operation Pods.
    #[must_use]
    pub fn with_result_ca(mut self, ca: tokio::sync::watch::Receiver<String>) -> Self {
        self.result_ca = Some(ca);
        self
    }
}
