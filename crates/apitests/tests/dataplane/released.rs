//! A scenario's world when the chart itself is under test (scenarios 14 and 19): `orders` on its
//! engine (`lifecycle::app::App`), the chart installed by `helm install` for its namespace, the
//! in-cluster manager's log for the leak scan, and the cleanup of both namespaces once the
//! scenario has passed (a failing one keeps them to be read).

use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::{
    Api, Client, ResourceExt,
    api::{DeleteParams, ListParams, LogParams, Patch, PatchParams},
};
use ptah_api::PtahSchema;
use ptah_apitests::release::{ChartSource, Release, helm_release, install};
use serde_json::Value;

use crate::{
    dataplane::{scenario::Scenario, setup::STEP},
    lifecycle::{
        InCluster,
        app::{App, Engine},
        wait_for,
    },
};

/// The application, the release serving it and the scenario's measurements.
pub struct Released {
    /// The namespace, database and PtahSchema `orders`.
    pub app: App,
    /// The release namespace (the manager's Pods, its coordination state).
    pub release_ns: String,
    /// The in-cluster manager, for failure stories.
    pub manager: InCluster,
    /// The scenario's clock and Apply Job poll.
    pub scenario: Scenario,
    release: Release,
}

impl Released {
    /// Sets up `orders` on `engine`, merges `spec_patch` into its spec, and installs the chart for
    /// its namespace with `sets` (`key=value`). Every scenario that calls it is in nextest's
    /// `helm-release` group (`.config/nextest.toml`): the release's ClusterRoles and webhook
    /// configurations have fixed names, one release at a time.
    pub async fn install(name: &'static str, engine: Engine, sets: &[String], spec_patch: Value) -> Released {
        let app = App::setup(engine, "e2e-dp").await;
        // Two cores shared by every Job, database and build: a patient connect timeout.
        let mut patch = serde_json::json!({"execution": {"connectTimeout": "30s"}});
        merge(&mut patch, spec_patch);
        app.schemas
            .patch(
                "orders",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({ "spec": patch })),
            )
            .await
            .expect("patch the scenario's spec");
        let scenario = Scenario::start(name, engine, &app.client, &app.ns);
        let release_ns = install(&app.client, &app.ns, &app.services, &app.image, sets).await;
        let release = Release(release_ns.clone());
        let manager = InCluster {
            client: app.client.clone(),
            namespace: release_ns.clone(),
        };
        Released {
            app,
            release_ns,
            manager,
            scenario,
            release,
        }
    }

    /// `helm upgrade` of the release to `source`'s chart and images.
    pub fn upgrade(&self, source: &ChartSource, sets: &[String]) {
        let out = ptah_apitests::release::run(&mut helm_release(
            "upgrade",
            &self.release_ns,
            &self.app.ns,
            source,
            sets,
        ));
        assert!(out.contains("STATUS: deployed"), "{out}");
    }

    /// Waits for `orders` to satisfy `pred`.
    pub async fn wait(&self, what: &str, pred: impl Fn(&PtahSchema) -> bool) -> PtahSchema {
        wait_for(&self.app.schemas, "orders", what, STEP, &self.manager, pred).await
    }

    /// Every log line of every Pod of the release namespace (the managers, the rotator, the
    /// hooks), for the leak scan.
    pub async fn manager_log(&self) -> String {
        let pods: Api<Pod> = Api::namespaced(self.app.client.clone(), &self.release_ns);
        let mut out = String::new();
        for pod in pods
            .list(&ListParams::default())
            .await
            .expect("list the release's Pods")
            .items
        {
            let log = pods
                .logs(&pod.name_any(), &LogParams::default())
                .await
                .unwrap_or_default();
            out.push_str(&log);
        }
        out
    }

    /// Uninstalls the release; returns the scenario to finish and what to delete once it passed.
    pub fn end(self) -> (Scenario, Cleanup) {
        let Released {
            app,
            release_ns,
            scenario,
            release,
            ..
        } = self;
        drop(release);
        let cleanup = Cleanup {
            client: app.client.clone(),
            namespaces: vec![app.ns.clone(), release_ns],
        };
        (scenario, cleanup)
    }
}

/// The namespaces a passed scenario deletes.
pub struct Cleanup {
    client: Client,
    namespaces: Vec<String>,
}

impl Cleanup {
    /// Deletes the namespaces (the API server finishes it in the background).
    pub async fn delete(self) {
        let api: Api<Namespace> = Api::all(self.client);
        for ns in self.namespaces {
            let _ = api.delete(&ns, &DeleteParams::default()).await;
        }
    }
}

/// The condition `type_` of the approval `name`: (status, reason, message).
pub async fn approval_condition(
    client: &Client,
    ns: &str,
    name: &str,
    type_: &str,
) -> Option<(String, String, String)> {
    let approvals: Api<ptah_api::PtahSchemaApproval> = Api::namespaced(client.clone(), ns);
    let value =
        serde_json::to_value(approvals.get(name).await.expect("the approval")).expect("approval JSON");
    value["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("status"), s("reason"), s("message"))
        })
}

/// `patch` merged into `base`, objects recursively.
fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}
