//! T4 smoke (`e2e_cluster_smoke_…`, left out of the ordinary test run): the full local tier
//! (`cargo xtask cluster up`, then `cargo xtask images`) runs a Job from the locally built
//! data-plane image pulled from the TLS registry of `cargo xtask services`, as a non-root user
//! with a read-only root filesystem and no service-account token, and its logs are read
//! through the API server.

mod common;

use std::time::{Duration, Instant};

use base64::{Engine, engine::general_purpose::STANDARD};
use common::{admin, namespace};
use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{Pod, Secret},
};
use kube::{
    Api,
    api::{ListParams, LogParams, PostParams},
};
use ptah_apitests::ClusterFiles;
use ptah_testservices::TestServices;
use serde_json::json;

#[tokio::test]
async fn e2e_cluster_smoke_a_job_from_the_local_image_completes_and_its_logs_are_read() {
    let files = ClusterFiles::require();
    assert_eq!(
        files.tier, "full",
        "the smoke test needs the full tier: run `cargo xtask cluster up` and `cargo xtask images`"
    );
    let services = TestServices::require();
    let registry = &services.registry;
    let image = format!("{}/ptah/data-plane:dev", registry.host);
    let client = admin().await;
    let ns = namespace(&client, "smoke").await;

    let auth = STANDARD.encode(format!("{}:{}", registry.username, registry.password.expose()));
    let docker_config = json!({"auths": {registry.host.clone(): {"auth": auth}}}).to_string();
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "registry", "namespace": ns},
        "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": docker_config},
    }))
    .expect("secret");
    Api::<Secret>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &secret)
        .await
        .expect("create the pull secret");

    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "ptah-version", "namespace": ns},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": {
                "restartPolicy": "Never",
                "automountServiceAccountToken": false,
                "imagePullSecrets": [{"name": "registry"}],
                "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532},
                "containers": [{
                    "name": "ptah",
                    "image": image,
                    "imagePullPolicy": "Always",
                    "args": ["--version"],
                    "securityContext": {
                        "readOnlyRootFilesystem": true,
                        "allowPrivilegeEscalation": false,
                        "capabilities": {"drop": ["ALL"]},
                    },
                }],
            }},
        },
    }))
    .expect("job");
    let jobs = Api::<Job>::namespaced(client.clone(), &ns);
    jobs.create(&PostParams::default(), &job)
        .await
        .expect("create the job");

    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let live = jobs.get("ptah-version").await.expect("get job");
        let status = live.status.unwrap_or_default();
        if status.succeeded.unwrap_or(0) >= 1 {
            break;
        }
        assert_eq!(status.failed.unwrap_or(0), 0, "the job failed: {status:?}");
        assert!(
            Instant::now() < deadline,
            "the job did not complete in 120s: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    let pods = Api::<Pod>::namespaced(client.clone(), &ns);
    let listed = pods
        .list(&ListParams::default().labels("job-name=ptah-version"))
        .await
        .expect("list pods");
    assert_eq!(listed.items.len(), 1);
    let pod = &listed.items[0];
    let name = pod.metadata.name.clone().expect("pod name");
    let logs = pods
        .logs(&name, &LogParams::default())
        .await
        .expect("logs through the API server");
    assert_eq!(logs.trim(), "ptah 0.1.0", "logs: {logs:?}");

    let spec = pod.spec.clone().expect("pod spec");
    let container = &spec.containers[0];
    let mounts = container.volume_mounts.clone().unwrap_or_default();
    assert!(
        !mounts
            .iter()
            .any(|m| m.mount_path.starts_with("/var/run/secrets/kubernetes.io")),
        "a service-account token is mounted: {mounts:?}"
    );
    let status = pod.status.clone().expect("pod status");
    let terminated = status
        .container_statuses
        .unwrap_or_default()
        .first()
        .and_then(|s| s.state.clone())
        .and_then(|s| s.terminated)
        .expect("terminated container");
    assert_eq!(terminated.exit_code, 0);
    assert!(
        status.pod_ip.is_some_and(|ip| ip.starts_with("10.244.")),
        "no pod IP from the CNI bridge"
    );
}
