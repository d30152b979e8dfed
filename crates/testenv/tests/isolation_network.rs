//! The isolation worker's network against the real nodes: Pods on either node reach a Pod and a
//! Service on the other, the test services and the API server; the API server reaches the
//! isolation worker's kubelet (`kubectl logs`, `exec`).
//!
//! Phase `fault` of suite `data-plane` (`cargo xtask e2e --suite data-plane`, which starts the
//! node). Needs `cargo xtask services up` and `cargo xtask cluster up --nodes 2`, and fails naming
//! that command when the isolation worker is absent.

use std::{path::PathBuf, process::Command};

use ptah_testenv::{
    cluster::faults::IsolationNode,
    images::PAUSE_IMAGE,
    k8s::{Binaries, Component, Matrix},
    kind::config::ISOLATION_LABEL,
    step::workspace_root,
};

/// The cluster the e2e driver names (`PTAH_CLUSTER_DIR`), else the local provider's.
fn cluster_dir() -> PathBuf {
    std::env::var_os("PTAH_CLUSTER_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(|| workspace_root().join("target").join("cluster"), PathBuf::from)
}

struct Kubectl {
    program: PathBuf,
    kubeconfig: PathBuf,
}

impl Kubectl {
    fn new() -> Self {
        let root = workspace_root();
        let dir = cluster_dir();
        // Fails loudly, naming `cargo xtask cluster up --nodes 2`, when the node is absent.
        IsolationNode::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        let state: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("cluster.json")).expect("cluster.json"))
                .expect("json");
        let matrix = Matrix::load(&root).expect("matrix");
        let minor = matrix.select(state["version"].as_str()).expect("minor").clone();
        let program = Binaries::new(&minor, &matrix)
            .expect("binaries")
            .path(Component::Kubectl);
        assert!(
            program.is_file(),
            "{} is missing: cargo xtask k8s-bin --only kubectl",
            program.display()
        );
        Self {
            program,
            kubeconfig: dir.join("admin.kubeconfig"),
        }
    }

    /// Runs kubectl; panics with its stderr unless it succeeds; returns stdout.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> String {
        use std::io::Write;
        let mut child = Command::new(&self.program)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("kubectl");
        if let Some(mut input) = child.stdin.take() {
            input.write_all(stdin.unwrap_or("").as_bytes()).expect("stdin");
        }
        let out = child.wait_with_output().expect("kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A Pod serving `name` over HTTP on 8080 (busybox httpd from the pause image), on node 1 or on
/// the isolation worker, with a ClusterIP Service `name`.
fn web(namespace: &str, name: &str, isolated: bool) -> String {
    let placement = if isolated {
        format!(
            "nodeSelector: {{{ISOLATION_LABEL}: \"true\"}}\n  \
             tolerations: [{{key: {ISOLATION_LABEL}, operator: Equal, value: \"true\", effect: NoSchedule}}]"
        )
    } else {
        "nodeName: localhost".to_owned()
    };
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {namespace}, labels: {{app: {name}}}}}\n\
         spec:\n  {placement}\n  automountServiceAccountToken: false\n  \
         volumes: [{{name: w, emptyDir: {{}}}}]\n  containers:\n  - name: c\n    image: {PAUSE_IMAGE}\n    \
         imagePullPolicy: Never\n    volumeMounts: [{{name: w, mountPath: /w}}]\n    \
         command: [/bin/busybox, sh, -c, 'echo {name} > /w/index.html && echo serving && exec /bin/busybox httpd -f -p 8080 -h /w']\n\
         ---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
         spec: {{selector: {{app: {name}}}, ports: [{{port: 80, targetPort: 8080}}]}}\n"
    )
}

