//! Support of the schema-lifecycle suite: the manager as a process, the database on the host,
//! waiting on a PtahSchema, and the credential scan.

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
use ptah_api::PtahSchema;
use ptah_apitests::{ClusterFiles, workspace_root};

/// The manager binary running against the test cluster, killed when dropped.
pub struct Manager {
    bin: PathBuf,
    args: Vec<String>,
    log: PathBuf,
    child: Option<Child>,
}

impl Manager {
    /// Starts `manager` scoped to `namespace` (also its coordination namespace).
    pub fn start(namespace: &str, image: &str) -> Manager {
        let bin = ptah_apitests::e2e::build_bin("ptah-manager", "manager");
        let dir = workspace_root().join("target/e2e/logs");
        std::fs::create_dir_all(&dir).expect("log dir");
        let args = vec![
            format!("--coordination-namespace={namespace}"),
            format!("--watch-namespace={namespace}"),
            format!("--executor-image={image}"),
            format!("--runner-image={image}"),
            format!("--identity=e2e-{namespace}"),
            "--http-addr=127.0.0.1:0".to_owned(),
            "--leader-lease-seconds=5".to_owned(),
            "--log-format=json".to_owned(),
        ];
        let mut m = Manager {
            bin,
            args,
            log: dir.join(format!("manager-{namespace}.log")),
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
            .env("KUBECONFIG", &ClusterFiles::require().admin_kubeconfig)
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

/// Polls the schema until `pred` holds; panics with its last status and the manager's log tail.
pub async fn wait_for(
    api: &Api<PtahSchema>,
    name: &str,
    what: &str,
    timeout: Duration,
    manager: &Manager,
    pred: impl Fn(&PtahSchema) -> bool,
) -> PtahSchema {
    let deadline = Instant::now() + timeout;
    loop {
        let s = api.get(name).await.unwrap_or_else(|e| panic!("get {name}: {e}"));
        if pred(&s) {
            return s;
        }
        if Instant::now() > deadline {
            let log = manager.log();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            panic!(
                "timed out after {timeout:?} waiting for {what}\nstatus: {}\nmanager log ({}) tail:\n{}",
                summary(&s),
                manager.log_path().display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
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
