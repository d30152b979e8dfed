//! One scenario's world: the application namespace with its database and PtahSchema `orders`
//! (`lifecycle::app::App`), the manager binary under the chart's RBAC, the scenario's clock and
//! Apply Job poll, and the waits the scenarios share.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams},
};
use ptah_api::{PtahSchema, PtahSchemaApproval, schema::SchemaPhase};
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::Value;

use crate::{
    dataplane::{history::History, scenario::Scenario},
    lifecycle::{
        Diagnose, Manager,
        app::{App, Engine, phase},
        chart_kubeconfig, delete_cluster_scoped, wait_for,
    },
};

/// How long one step of a scenario may take: a cycle of Jobs on two shared cores.
pub const STEP: Duration = Duration::from_secs(240);

/// Where the Pods reach the services, when not directly (`host:port`).
#[derive(Default)]
pub struct Via {
    /// The database's address.
    pub database: Option<String>,
    /// The TLS registry's address.
    pub registry: Option<String>,
    /// The manager delivers results durably whatever the run asks (`PTAH_E2E_RESULT_DELIVERY`).
    pub durable: bool,
}

/// A scenario's application, manager and measurements.
pub struct Run {
    /// The namespace, database and PtahSchema `orders`.
    pub app: App,
    /// The manager, scoped to the namespace.
    pub manager: Manager,
    /// The scenario's clock and Apply Job poll.
    pub scenario: Scenario,
    /// Every version of `orders` since the scenario's spec was set.
    pub history: History,
    /// Whether the manager reads results from durable delivery (else from Pod logs).
    pub durable: bool,
    cluster_scoped: Vec<(String, String)>,
}

impl Run {
    /// Sets up `orders` on `engine`, merges `spec_patch` into its spec before the manager first
    /// sees it, and starts the manager.
    pub async fn start(name: &'static str, engine: Engine, spec_patch: Value) -> Run {
        Run::start_via(name, engine, spec_patch, Via::default()).await
    }

