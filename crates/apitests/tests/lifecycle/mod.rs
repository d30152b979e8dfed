//! Support of the schema suites: the manager as a process, the database on the host, waiting on
//! a PtahSchema, and the credential scan.

// Each suite that includes this module uses a different part of it.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use k8s_openapi::api::core::v1::{Event, Pod};
use kube::{
    Api, Client,
    api::{ListParams, LogParams},
};
use ptah_api::{PtahSchema, PtahSchemaApproval};
use ptah_apitests::{ClusterFiles, workspace_root};

pub mod app;

/// The manager binary running against the test cluster, killed when dropped.
pub struct Manager {
    bin: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    kubeconfig: PathBuf,
    child: Option<Child>,
}

impl Manager {
    /// Starts `manager` scoped to `namespace` (also its coordination namespace), authenticated
    /// by `kubeconfig`, delivering results as this run asks (`PTAH_E2E_RESULT_DELIVERY`).
    pub fn start(namespace: &str, image: &str, kubeconfig: PathBuf) -> Manager {
        Manager::start_delivering(
            namespace,
            image,
            kubeconfig,
            ptah_apitests::resultdelivery::durable(),
        )
    }

    /// [`Manager::start`], delivering results durably when `durable`, whatever the run asks.
    pub fn start_delivering(namespace: &str, image: &str, kubeconfig: PathBuf, durable: bool) -> Manager {
        let bin = ptah_apitests::e2e::build_bin("ptah-manager", "manager");
        let dir = workspace_root().join("target/e2e/logs");
        std::fs::create_dir_all(&dir).expect("log dir");
        let gateway = ptah_apitests::e2e::pod_endpoints()
            .get("PTAH_POD_GATEWAY")
            .cloned()
            .expect("PTAH_POD_GATEWAY");
        let mut args = vec![
            format!("--coordination-namespace={namespace}"),
            format!("--watch-namespace={namespace}"),
            format!("--executor-image={image}"),
            format!("--runner-image={image}"),
            format!("--identity=e2e-{namespace}"),
            "--http-addr=127.0.0.1:0".to_owned(),
            "--leader-lease-seconds=5".to_owned(),
            "--log-format=json".to_owned(),
        ];
        args.extend(ptah_apitests::resultdelivery::host_manager_args(
            namespace, &gateway, durable,
        ));
        let mut m = Manager {
            bin,
            args,
            log: dir.join(format!("manager-{namespace}.log")),
            kubeconfig,
            child: None,
        };
        m.spawn();
        m
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("manager log");
        let err = log.try_clone().expect("log handle");
        let child = Command::new(&self.bin)
            .args(&self.args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("RUST_LOG", "info,ptah_controller=debug")
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(err))
            .spawn()
            .expect("start the manager");
        self.child = Some(child);
    }

    /// Kills the manager with SIGKILL (no graceful shutdown, no Lease release).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again after [`Manager::kill`].
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// The manager's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Where the log is.
    pub fn log_path(&self) -> &Path {
        &self.log
    }
}

impl Drop for Manager {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A short summary of a schema's status for failure messages.
pub fn summary(s: &PtahSchema) -> String {
    let Some(st) = &s.status else {
        return "no status".into();
    };
    let conditions: Vec<String> = st
        .conditions
        .iter()
        .map(|c| format!("{}={}/{}: {}", c.type_, c.status, c.reason, c.message))
        .collect();
    format!(
        "phase {:?}; claim {:?}; pending proof {}; plan {:?}\n  {}",
        st.phase,
        st.active_operation
            .as_ref()
            .map(|c| (c.operation_type, c.job_name.clone(), c.dispatch_started)),
        st.pending_observation.is_some(),
        st.plan.as_ref().map(|p| p.name.clone()),
        conditions.join("\n  ")
    )
}

/// Where a failing wait finds the manager's story: its log tail.
pub trait Diagnose {
    /// A few dozen lines explaining what the manager did.
    fn diagnose(&self) -> String;
}

impl Diagnose for Manager {
    fn diagnose(&self) -> String {
        let log = self.log();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        format!(
            "manager log ({}) tail:\n{}",
            self.log_path().display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        )
    }
}

/// The in-cluster manager of a helm release: its story is the log tail of every Pod of the
/// release namespace.
pub struct InCluster {
    /// Admin client.
    pub client: Client,
    /// The release namespace.
    pub namespace: String,
}

impl Diagnose for InCluster {
    fn diagnose(&self) -> String {
        let (client, ns) = (self.client.clone(), self.namespace.clone());
        // `diagnose` is synchronous (it runs inside panics of async waits): a thread of its own.
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(ptah_apitests::release::manager_story(&client, &ns, 30))
        })
        .join()
        .unwrap_or_default()
    }
}

