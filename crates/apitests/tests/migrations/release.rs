//! The chart installed by `helm install` with the locally built images, scoped to one
//! application namespace, and uninstalled when the test ends (also when it panics).

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    apps::v1::Deployment,
    core::v1::{Namespace, Secret},
    rbac::v1::RoleBinding,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams},
};
use ptah_apitests::{
    ClusterFiles,
    e2e::{create, helm, image_reference},
    workspace_root,
};
use ptah_testservices::TestServices;
use serde_json::json;

use super::{RELEASE, STEP, manager_story, run};

pub(crate) async fn pull_secret(client: &Client, ns: &str, services: &TestServices) {
    let auth = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!(
            "{}:{}",
            services.registry.username,
            services.registry.password.expose()
        ),
    );
    let docker = json!({"auths": {services.registry.host.clone(): {"auth": auth}}}).to_string();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    create(
        &secrets,
        json!({"metadata": {"name": "pull"}, "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": docker}}),
    )
    .await;
}

pub(crate) fn helm_cmd(kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(helm());
    cmd.env("KUBECONFIG", kubeconfig);
    cmd
}

/// `helm install` scoped to `app_ns` (watch scope and webhook namespaceSelector); waits for both
/// manager replicas; binds the chart's approver role to the unprivileged user in `app_ns`.
pub(crate) async fn install(client: &Client, app_ns: &str, services: &TestServices, image: &str) -> String {
    let cluster = ClusterFiles::require();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            app_ns,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"ptah-e2e": app_ns}}})),
        )
        .await
        .expect("label the application namespace");
    // A release left by an earlier, aborted run holds the cluster-scoped webhook names.
    let _ = helm_cmd(&cluster.admin_kubeconfig)
        .args(["list", "-A", "-q"])
        .output()
        .map(|o| {
            for line in String::from_utf8_lossy(&o.stdout).lines() {
                if line.trim() == RELEASE {
                    eprintln!("a release {RELEASE} from an earlier run is still installed");
                }
            }
        });
    let release_ns = crate::common::namespace(client, "ptah-system").await;
    pull_secret(client, &release_ns, services).await;
    let chart = workspace_root().join("charts/ptah-operator");
    let out = run(helm_cmd(&cluster.admin_kubeconfig)
        .args(["install", RELEASE])
        .arg(&chart)
        .args(["--namespace", &release_ns, "--wait", "--timeout", "5m"])
        .args(["--set", &format!("image.manager={}", image_reference("manager"))])
        .args([
            "--set",
            &format!("image.certRotator={}", image_reference("cert-rotator")),
        ])
        .args(["--set", &format!("image.executor={image}")])
        .args(["--set", &format!("image.runner={image}")])
        .args(["--set", "imagePullSecrets[0].name=pull"])
        .args(["--set", &format!("watchNamespace={app_ns}")])
        .args([
            "--set",
            &format!("webhooks.namespaceSelector.matchLabels.ptah-e2e={app_ns}"),
        ]));
    assert!(out.contains("STATUS: deployed"), "{out}");
    let deadline = Instant::now() + STEP;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &release_ns);
    loop {
        let ready = deployments
            .get_opt("ptah-ptah-operator-manager")
            .await
            .ok()
            .flatten()
            .and_then(|d| d.status)
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        if ready >= 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the manager never became ready\n{}",
            manager_story(client, &release_ns, 30).await
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), app_ns);
    create(&bindings, json!({
        "metadata": {"name": "approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ptah-ptah-operator-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cluster.user_name}]
    }))
    .await;
    release_ns
}

pub(crate) fn uninstall(release_ns: &str) {
    let cluster = ClusterFiles::require();
    run(helm_cmd(&cluster.admin_kubeconfig).args([
        "uninstall",
        RELEASE,
        "--namespace",
        release_ns,
        "--wait",
    ]));
}

/// Uninstalls the release when the test ends (also when it panics), so the next one can install.
pub(crate) struct Release(pub(crate) String);

impl Drop for Release {
    fn drop(&mut self) {
        let cluster = ClusterFiles::require();
        let _ = helm_cmd(&cluster.admin_kubeconfig)
            .args(["uninstall", RELEASE, "--namespace", &self.0, "--wait"])
            .output();
    }
}
