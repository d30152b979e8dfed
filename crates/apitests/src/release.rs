//! The chart installed with `helm install` for one application namespace, as the full-tier
//! suites that run the in-cluster manager use it: pull secrets, the install (watch scope and
//! webhook selector = the application namespace, the chart's approver role bound to the
//! unprivileged user), its uninstall guard, the manager's log tails, its real `/metrics` through
//! the API server's pod proxy, and the promtool `cargo xtask k8s-bin` builds.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use k8s_openapi::{
    ByteString,
    api::{
        apps::v1::Deployment,
        core::v1::{Namespace, Pod, Secret},
        rbac::v1::RoleBinding,
    },
};
use kube::{
    Api, Client, ResourceExt,
    api::{GetParams, ListParams, LogParams, Patch, PatchParams},
};
use ptah_testservices::TestServices;
use serde_json::json;

use crate::{
    ClusterFiles,
    e2e::{create, helm},
    workspace_root,
};
pub use crate::{
    chartsource::ChartSource,
    exposition::{Sample, parse_exposition},
};

/// The release name every helm-installed suite uses (the webhook names are cluster-scoped, so
/// only one such release exists at a time: the suites take turns).
pub const RELEASE: &str = "ptah";
/// The manager Deployment of [`RELEASE`].
pub const MANAGER_DEPLOYMENT: &str = "ptah-ptah-operator-manager";
/// The port the manager serves `/metrics` on (chart `metrics.service.port`).
pub const METRICS_PORT: u16 = 8080;

/// Runs a command and returns its stdout; panics with both streams when it fails.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// helm with `KUBECONFIG` set.
pub fn helm_cmd(kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(helm());
    cmd.env("KUBECONFIG", kubeconfig);
    cmd
}

/// The Secret `registry` an application's PtahSchemas and PtahMigrations name in
/// `registryAuthFrom`: the TLS registry's credentials and their grant, the authority Pods reach
/// it at (`pod_registry`) and the digest of the CA the `registry-ca` ConfigMap holds.
pub async fn registry_secret(client: &Client, ns: &str, services: &TestServices, pod_registry: &str) {
    let ca = services.registry.ca_pem().expect("the registry CA");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    create(
        &secrets,
        json!({"metadata": {"name": "registry"}, "stringData": {
            "username": services.registry.username,
            "password": services.registry.password.expose(),
            (ptah_registrygrant::KEY_REGISTRY): pod_registry,
            (ptah_registrygrant::KEY_CA_SHA256): ptah_fingerprint::Digest::of(&ca).to_string(),
        }}),
    )
    .await;
}

/// A `kubernetes.io/dockerconfigjson` Secret `pull` for the services' TLS registry.
pub async fn pull_secret(client: &Client, ns: &str, services: &TestServices) {
    let userpass = format!(
        "{}:{}",
        services.registry.username,
        services.registry.password.expose()
    );
    // ByteString serializes as base64: the `auth` field's encoding.
    let auth = serde_json::to_value(ByteString(userpass.into_bytes())).expect("base64");
    let docker = json!({"auths": {services.registry.host.clone(): {"auth": auth}}}).to_string();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    create(
        &secrets,
        json!({"metadata": {"name": "pull"}, "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": docker}}),
    )
    .await;
}

/// The log tails of every Pod in `ns` (for failure messages).
pub async fn manager_story(client: &Client, ns: &str, lines: i64) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let mut out = String::new();
    for pod in pods
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
    {
        let params = LogParams {
            tail_lines: Some(lines),
            ..LogParams::default()
        };
        let log = pods
            .logs(&pod.name_any(), &params)
            .await
            .unwrap_or_else(|e| e.to_string());
        out.push_str(&format!("--- {}\n{log}\n", pod.name_any()));
    }
    out
}

/// `helm install` of the chart with the locally built images, scoped to `app_ns` (watch scope and
/// webhook namespaceSelector) plus `extra_sets` (`key=value`); waits for both manager replicas
/// and binds the chart's approver ClusterRole to the unprivileged user in `app_ns`. Returns the
/// release namespace.
pub async fn install(
    client: &Client,
    app_ns: &str,
    services: &TestServices,
    data_plane: &str,
    extra_sets: &[String],
) -> String {
    install_from(
        client,
        app_ns,
        services,
        &ChartSource::head(data_plane),
        extra_sets,
    )
    .await
}