/// What creating a deliberately invalid approval (it names no plan) produced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Probe {
    /// The webhook answered and refused it on its merits.
    Refused,
    /// The API server could not call the webhook (TLS, connection): fail-closed.
    CallFailed,
    /// It was stored: a webhook let an unchecked approval through.
    Admitted,
}

/// Creates (dry run) an approval of `orders` naming no plan: the webhook must refuse it.
pub async fn probe(approvals: &Api<PtahSchemaApproval>, schema_uid: &str) -> (Probe, String) {
    let approval: PtahSchemaApproval = serde_json::from_value(serde_json::json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
        "metadata": {"generateName": "probe-"},
        "spec": {
            "schemaRef": {"name": "orders", "uid": schema_uid},
            "planRef": {"name": "ptah-plan-000000000000000000000000", "uid": "no-such-plan"},
            "planFingerprint": format!("sha256:{}", "0".repeat(64))
        }
    }))
    .expect("probe approval");
    let params = kube::api::PostParams {
        dry_run: true,
        ..Default::default()
    };
    match approvals.create(&params, &approval).await {
        Ok(_) => (Probe::Admitted, "admitted".into()),
        Err(kube::Error::Api(s)) if s.message.contains("failed calling webhook") => {
            (Probe::CallFailed, s.message)
        }
        Err(kube::Error::Api(s)) => (Probe::Refused, s.message),
        Err(e) => (Probe::CallFailed, e.to_string()),
    }
}

/// Polls the schema until `pred` holds; panics with its last status and the manager's story.
pub async fn wait_for(
    api: &Api<PtahSchema>,
    name: &str,
    what: &str,
    timeout: Duration,
    manager: &dyn Diagnose,
    pred: impl Fn(&PtahSchema) -> bool,
) -> PtahSchema {
    let deadline = Instant::now() + timeout;
    loop {
        let s = api.get(name).await.unwrap_or_else(|e| panic!("get {name}: {e}"));
        if pred(&s) {
            return s;
        }
        if Instant::now() > deadline {
            panic!(
                "timed out after {timeout:?} waiting for {what}\nstatus: {}\n{}",
                summary(&s),
                manager.diagnose()
            );
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every Pod log (all containers, init included), Event and the schema's status of `namespace`,
/// as one text to scan for credentials.
pub async fn everything_said(client: &Client, namespace: &str, schema: &PtahSchema) -> String {
    let mut text = serde_json::to_string(&schema.status).unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    for pod in pods.list(&ListParams::default()).await.expect("list pods").items {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let spec = pod.spec.clone().unwrap_or_default();
        let containers = spec
            .init_containers
            .unwrap_or_default()
            .into_iter()
            .chain(spec.containers);
        for c in containers {
            let params = LogParams {
                container: Some(c.name.clone()),
                ..LogParams::default()
            };
            if let Ok(log) = pods.logs(&name, &params).await {
                text.push_str(&log);
            }
        }
        text.push_str(&serde_json::to_string(&pod.status).unwrap_or_default());
    }
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    for e in events
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items
    {
        text.push_str(e.message.as_deref().unwrap_or_default());
    }
    let ev2: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), namespace);
    for e in ev2.list(&ListParams::default()).await.expect("list events").items {
        text.push_str(e.note.as_deref().unwrap_or_default());
    }
    text
}

/// A kubeconfig for the manager's own ServiceAccount with exactly the chart's RBAC (rendered by
/// helm for release `release` in `namespace`): the e2e manager runs with what a real install
/// grants, so a missing permission — or a needed Secret read — fails the suite.
pub async fn chart_kubeconfig(
    client: &Client,
    namespace: &str,
    release: &str,
    image: &str,
) -> (PathBuf, Vec<(String, String)>) {
    use k8s_openapi::api::{
        admissionregistration::v1::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding},
        authentication::v1::TokenRequest,
        core::v1::ServiceAccount,
        rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding},
    };
    use kube::api::{Patch, PatchParams, PostParams};
    let chart = workspace_root().join("charts/ptah-operator");
    let mut cmd = Command::new(ptah_apitests::e2e::helm());
    cmd.args(["template", release])
        .arg(&chart)
        .args(["--namespace", namespace]);
    for key in ["manager", "executor", "runner", "certRotator", "crdManager"] {
        cmd.args(["--set", &format!("image.{key}={image}")]);
    }
    // The chart's admission policies too, bound to this namespace alone so a run that stops
    // early leaves nothing that judges other tests' Pods.
    cmd.args([
        "--set",
        &format!("webhooks.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name={namespace}"),
        "--show-only",
        "templates/serviceaccount.yaml",
        "--show-only",
        "templates/rbac.yaml",
        "--show-only",
        "templates/admissionpolicies.yaml",
    ]);
    let out = cmd.output().expect("run helm template");
    assert!(
        out.status.success(),
        "helm template: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let apply = PatchParams::apply("ptah-e2e").force();
    let mut account = None;
    let mut cluster_scoped = Vec::new();
    for doc in text.split("\n---").filter(|d| d.contains("kind:")) {
        let value: serde_json::Value =
            serde_saphyr::from_str(doc).unwrap_or_else(|e| panic!("rendered YAML: {e}\n{doc}"));
        let kind = value["kind"].as_str().unwrap_or_default().to_owned();
        let name = value["metadata"]["name"].as_str().unwrap_or_default().to_owned();
        let ns = value["metadata"]["namespace"]
            .as_str()
            .unwrap_or(namespace)
            .to_owned();
        macro_rules! put {
            ($t:ty, $api:expr) => {{
                let api: Api<$t> = $api;
                api.patch(&name, &apply, &Patch::Apply(&value))
                    .await
                    .unwrap_or_else(|e| panic!("apply {kind} {name}: {e}"));
            }};
        }
        match kind.as_str() {
            "ServiceAccount" => {
                put!(ServiceAccount, Api::namespaced(client.clone(), &ns));
                account = Some((ns.clone(), name.clone()));
            }
            "ClusterRole" => {
                put!(ClusterRole, Api::all(client.clone()));
                cluster_scoped.push((kind.clone(), name.clone()));
            }
            "ClusterRoleBinding" => {
                put!(ClusterRoleBinding, Api::all(client.clone()));
                cluster_scoped.push((kind.clone(), name.clone()));
            }
            "Role" => put!(Role, Api::namespaced(client.clone(), &ns)),
            "RoleBinding" => put!(RoleBinding, Api::namespaced(client.clone(), &ns)),
            "ValidatingAdmissionPolicy" => {
                put!(ValidatingAdmissionPolicy, Api::all(client.clone()));
                cluster_scoped.push((kind.clone(), name.clone()));
            }
            "ValidatingAdmissionPolicyBinding" => {
                put!(ValidatingAdmissionPolicyBinding, Api::all(client.clone()));
                cluster_scoped.push((kind.clone(), name.clone()));
            }
            other => panic!("unexpected {other} in the rendered RBAC"),
        }
    }
    let (sa_ns, sa) = account.expect("the chart renders the manager's ServiceAccount");
    let request: TokenRequest =
        serde_json::from_value(serde_json::json!({"spec": {"expirationSeconds": 7200}}))
            .expect("token request");
    let token = Api::<ServiceAccount>::namespaced(client.clone(), &sa_ns)
        .create_token_request(&sa, &PostParams::default(), &request)
        .await
        .expect("a token for the manager's ServiceAccount")
        .status
        .expect("token status")
        .token;
    let admin = std::fs::read_to_string(&ClusterFiles::require().admin_kubeconfig).expect("admin kubeconfig");
    let admin: serde_json::Value = serde_saphyr::from_str(&admin).expect("kubeconfig YAML");
    let cluster = admin["clusters"][0]["cluster"].clone();
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": cluster}],
        "users": [{"name": sa, "user": {"token": token}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": sa, "namespace": namespace}}],
        "current-context": "e2e",
    });
    let path = ptah_apitests::e2e_log_file(&format!("{namespace}-manager.kubeconfig"));
    std::fs::write(&path, kubeconfig.to_string()).expect("kubeconfig");
    (path, cluster_scoped)
}

