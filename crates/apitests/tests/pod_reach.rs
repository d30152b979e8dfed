//! T4 (`e2e_pod_reaches_…`, left out of the ordinary test run; phase `pod-reaches` of
//! `cargo xtask e2e --suite pod-reach`): a Pod of the full local tier reaches the test services through the pod relay on
//! the bridge gateway (`target/cluster/pod-endpoints.env`, written by `cargo xtask cluster up` or
//! `cargo xtask cluster relay`): PostgreSQL and MariaDB with URLs from a Secret, and the TLS
//! registry verified by IP with the services CA from a ConfigMap and credentials from a Secret,
//! resolving an artifact the host pushed first.

mod common;

use std::{
    collections::HashMap,
    path::PathBuf,
    process::Command,
    time::{Duration, Instant},
};

use base64::{Engine, engine::general_purpose::STANDARD};
use common::{admin, namespace};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use kube::{
    Api,
    api::{DeleteParams, LogParams},
};
use ptah_apitests::{
    ClusterFiles,
    e2e::{create, host_ptah, pod_endpoints},
};
use ptah_testservices::TestServices;
use serde_json::{Value, json};

/// Pushes a one-migration artifact from the host; returns its manifest digest.
fn push_artifact(services: &TestServices, repository: &str) -> String {
    let bin = ptah_apitests::e2e::build_bin("ptah-cli", "ptah");
    let dir = tempfile_dir();
    std::fs::write(
        dir.join("0000000001_probe.up.sql"),
        "CREATE TABLE probe (id int);\n",
    )
    .expect("up");
    std::fs::write(dir.join("0000000001_probe.down.sql"), "DROP TABLE probe;\n").expect("down");
    let dir_arg = dir.display().to_string();
    let status = Command::new(&bin)
        .args(["migrations", "hash", "--dir", &dir_arg])
        .status()
        .expect("ptah migrations hash");
    assert!(status.success());
    let reference = format!("oci://{}/{repository}:v1", services.registry.host);
    let pushed = host_ptah(
        &bin,
        services,
        &[
            "oci",
            "push",
            "--kind",
            "migrations",
            "--dir",
            &dir_arg,
            &reference,
        ],
    );
    std::fs::remove_dir_all(&dir).expect("clean");
    pushed["digest"].as_str().expect("digest").to_owned()
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(ptah_apitests::client::unique("pod-reach"));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A container of the probe Pod: the image's `ptah` with `args`, read-only root, non-root.
fn container(name: &str, args: &[&str], env: Value, mounts: Value) -> Value {
    json!({
        "name": name,
        "args": args,
        "env": env,
        "volumeMounts": mounts,
        "securityContext": {
            "readOnlyRootFilesystem": true,
            "allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"]},
        },
    })
}