    /// [`Run::start`], with the Pods reaching the database or the registry at another address
    /// (a Toxiproxy proxy as the pod relay forwards it) instead of directly.
    pub async fn start_via(name: &'static str, engine: Engine, spec_patch: Value, via: Via) -> Run {
        let app = App::setup(engine, "e2e-dp").await;
        // Two cores shared by every Job, database and build: a connection may take more than the
        // default 10 s to be answered, which would fail an operation for no fault of the scenario.
        app.schemas
            .patch(
                "orders",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"spec": {"execution": {"connectTimeout": "30s"}}})),
            )
            .await
            .expect("a patient connect timeout");
        if let Some(registry) = &via.registry {
            // The grant names the authority the Pods reach, and the reference points there too.
            let secrets: Api<Secret> = Api::namespaced(app.client.clone(), &app.ns);
            secrets
                .patch(
                    "registry",
                    &PatchParams::default(),
                    &Patch::Merge(
                        serde_json::json!({"stringData": {(ptah_registrygrant::KEY_REGISTRY): registry}}),
                    ),
                )
                .await
                .expect("point the registry grant at the proxy");
            let reference = format!("oci://{registry}/{}:v1", app.repository);
            app.schemas
                .patch(
                    "orders",
                    &PatchParams::default(),
                    &Patch::Merge(serde_json::json!({"spec": {"desired": {"ociRef": reference}}})),
                )
                .await
                .expect("point the reference at the proxy");
        }
        if let Some(address) = &via.database {
            let secrets: Api<Secret> = Api::namespaced(app.client.clone(), &app.ns);
            let secret = secrets.get("db").await.expect("the database Secret");
            let url = secret
                .data
                .as_ref()
                .and_then(|d| d.get("url"))
                .map(|b| String::from_utf8_lossy(&b.0).into_owned())
                .expect("the database URL");
            let via = with_address(&url, address);
            secrets
                .patch(
                    "db",
                    &PatchParams::default(),
                    &Patch::Merge(serde_json::json!({"stringData": {"url": via}})),
                )
                .await
                .expect("point the database Secret at the proxy");
        }
        let patched = app
            .schemas
            .patch(
                "orders",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({ "spec": spec_patch })),
            )
            .await
            .expect("patch the scenario's spec");
        // Every write the manager makes comes after this one: the watch misses none.
        let from = patched.resource_version().expect("the patch's resourceVersion");
        let history = History::watch(app.schemas.clone(), "orders", from);
        let scenario = Scenario::start(name, engine, &app.client, &app.ns);
        let (kubeconfig, cluster_scoped) = chart_kubeconfig(&app.client, &app.ns, &app.ns, &app.image).await;
        let durable = via.durable || ptah_apitests::resultdelivery::durable();
        let manager = Manager::start_delivering(&app.ns, &app.image, kubeconfig, durable);
        Run {
            app,
            manager,
            scenario,
            history,
            durable,
            cluster_scoped,
        }
    }

    /// Waits until some version of `orders` the manager wrote satisfied `pred`, however briefly.
    pub async fn seen(&self, what: &str, pred: impl Fn(&PtahSchema) -> bool) -> PtahSchema {
        self.history.seen(what, STEP, pred).await
    }

    /// Waits for `orders` to satisfy `pred`.
    pub async fn wait(&self, what: &str, pred: impl Fn(&PtahSchema) -> bool) -> PtahSchema {
        wait_for(&self.app.schemas, "orders", what, STEP, &self.manager, pred).await
    }

    /// Waits for a plan awaiting approval other than `not` (a plan object's uid: a plan published
    /// again after a proof keeps its content-derived name).
    pub async fn awaiting(&self, not: Option<&str>) -> PtahSchema {
        self.wait("a plan awaiting approval", |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval)
                && s.status.as_ref().is_some_and(|st| {
                    st.pending_observation.is_none()
                        && st.plan.as_ref().is_some_and(|p| Some(p.uid.as_str()) != not)
                })
        })
        .await
    }

    /// The Running Pod of the schema's Apply Job, once it runs.
    pub async fn running_apply_pod(&self) -> Pod {
        let pods: Api<Pod> = Api::namespaced(self.app.client.clone(), &self.app.ns);
        let selector = format!("{OPERATION_LABEL}={}", Operation::Apply.as_str());
        let deadline = Instant::now() + STEP;
        loop {
            let running = pods
                .list(&ListParams::default().labels(&selector))
                .await
                .expect("list the Apply Pods")
                .items
                .into_iter()
                .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"));
            if let Some(pod) = running {
                return pod;
            }
            assert!(
                Instant::now() < deadline,
                "no Apply Pod ran\n{}",
                self.manager.diagnose()
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The termination messages (the runner's summaries) of every Apply Pod of the namespace.
    pub async fn apply_pod_summaries(&self) -> String {
        let pods: Api<Pod> = Api::namespaced(self.app.client.clone(), &self.app.ns);
        let selector = format!("{OPERATION_LABEL}={}", Operation::Apply.as_str());
        pods.list(&ListParams::default().labels(&selector))
            .await
            .expect("list the Apply Pods")
            .items
            .into_iter()
            .flat_map(|p| p.status.and_then(|s| s.container_statuses).unwrap_or_default())
            .filter_map(|c| c.state.and_then(|s| s.terminated).and_then(|t| t.message))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The logs of every Apply Pod of the namespace (the runner's result frames), and the results
    /// delivered durably (which no log holds).
    pub async fn apply_pod_logs(&self) -> String {
        let pods: Api<Pod> = Api::namespaced(self.app.client.clone(), &self.app.ns);
        let selector = format!("{OPERATION_LABEL}={}", Operation::Apply.as_str());
        let mut out = String::new();
        for pod in pods
            .list(&ListParams::default().labels(&selector))
            .await
            .expect("list the Apply Pods")
            .items
        {
            let name = pod.metadata.name.unwrap_or_default();
            out.push_str(&pods.logs(&name, &Default::default()).await.unwrap_or_default());
        }
        out.push_str(&super::delivered::delivered_results(&self.app.client, &self.app.ns).await);
        out
    }

    /// Whether the approval `name` carries `Consumed=True`.
    pub async fn approval_consumed(&self, name: &str) -> bool {
        let approvals: Api<PtahSchemaApproval> = Api::namespaced(self.app.client.clone(), &self.app.ns);
        let approval = approvals.get(name).await.expect("the approval");
        let value = serde_json::to_value(&approval).expect("approval JSON");
        value["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Consumed" && c["status"] == "True")
        })
    }

    /// The manager's log, for the leak scan.
    pub fn manager_log(&self) -> String {
        self.manager.log()
    }

    /// The tail every scenario shares: scans everything the namespace said for the passwords,
    /// ends the run and asserts the Apply Jobs per plan, the database, the scan and the bound.
    pub async fn conclude(self, expected_jobs: &[usize], database: Result<(), String>, bound: Duration) {
        let leak = self
            .scenario
            .leak_scan(&self.app.services, &self.manager_log())
            .await;
        self.end()
            .await
            .finish(expected_jobs, database, leak, bound)
            .await;
    }

    /// Deletes what the manager's RBAC put outside the namespace.
    pub async fn end(self) -> Scenario {
        let Run {
            app,
            manager,
            scenario,
            cluster_scoped,
            ..
        } = self;
        drop(manager);
        delete_cluster_scoped(&app.client, &cluster_scoped).await;
        scenario
    }
}

/// The name of the approval `lifecycle::app::approve` makes for `s`'s plan.
pub fn approval_name(s: &PtahSchema) -> String {
    let plan = s.status.as_ref().and_then(|st| st.plan.as_ref()).expect("a plan");
    format!("approve-{}-{}", plan.name, &plan.uid[..8.min(plan.uid.len())])
}

/// The uid of `s`'s current plan object.
pub fn plan_uid(s: &PtahSchema) -> String {
    s.status
        .as_ref()
        .and_then(|st| st.plan.as_ref())
        .map(|p| p.uid.clone())
        .expect("a plan")
}

/// `url` with its `host:port` replaced by `address`.
pub fn with_address(url: &str, address: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (userinfo, hostpath) = rest.rsplit_once('@').expect("a URL with credentials");
    let path = hostpath.find('/').map_or("", |i| &hostpath[i..]);
    format!("{scheme}://{userinfo}@{address}{path}")
}

/// The `host:port` of a Pod URL from `pod-endpoints.env` (`PTAH_POD_PG_PROXY_URL`, …).
pub fn pod_address(variable: &str) -> String {
    let endpoints = ptah_apitests::e2e::pod_endpoints();
    let url = endpoints
        .get(variable)
        .unwrap_or_else(|| panic!("{variable} is not in pod-endpoints.env: run `cargo xtask services up` then `cargo xtask cluster up --nodes 2`"));
    let rest = url.split_once('@').map_or(url.as_str(), |(_, r)| r);
    rest.split('/').next().expect("host:port").to_owned()
}