/// Deletes cluster-scoped objects a test created (best effort; namespaces are left to expire).
pub async fn delete_cluster_scoped(client: &Client, objects: &[(String, String)]) {
    use k8s_openapi::api::{
        admissionregistration::v1::{ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding},
        rbac::v1::{ClusterRole, ClusterRoleBinding},
    };
    use kube::api::DeleteParams;
    let dp = DeleteParams::default();
    for (kind, name) in objects {
        let _ = match kind.as_str() {
            "ClusterRole" => Api::<ClusterRole>::all(client.clone())
                .delete(name, &dp)
                .await
                .map(drop),
            "ValidatingAdmissionPolicy" => Api::<ValidatingAdmissionPolicy>::all(client.clone())
                .delete(name, &dp)
                .await
                .map(drop),
            "ValidatingAdmissionPolicyBinding" => {
                Api::<ValidatingAdmissionPolicyBinding>::all(client.clone())
                    .delete(name, &dp)
                    .await
                    .map(drop)
            }
            _ => Api::<ClusterRoleBinding>::all(client.clone())
                .delete(name, &dp)
                .await
                .map(drop),
        };
    }
}

/// How many Apply Jobs `jobs` (one namespace's) holds.
pub async fn apply_jobs(jobs: &Api<k8s_openapi::api::batch::v1::Job>) -> usize {
    jobs.list(&ListParams::default().labels("operator.ptah.run/operation=apply"))
        .await
        .expect("jobs")
        .items
        .len()
}