#[tokio::test]
async fn e2e_pod_reaches_services() {
    let files = ClusterFiles::require();
    assert_eq!(files.tier, "full", "needs `cargo xtask cluster up` (full tier)");
    let services = TestServices::require();
    let endpoints = pod_endpoints();
    let gateway = &endpoints["PTAH_POD_GATEWAY"];
    let pod_registry = &endpoints["PTAH_POD_REGISTRY"];
    let client = admin().await;
    let ns = namespace(&client, "podreach").await;

    let repository = format!("pod-reach/{ns}");
    let digest = push_artifact(&services, &repository);

    // The kubelet pulls from 127.0.0.1 on the host; the Pod talks to the gateway.
    let registry = &services.registry;
    let auth = STANDARD.encode(format!("{}:{}", registry.username, registry.password.expose()));
    let pull = json!({"auths": {registry.host.clone(): {"auth": auth}}}).to_string();
    let pod_auth = json!({"auths": {pod_registry.clone(): {"auth": auth}}}).to_string();
    let secrets = Api::<Secret>::namespaced(client.clone(), &ns);
    create(
        &secrets,
        json!({
            "metadata": {"name": "pull", "namespace": ns},
            "type": "kubernetes.io/dockerconfigjson",
            "stringData": {".dockerconfigjson": pull},
        }),
    )
    .await;
    create(
        &secrets,
        json!({
            "metadata": {"name": "reach", "namespace": ns},
            "stringData": {
                "pg-url": endpoints["PTAH_POD_PG_URL"],
                "mariadb-url": endpoints["PTAH_POD_MARIADB_URL"],
                "config.json": pod_auth,
            },
        }),
    )
    .await;
    let ca = String::from_utf8(registry.ca_pem().expect("CA")).expect("PEM");
    create(
        &Api::<ConfigMap>::namespaced(client.clone(), &ns),
        json!({"metadata": {"name": "registry-ca", "namespace": ns}, "data": {"ca.pem": ca}}),
    )
    .await;

    let db_env = |key: &str| {
        json!([
            {"name": "PTAH_DB_URL", "valueFrom": {"secretKeyRef": {"name": "reach", "key": key}}},
            {"name": "PTAH_LOG", "value": "warn"},
        ])
    };
    let db_mounts = json!([{"name": "migrations", "mountPath": "/migrations"}]);
    let status = ["migrations", "status", "--dir", "/migrations", "--format", "json"];
    let reference = format!("oci://{pod_registry}/{repository}:v1");
    let pod = json!({
        "metadata": {"name": "reach", "namespace": ns},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": false,
            "enableServiceLinks": false,
            "imagePullSecrets": [{"name": "pull"}],
            "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532},
            "containers": [
                container("postgresql", &status, db_env("pg-url"), db_mounts.clone()),
                container("mariadb", &status, db_env("mariadb-url"), db_mounts),
                container(
                    "registry",
                    &["oci", "resolve", "--format", "json", &reference],
                    json!([
                        {"name": "DOCKER_CONFIG", "value": "/docker"},
                        {"name": "PTAH_OCI_CA_FILE", "value": "/ca/ca.pem"},
                        {"name": "PTAH_LOG", "value": "warn"},
                    ]),
                    json!([
                        {"name": "docker", "mountPath": "/docker", "readOnly": true},
                        {"name": "ca", "mountPath": "/ca", "readOnly": true},
                    ]),
                ),
            ],
            "volumes": [
                {"name": "migrations", "emptyDir": {"sizeLimit": "1Mi"}},
                {"name": "docker", "secret": {"secretName": "reach",
                    "items": [{"key": "config.json", "path": "config.json"}]}},
                {"name": "ca", "configMap": {"name": "registry-ca"}},
            ],
        },
    });
    let image = format!("{}/ptah/data-plane:dev", registry.host);
    let mut pod = pod;
    for c in pod["spec"]["containers"].as_array_mut().expect("containers") {
        c["image"] = json!(image);
    }
    let pods = Api::<Pod>::namespaced(client.clone(), &ns);
    create(&pods, pod).await;

    let deadline = Instant::now() + Duration::from_secs(180);
    let finished = loop {
        let live = pods.get("reach").await.expect("get pod");
        let phase = live
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        if phase == "Succeeded" || phase == "Failed" {
            break live;
        }
        assert!(
            Instant::now() < deadline,
            "the pod did not finish in 180s: {:?}",
            live.status
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };

    let mut reports = HashMap::new();
    for name in ["postgresql", "mariadb", "registry"] {
        let params = LogParams {
            container: Some(name.to_owned()),
            ..LogParams::default()
        };
        let log = pods.logs("reach", &params).await.expect("logs");
        let code = finished
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.name == name))
            .and_then(|c| c.state.as_ref()?.terminated.as_ref())
            .map(|t| t.exit_code);
        assert_eq!(code, Some(0), "{name} failed in the Pod; its log:\n{log}");
        let report: Value = serde_json::from_str(log.trim()).unwrap_or_else(|e| panic!("{name}: {e}: {log}"));
        reports.insert(name, report);
    }
    for name in ["postgresql", "mariadb"] {
        let url = reports[name]["database_url"].as_str().unwrap_or_default();
        assert!(
            url.contains(&format!("@{gateway}:")),
            "{name} was not reached on the gateway: {url}"
        );
        assert_eq!(reports[name]["exit_code"], 0, "{name}: {}", reports[name]);
    }
    assert_eq!(reports["postgresql"]["dialect"], "postgresql");
    assert_eq!(
        reports["registry"]["digest"].as_str(),
        Some(digest.as_str()),
        "the Pod resolved another digest than the host pushed: {}",
        reports["registry"]
    );
    assert!(
        finished
            .status
            .and_then(|s| s.pod_ip)
            .is_some_and(|ip| ip.starts_with("10.244.77.")),
        "the Pod is not on the CNI bridge"
    );

    let _ = Api::<Namespace>::all(client)
        .delete(&ns, &DeleteParams::default())
        .await;
}