#[test]
fn e2e_fault_isolation_pods_on_both_nodes_reach_each_other_the_services_and_the_api_server() {
    let kubectl = Kubectl::new();
    let services = ptah_testservices::TestServices::require();
    let port = |url: &str| url::Url::parse(url).expect("url").port().expect("port");
    let db_ports = [
        port(services.postgres.url.expose()),
        port(services.mysql.url.expose()),
    ];
    let api_port = url::Url::parse(&format!(
        "https://{}",
        kubectl
            .run(
                &["config", "view", "-o", "jsonpath={.clusters[0].cluster.server}"],
                None
            )
            .trim_start_matches("https://")
    ))
    .expect("server")
    .port()
    .expect("port");
    let pinned = bridges();
    for (assigned, mac) in &pinned {
        assert_eq!(
            assigned, "3",
            "a pod bridge's MAC {mac} follows its ports instead of being pinned"
        );
    }
    let namespace = format!("isolation-net-{}", std::process::id());
    kubectl.run(&["create", "namespace", &namespace], None);
    let manifests = format!(
        "{}---\n{}",
        web(&namespace, "web1", false),
        web(&namespace, "web2", true)
    );
    kubectl.run(&["apply", "-f", "-"], Some(&manifests));
    kubectl.run(
        &[
            "-n",
            &namespace,
            "wait",
            "--for=condition=Ready",
            "pod",
            "--all",
            "--timeout=90s",
        ],
        None,
    );
    let field = |pod: &str, path: &str| {
        kubectl.run(
            &["-n", &namespace, "get", pod, "-o", &format!("jsonpath={path}")],
            None,
        )
    };
    assert_eq!(field("pod/web2", "{.spec.nodeName}"), "ptah-isolation");
    assert_eq!(field("pod/web1", "{.spec.nodeName}"), "localhost");
    let targets = [
        ("pod web1", field("pod/web1", "{.status.podIP}"), 8080, "web1"),
        ("pod web2", field("pod/web2", "{.status.podIP}"), 8080, "web2"),
        (
            "service web1",
            field("service/web1", "{.spec.clusterIP}"),
            80,
            "web1",
        ),
        (
            "service web2",
            field("service/web2", "{.spec.clusterIP}"),
            80,
            "web2",
        ),
    ];
    for from in ["web1", "web2"] {
        for (what, ip, port, body) in &targets {
            let got = kubectl.run(
                &[
                    "-n",
                    &namespace,
                    "exec",
                    from,
                    "--",
                    "/bin/busybox",
                    "sh",
                    "-c",
                    &format!(
                        "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /bin/busybox nc -w 5 {ip} {port} | tail -1"
                    ),
                ],
                None,
            );
            assert_eq!(got.trim(), *body, "from {from} to {what} ({ip}:{port})");
        }
        let mut endpoints: Vec<(String, u16)> =
            db_ports.iter().map(|p| ("10.244.77.1".to_owned(), *p)).collect();
        endpoints.push(("10.244.77.1".to_owned(), api_port));
        endpoints.push(("10.96.0.1".to_owned(), 443));
        for (ip, port) in endpoints {
            kubectl.run(
                &[
                    "-n",
                    &namespace,
                    "exec",
                    from,
                    "--",
                    "/bin/busybox",
                    "sh",
                    "-c",
                    &format!("/bin/busybox nc -w 5 {ip} {port} </dev/null"),
                ],
                None,
            );
        }
    }
    assert!(
        kubectl
            .run(&["-n", &namespace, "logs", "web2"], None)
            .contains("serving")
    );
    // Two Pods' veths joined the bridges: their MACs stayed as pinned, so no Pod's cached
    // gateway address went stale (cluster/bridge.rs).
    assert_eq!(bridges(), pinned, "the pod bridges' MACs moved");
    kubectl.run(&["delete", "namespace", &namespace, "--wait=false"], None);
}

/// Each node's pod bridge: (how its MAC was assigned, the MAC). `3` is `NET_ADDR_SET`: set by
/// hand, so the kernel no longer follows its ports.
fn bridges() -> Vec<(String, String)> {
    let read = |netns: Option<&str>, name: &str, file: &str| {
        let path = format!("/sys/class/net/{name}/{file}");
        let out = match netns {
            None => Command::new("cat").arg(&path).output(),
            Some(ns) => Command::new("ip")
                .args(["netns", "exec", ns, "cat", &path])
                .output(),
        }
        .expect("read the bridge");
        assert!(
            out.status.success(),
            "{path}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    [(None, "ptahcni0"), (Some("ptah-isolation"), "ptahcni1")]
        .into_iter()
        .map(|(ns, name)| (read(ns, name, "addr_assign_type"), read(ns, name, "address")))
        .collect()
}
