//! T4 (`e2e_cluster_services_…`, left out of the ordinary test run; phase `cluster-services` of
//! `cargo xtask e2e --suite cluster-services`): Services work in the full local tier, as a real
//! in-cluster install needs.
//!
//! * The manager image, run as a Pod with its automounted ServiceAccount token and no kubeconfig,
//!   reaches the API server through the `kubernetes` Service (kube-rs's in-cluster configuration
//!   reads `KUBERNETES_SERVICE_HOST`/`PORT`, which the kubelet sets to its ClusterIP) and takes
//!   the leader Lease.
//! * A Pod behind a Service is reached by the API server (its service proxy dials an endpoint
//!   IP, the path admission webhooks take with `--enable-aggregator-routing`), by this host on the
//!   Pod IP and on the ClusterIP, and by another Pod through the Service's environment variables.

mod common;

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    process::Command,
    time::{Duration, Instant},
};

use base64::{Engine, engine::general_purpose::STANDARD};
use common::{admin, ensure_crds, namespace};
use k8s_openapi::api::{
    coordination::v1::Lease,
    core::v1::{Namespace, Pod, Secret, Service, ServiceAccount},
    discovery::v1::EndpointSlice,
    rbac::v1::ClusterRoleBinding,
};
use kube::{
    Api, Client,
    api::{DeleteParams, ListParams, LogParams},
};
use ptah_apitests::{
    ClusterFiles,
    e2e::{create, k8s_cache},
    workspace_root,
};
use ptah_testservices::TestServices;
use serde_json::{Value, json};

/// The pause image the node imports at start (busybox-static; `imagePullPolicy: Never`).
const BUSYBOX_IMAGE: &str = "localhost/ptah/pause:v1";
/// What the web Pod serves.
const GREETING: &str = "ptah-cluster-services-ok";

/// The pinned reference `cargo xtask images` wrote for image `name`.
fn image(name: &str) -> String {
    let path = workspace_root().join(format!("target/images/{name}/reference"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `cargo xtask images` (the e2e driver does)",
            path.display()
        )
    });
    text.trim().to_owned()
}

/// Non-root, read-only, no capabilities: what the chart's Pods run with.
fn restricted() -> Value {
    json!({
        "readOnlyRootFilesystem": true,
        "allowPrivilegeEscalation": false,
        "capabilities": {"drop": ["ALL"]},
    })
}