/// [`install`] of the chart and images of `source`.
pub async fn install_from(
    client: &Client,
    app_ns: &str,
    services: &TestServices,
    source: &ChartSource,
    extra_sets: &[String],
) -> String {
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
    let listed = run(helm_cmd(&cluster.admin_kubeconfig).args(["list", "-A", "-q"]));
    if listed.lines().any(|l| l.trim() == RELEASE) {
        eprintln!("a release {RELEASE} from an earlier run is still installed");
    }
    let release_ns = crate::client::namespace(client, "ptah-system").await;
    pull_secret(client, &release_ns, services).await;
    let out = run(&mut helm_release(
        "install",
        &release_ns,
        app_ns,
        source,
        extra_sets,
    ));
    assert!(out.contains("STATUS: deployed"), "{out}");
    let deadline = Instant::now() + Duration::from_secs(300);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &release_ns);
    loop {
        let ready = deployments
            .get_opt(MANAGER_DEPLOYMENT)
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
    // Applied, not created: a reinstall into the same application namespace finds it there.
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), app_ns);
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ptah-ptah-operator-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cluster.user_name}]
    });
    bindings
        .patch(
            "approver",
            &PatchParams::apply("ptah-e2e").force(),
            &Patch::Apply(&binding),
        )
        .await
        .expect("bind the approver role");
    release_ns
}

/// `helm <install|upgrade> ptah <chart> --wait` of `source` scoped to `app_ns`, plus `extra_sets`.
pub fn helm_release(
    verb: &str,
    release_ns: &str,
    app_ns: &str,
    source: &ChartSource,
    extra_sets: &[String],
) -> Command {
    let cluster = ClusterFiles::require();
    let mut cmd = helm_cmd(&cluster.admin_kubeconfig);
    cmd.args([verb, RELEASE])
        .arg(&source.chart)
        .args(["--namespace", release_ns, "--wait", "--timeout", "5m"])
        .args(source.sets())
        .args(["--set", "imagePullSecrets[0].name=pull"])
        .args(["--set", &format!("watchNamespace={app_ns}")])
        .args([
            "--set",
            &format!("webhooks.namespaceSelector.matchLabels.ptah-e2e={app_ns}"),
        ]);
    // Only this checkout's chart knows `resultDelivery` (an older one refuses unknown values).
    let head = source.chart == workspace_root().join("charts/ptah-operator");
    let delivery = if head {
        crate::resultdelivery::chart_sets()
    } else {
        Vec::new()
    };
    for set in delivery.iter().chain(extra_sets) {
        cmd.args(["--set", set]);
    }
    cmd
}

/// `helm uninstall --wait`; panics when it fails.
pub fn uninstall(release_ns: &str) {
    let cluster = ClusterFiles::require();
    run(helm_cmd(&cluster.admin_kubeconfig).args([
        "uninstall",
        RELEASE,
        "--namespace",
        release_ns,
        "--wait",
    ]));
    remove_policies(&cluster);
}

/// Deletes the release's admission policies that `helm uninstall` left: after a failed upgrade
/// (the refused downgrade) Helm uninstalls by the failed revision's manifest, and a previous
/// chart's manifest has no policies (docs/operations.md). Cluster-scoped leftovers would refuse
/// the next suite's install.
fn remove_policies(cluster: &ClusterFiles) {
    let _ = Command::new(crate::e2e::kubectl())
        .env("KUBECONFIG", &cluster.admin_kubeconfig)
        .args([
            "delete",
            "validatingadmissionpolicies,validatingadmissionpolicybindings",
            "-l",
            &format!("app.kubernetes.io/instance={RELEASE}"),
            "--ignore-not-found",
            "--wait",
        ])
        .output();
}

/// Uninstalls the release when dropped (also when the test panics), so the next suite can install.
pub struct Release(pub String);

impl Drop for Release {
    fn drop(&mut self) {
        let cluster = ClusterFiles::require();
        let _ = helm_cmd(&cluster.admin_kubeconfig)
            .args(["uninstall", RELEASE, "--namespace", &self.0, "--wait"])
            .output();
        remove_policies(&cluster);
    }
}

/// The manager Pods of the release in `release_ns` (running ones, by name).
pub async fn manager_pods(client: &Client, release_ns: &str) -> Vec<String> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), release_ns);
    let mut names: Vec<String> = pods
        .list(&ListParams::default())
        .await
        .expect("list the release's Pods")
        .items
        .into_iter()
        .filter(|p| p.name_any().starts_with(MANAGER_DEPLOYMENT))
        .filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|phase| phase == "Running")
        })
        .map(|p| p.name_any())
        .collect();
    names.sort();
    names
}

/// `GET /api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/metrics`: the manager's real `/metrics`
/// text, read through the API server's pod proxy with `client`'s identity.
pub async fn scrape_metrics(client: &Client, ns: &str, pod: &str) -> Result<String, kube::Error> {
    let request =
        kube::core::Request::new(format!("/api/v1/namespaces/{ns}/pods/{pod}:{METRICS_PORT}/proxy"))
            .get("metrics", &GetParams::default())
            .map_err(kube::Error::BuildRequest)?;
    client.request_text(request).await
}

/// promtool built by `cargo xtask k8s-bin --only promtool` at the pinned version; panics with
/// that command when it is missing.
pub fn promtool() -> PathBuf {
    crate::e2e::pinned_program(ptah_testenv::k8s::Component::Promtool)
}
