//! The isolation worker's faults against the real node: each takes effect and its undo ends it.
//!
//! Phase `dataplane` of suite `data-plane-extended` (`cargo xtask e2e --suite
//! data-plane-extended`, which starts the node). Needs `cargo xtask services up` and `cargo xtask cluster up --nodes 2`, and fails naming
//! that command when the isolation worker is absent.

use std::{
    path::PathBuf,
    process::Command,
    time::{Duration, Instant},
};

use ptah_testenv::{cluster::faults::IsolationNode, step::workspace_root};

/// The cluster the e2e driver names (`PTAH_CLUSTER_DIR`), else the local provider's.
fn cluster_dir() -> PathBuf {
    std::env::var_os("PTAH_CLUSTER_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| workspace_root().join("target").join("cluster"), PathBuf::from)
}

/// The Node's `Ready` condition status (`True`, `False`, `Unknown`), read as the admin.
fn ready_status(node: &str) -> String {
    let dir = cluster_dir();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("cluster.json")).expect("cluster.json"))
            .expect("json");
    let pki = dir.join("pki");
    let out = Command::new("curl")
        .args(["-sf", "--max-time", "5", "--cacert"])
        .arg(pki.join("ca.crt"))
        .arg("--cert")
        .arg(pki.join("admin.crt"))
        .arg("--key")
        .arg(pki.join("admin.key"))
        .arg(format!(
            "{}/api/v1/nodes/{node}",
            state["server"].as_str().expect("server")
        ))
        .output()
        .expect("curl");
    let node: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    node["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["status"].as_str())
        .unwrap_or("missing")
        .to_owned()
}

/// Waits until the Node's readiness is (or is not) `True`; returns how long that took.
fn wait_ready(node: &str, ready: bool, limit: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let status = ready_status(node);
        if (status == "True") == ready {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < limit,
            "node {node}: Ready={status} after {limit:?}, want ready={ready}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn e2e_dataplane_isolation_worker_faults_take_effect_and_their_undo_ends_them() {
    // Fails loudly, naming `cargo xtask cluster up --nodes 2`, when the node is absent.
    let node = IsolationNode::load(&cluster_dir()).unwrap_or_else(|e| panic!("{e}"));
    let services = ptah_testservices::TestServices::require();
    let pg_port = url::Url::parse(services.postgres.url.expose())
        .expect("url")
        .port()
        .expect("port");
    let probe = Duration::from_secs(3);
    let name = node.node_name.clone();
    wait_ready(&name, true, Duration::from_secs(60));

    // The databases: a connection from the namespace opens before, hangs during, opens after.
    assert!(
        node.can_connect(node.gateway, pg_port, probe),
        "PostgreSQL before the cut"
    );
    let cut = node.cut_databases().expect("cut the databases");
    assert!(
        !node.can_connect(node.gateway, pg_port, probe),
        "PostgreSQL during the cut"
    );
    assert!(
        node.can_connect(node.gateway, node.apiserver_port, probe),
        "the database cut must leave the API server reachable"
    );
    cut.undo().expect("undo the database cut");
    assert!(
        node.can_connect(node.gateway, pg_port, probe),
        "PostgreSQL after the undo"
    );

    // The API server: unreachable from the namespace, the Node goes NotReady, then recovers.
    let cut = node.cut_api_server().expect("cut the API server");
    assert!(
        !node.can_connect(node.gateway, node.apiserver_port, probe),
        "API server during the cut"
    );
    assert!(
        node.can_connect(node.gateway, pg_port, probe),
        "the API cut must leave the databases"
    );
    let lost = wait_ready(&name, false, Duration::from_secs(150));
    cut.undo().expect("undo the API cut");
    let back = wait_ready(&name, true, Duration::from_secs(120));
    eprintln!("API server cut: NotReady after {lost:?}; Ready {back:?} after the undo");

    // The kubelet: frozen, the Node goes NotReady; thawed, it recovers.
    let frozen = node.freeze_kubelet().expect("freeze the kubelet");
    let lost = wait_ready(&name, false, Duration::from_secs(150));
    frozen.undo().expect("thaw the kubelet");
    let back = wait_ready(&name, true, Duration::from_secs(120));
    eprintln!("kubelet frozen: NotReady after {lost:?}; Ready {back:?} after SIGCONT");

    // A dropped guard undoes its fault too.
    drop(node.cut_databases().expect("cut again"));
    assert!(
        node.can_connect(node.gateway, pg_port, probe),
        "a dropped fault is undone"
    );
}