/// Polls `pod` until `done` holds for it; panics with its status and log after `timeout`.
async fn wait_pod(pods: &Api<Pod>, name: &str, timeout: Duration, done: impl Fn(&Pod) -> bool) -> Pod {
    let deadline = Instant::now() + timeout;
    loop {
        let pod = pods.get(name).await.expect("get pod");
        if done(&pod) {
            return pod;
        }
        if Instant::now() > deadline {
            let log = pods.logs(name, &LogParams::default()).await.unwrap_or_default();
            panic!(
                "pod {name} timed out after {timeout:?}: {:?}\nlog:\n{log}",
                pod.status
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn phase(pod: &Pod) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default()
}

async fn delete_namespace(client: &Client, ns: &str) {
    let _ = Api::<Namespace>::all(client.clone())
        .delete(ns, &DeleteParams::default())
        .await;
}

#[tokio::test]
async fn e2e_cluster_services_manager_pod_reaches_the_api_through_the_kubernetes_service() {
    let files = ClusterFiles::require();
    assert_eq!(files.tier, "full", "needs `cargo xtask cluster up` (full tier)");
    let services = TestServices::require();
    let manager_image = image("manager");
    let data_plane_image = image("data-plane");
    let client = admin().await;
    ensure_crds(&client).await;

    let kubernetes = Api::<Service>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .expect("the kubernetes Service");
    let cluster_ip = kubernetes.spec.and_then(|s| s.cluster_ip).unwrap_or_default();
    let slice = Api::<EndpointSlice>::namespaced(client.clone(), "default")
        .get("kubernetes")
        .await
        .expect("the kubernetes EndpointSlice (written by `cargo xtask cluster up`)");
    let endpoint = slice.endpoints.first().and_then(|e| e.addresses.first().cloned());
    assert_eq!(
        endpoint.as_deref(),
        Some("10.244.77.1"),
        "the API server's endpoint is the bridge gateway (pod relay); Service {cluster_ip}"
    );

    let ns = namespace(&client, "clustersvc").await;
    let registry = &services.registry;
    let auth = STANDARD.encode(format!("{}:{}", registry.username, registry.password.expose()));
    let pull = json!({"auths": {registry.host.clone(): {"auth": auth}}}).to_string();
    create(
        &Api::<Secret>::namespaced(client.clone(), &ns),
        json!({
            "metadata": {"name": "pull", "namespace": ns},
            "type": "kubernetes.io/dockerconfigjson",
            "stringData": {".dockerconfigjson": pull},
        }),
    )
    .await;
    create(
        &Api::<ServiceAccount>::namespaced(client.clone(), &ns),
        json!({"metadata": {"name": "manager", "namespace": ns}}),
    )
    .await;
    // Connectivity is under test here, not the chart's RBAC (crates/controllerstate tests that).
    let binding = format!("{ns}-manager");
    let bindings = Api::<ClusterRoleBinding>::all(client.clone());
    create(
        &bindings,
        json!({
            "metadata": {"name": binding},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "manager", "namespace": ns}],
        }),
    )
    .await;

    let pods = Api::<Pod>::namespaced(client.clone(), &ns);
    create(
        &pods,
        json!({
            "metadata": {"name": "manager", "namespace": ns},
            "spec": {
                "serviceAccountName": "manager",
                "automountServiceAccountToken": true,
                "imagePullSecrets": [{"name": "pull"}],
                "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532},
                "containers": [{
                    "name": "manager",
                    "image": manager_image,
                    "args": [
                        format!("--coordination-namespace={ns}"),
                        format!("--watch-namespace={ns}"),
                        format!("--executor-image={data_plane_image}"),
                        format!("--runner-image={data_plane_image}"),
                        "--leader-lease-seconds=5",
                        "--log-format=json",
                    ],
                    "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "securityContext": restricted(),
                }],
            },
        }),
    )
    .await;

    let leases = Api::<Lease>::namespaced(client.clone(), &ns);
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let holder = leases
            .get_opt("ptah-operator-leader")
            .await
            .expect("get lease")
            .and_then(|l| l.spec?.holder_identity);
        if holder.as_deref() == Some("manager") {
            break;
        }
        if Instant::now() > deadline {
            let pod = pods.get("manager").await.expect("get pod");
            let log = pods
                .logs("manager", &LogParams::default())
                .await
                .unwrap_or_default();
            panic!(
                "the in-cluster manager did not take the leader Lease (holder {holder:?}); pod {:?}\nlog:\n{log}",
                pod.status
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The kubelet reports the Pod IP a moment after the container started.
    let on_bridge = |pod: &Pod| {
        pod.status
            .as_ref()
            .and_then(|s| s.pod_ip.as_ref())
            .is_some_and(|ip| ip.starts_with("10.244.77."))
    };
    wait_pod(&pods, "manager", Duration::from_secs(30), on_bridge).await;

    let _ = bindings.delete(&binding, &DeleteParams::default()).await;
    delete_namespace(&client, &ns).await;
}

/// `GET /` over plain HTTP/1.0 to `addr` (blocking, with timeouts); the response, or the error.
fn http_get(addr: &str) -> Result<String, String> {
    let socket: SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    let mut stream = TcpStream::connect_timeout(&socket, Duration::from_secs(5))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET / HTTP/1.0\r\n\r\n")
        .map_err(|e| format!("write to {addr}: {e}"))?;
    let mut text = String::new();
    stream
        .read_to_string(&mut text)
        .map_err(|e| format!("read from {addr}: {e}"))?;
    Ok(text)
}

#[tokio::test]
async fn e2e_cluster_services_a_pod_behind_a_service_is_reached_by_api_server_host_and_pods() {
    let files = ClusterFiles::require();
    assert_eq!(files.tier, "full", "needs `cargo xtask cluster up` (full tier)");
    let client = admin().await;
    let ns = namespace(&client, "clustersvc").await;
    let pods = Api::<Pod>::namespaced(client.clone(), &ns);
    let serve = format!("echo {GREETING} > /www/index.html && exec /bin/busybox httpd -f -p 8080 -h /www");
    create(
        &pods,
        json!({
            "metadata": {"name": "web", "namespace": ns, "labels": {"app": "web"}},
            "spec": {
                "automountServiceAccountToken": false,
                "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532},
                "containers": [{
                    "name": "web",
                    "image": BUSYBOX_IMAGE,
                    "imagePullPolicy": "Never",
                    "command": ["/bin/sh", "-c", serve],
                    "ports": [{"containerPort": 8080, "name": "http"}],
                    "readinessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 1},
                    "volumeMounts": [{"name": "www", "mountPath": "/www"}],
                    "securityContext": restricted(),
                }],
                "volumes": [{"name": "www", "emptyDir": {"sizeLimit": "1Mi"}}],
            },
        }),
    )
    .await;
    let services = Api::<Service>::namespaced(client.clone(), &ns);
    let service = create(
        &services,
        json!({
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
        }),
    )
    .await;
    let cluster_ip = service.spec.and_then(|s| s.cluster_ip).expect("ClusterIP");

    let ready = |pod: &Pod| {
        pod.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    };
    let web = wait_pod(&pods, "web", Duration::from_secs(120), ready).await;
    let pod_ip = web.status.and_then(|s| s.pod_ip).expect("pod IP");
    let slices = Api::<EndpointSlice>::namespaced(client.clone(), &ns);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = slices
            .list(&ListParams::default().labels("kubernetes.io/service-name=web"))
            .await
            .expect("list slices");
        let has_pod = listed.items.iter().any(|s| {
            s.endpoints.iter().any(|e| {
                e.addresses.contains(&pod_ip) && e.conditions.as_ref().and_then(|c| c.ready) == Some(true)
            })
        });
        if has_pod {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no ready endpoint {pod_ip} for Service web"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // The API server dials an endpoint IP of the Service: the path of webhook calls under
    // `--enable-aggregator-routing`.
    let kubectl = k8s_cache().join(&files.version).join("kubectl");
    let out = Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(&files.admin_kubeconfig)
        .args([
            "get",
            "--raw",
            &format!("/api/v1/namespaces/{ns}/services/http:web:http/proxy/"),
        ])
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", kubectl.display()));
    let proxied = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the API server did not reach the Service's Pod: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(proxied.trim(), GREETING);

    // This host, on the Pod IP (over the bridge) and on the ClusterIP (kube-proxy's rules, which
    // follow the EndpointSlice within its sync period: retried for a while). Until the rules
    // exist the ClusterIP follows the default route, and on a host behind a transparent proxy
    // something else answers (`426 Upgrade Required` from the proxy): that is "not yet" too.
    for addr in [format!("{pod_ip}:8080"), format!("{cluster_ip}:80")] {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let target = addr.clone();
            let outcome = tokio::task::spawn_blocking(move || http_get(&target))
                .await
                .expect("join");
            match outcome {
                Ok(response) if response.contains(GREETING) => break,
                Ok(response) if Instant::now() > deadline => panic!("{addr} answered {response:?}"),
                Err(e) if Instant::now() > deadline => panic!("{e}"),
                _ => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }

    // Another Pod, through the Service's environment variables and kube-proxy.
    // No `-T`: busybox-static 1.35's wget segfaults with it; the wait below bounds the time.
    let fetch = "exec /bin/busybox wget -q -O- http://$WEB_SERVICE_HOST:$WEB_SERVICE_PORT/";
    create(
        &pods,
        json!({
            "metadata": {"name": "client", "namespace": ns},
            "spec": {
                "restartPolicy": "Never",
                "automountServiceAccountToken": false,
                "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532},
                "containers": [{
                    "name": "client",
                    "image": BUSYBOX_IMAGE,
                    "imagePullPolicy": "Never",
                    "command": ["/bin/sh", "-c", fetch],
                    "securityContext": restricted(),
                }],
            },
        }),
    )
    .await;
    let finished = |pod: &Pod| matches!(phase(pod).as_str(), "Succeeded" | "Failed");
    let done = wait_pod(&pods, "client", Duration::from_secs(120), finished).await;
    let log = pods.logs("client", &LogParams::default()).await.expect("logs");
    assert_eq!(
        phase(&done),
        "Succeeded",
        "the client Pod failed; its log:\n{log}"
    );
    assert_eq!(log.trim(), GREETING);

    delete_namespace(&client, &ns).await;
}
