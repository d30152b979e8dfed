//! T4 (`e2e_schema_approvals_…`, phase `schema-approvals` of `cargo xtask e2e --suite
//! schema-approvals`): `helm install` the chart with the locally built images; the manager
//! becomes ready (the cert rotator has issued the webhook certificate); the schema lifecycle
//! passes through a real approval made with `kubectl` by an unprivileged person, stamped with
//! that person's identity by the admission webhook although the manifest forged another; `helm
//! uninstall` leaves the database untouched.

mod common;
mod lifecycle;

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
    Api, Client, ResourceExt,
    api::{Patch, PatchParams},
};
use lifecycle::{
    Diagnose, InCluster, Probe,
    app::{App, Engine, phase},
    everything_said, probe, wait_for,
};
use ptah_api::{PtahSchema, PtahSchemaApproval, schema::SchemaPhase};
use ptah_apitests::{
    ClusterFiles,
    e2e::{create, helm, kubectl},
    workspace_root,
};
use serde_json::json;

const STEP: Duration = Duration::from_secs(300);

/// The in-cluster manager's story: its Pods' log tails.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn helm_cmd(kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(helm());
    cmd.env("KUBECONFIG", kubeconfig);
    cmd
}

async fn pull_secret(client: &Client, ns: &str, app: &App) {
    let auth = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        format!(
            "{}:{}",
            app.services.registry.username,
            app.services.registry.password.expose()
        ),
    );
    let docker = json!({"auths": {app.services.registry.host.clone(): {"auth": auth}}}).to_string();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    create(
        &secrets,
        json!({"metadata": {"name": "pull"}, "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": docker}}),
    )
    .await;
}

async fn ready_replicas(client: &Client, ns: &str, name: &str) -> i32 {
    let d: Api<Deployment> = Api::namespaced(client.clone(), ns);
    d.get_opt(name)
        .await
        .ok()
        .flatten()
        .and_then(|d| d.status)
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
}

const RELEASE: &str = "ptah";

/// Installs the chart for `app` (its namespace only: watch scope and webhook namespaceSelector)
/// and waits until both manager replicas are ready — which needs the rotator's certificate.
async fn install(client: &Client, app: &App) -> (String, InCluster) {
    let cluster = ClusterFiles::require();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            &app.ns,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"ptah-e2e": app.ns}}})),
        )
        .await
        .expect("label the application namespace");
    let release_ns = common::namespace(client, "ptah-system").await;
    pull_secret(client, &release_ns, app).await;
    let chart = workspace_root().join("charts/ptah-operator");
    let install = run(helm_cmd(&cluster.admin_kubeconfig)
        .args(["install", RELEASE])
        .arg(&chart)
        .args(["--namespace", &release_ns, "--wait", "--timeout", "5m"])
        .args(ptah_apitests::release::ChartSource::head(&app.image).sets())
        .args(["--set", "imagePullSecrets[0].name=pull"])
        .args(["--set", &format!("watchNamespace={}", app.ns)])
        .args([
            "--set",
            &format!("webhooks.namespaceSelector.matchLabels.ptah-e2e={}", app.ns),
        ]));
    assert!(install.contains("STATUS: deployed"), "{install}");
    let manager = InCluster {
        client: client.clone(),
        namespace: release_ns.clone(),
    };
    let deadline = Instant::now() + STEP;
    while ready_replicas(client, &release_ns, "ptah-ptah-operator-manager").await < 2 {
        assert!(
            Instant::now() < deadline,
            "the manager never became ready\n{}",
            manager.diagnose()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    (release_ns, manager)
}

fn uninstall(release_ns: &str) {
    let cluster = ClusterFiles::require();
    run(helm_cmd(&cluster.admin_kubeconfig).args([
        "uninstall",
        RELEASE,
        "--namespace",
        release_ns,
        "--wait",
    ]));
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_schema_approvals_helm_install_approve_with_kubectl_uninstall() {
    let cluster = ClusterFiles::require();
    let app = App::setup(Engine::Postgres, "e2e-approvals").await;
    let client = app.client.clone();
    let (release_ns, manager) = install(&client, &app).await;

    let waiting = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::AwaitingApproval)
            && s.status.as_ref().is_some_and(|st| st.plan.is_some())
    };
    let s = wait_for(
        &app.schemas,
        "orders",
        "a plan awaiting approval",
        STEP,
        &manager,
        waiting,
    )
    .await;
    let plan = s.status.as_ref().and_then(|st| st.plan.clone()).expect("plan");

    // A person with the chart's approver role (created by the chart, bound here by hand).
    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), &app.ns);
    create(&bindings, json!({
        "metadata": {"name": "approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ptah-ptah-operator-approver"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cluster.user_name}]
    })).await;
    let manifest = json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
        "metadata": {"name": "approve-by-person", "namespace": app.ns},
        "spec": {
            "schemaRef": {"name": "orders", "uid": s.uid().expect("uid")},
            "planRef": {"name": plan.name, "uid": plan.uid},
            "planFingerprint": plan.fingerprint,
            "approver": {"username": "mallory", "groups": ["system:masters"]}
        }
    });
    let file = ptah_apitests::e2e_log_file(&format!("{}-approval.json", app.ns));
    std::fs::write(&file, manifest.to_string()).expect("approval manifest");
    run(Command::new(kubectl())
        .env("KUBECONFIG", &cluster.user_kubeconfig)
        .arg("create")
        .arg("-f")
        .arg(&file));
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app.ns);
    let stamped = approvals.get("approve-by-person").await.expect("the approval");
    let approver = stamped.spec.approver.expect("stamped approver");
    assert_eq!(
        approver.username, cluster.user_name,
        "the webhook stamps the requester, not what the client wrote"
    );
    assert!(!approver.groups.iter().any(|g| g == "system:masters"));
    assert!(stamped.spec.mutation_request_uid.is_some());

    let in_sync = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
    };
    let done = wait_for(
        &app.schemas,
        "orders",
        "InSync after the approved Apply",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    assert!(app.engine_has_table("items").await);

    let said = everything_said(&client, &app.ns, &done).await + &manager.diagnose();
    assert!(
        !said.contains(&app.password),
        "the database password appeared in a log, Event or status"
    );

    uninstall(&release_ns);
    assert!(
        app.engine_has_table("items").await && app.engine_has_table("audit").await,
        "uninstall leaves the database untouched"
    );
    let still = app
        .schemas
        .get("orders")
        .await
        .expect("the PtahSchema outlives the release (CRDs stay)");
    assert_eq!(phase(&still), Some(SchemaPhase::InSync));
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_cert_rotation_a_corrupted_ca_is_recovered_and_nothing_is_admitted_meanwhile() {
    let app = App::setup(Engine::Postgres, "e2e-certs").await;
    let client = app.client.clone();
    let (release_ns, manager) = install(&client, &app).await;
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app.ns);
    let uid = app
        .schemas
        .get("orders")
        .await
        .expect("schema")
        .uid()
        .expect("uid");
    let (first, message) = probe(&approvals, &uid).await;
    assert_eq!(
        first,
        Probe::Refused,
        "the webhook answers before the corruption: {message}"
    );

    // Corrupt the CA and the serving pair in the Secret the manager mounts and the rotator owns.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &release_ns);
    let garbage = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n";
    secrets
        .patch(
            "ptah-operator-webhook-tls",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"ca.crt": garbage, "ca.key": "garbage", "tls.crt": garbage, "tls.key": "garbage"}})),
        )
        .await
        .expect("corrupt the webhook certificate Secret");
    let corrupted = Instant::now();
    let mut outcomes = Vec::new();
    let recovered = loop {
        let (outcome, message) = probe(&approvals, &uid).await;
        assert_ne!(
            outcome,
            Probe::Admitted,
            "an approval was admitted unchecked: {message}"
        );
        outcomes.push(outcome);
        if outcomes.last() == Some(&Probe::Refused) && outcomes.len() > 1 {
            break corrupted.elapsed();
        }
        assert!(
            corrupted.elapsed() < Duration::from_secs(300),
            "the webhooks did not recover within 300 s: {message}\n{}",
            manager.diagnose()
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    let failed = outcomes.iter().filter(|o| **o == Probe::CallFailed).count();
    eprintln!(
        "webhooks answered again {recovered:?} after the corruption ({failed} fail-closed calls of {})",
        outcomes.len()
    );
    let tls = secrets.get("ptah-operator-webhook-tls").await.expect("secret");
    let data = tls.data.unwrap_or_default();
    let ca = data.get("ca.crt").map(|b| b.0.clone()).unwrap_or_default();
    assert!(
        String::from_utf8_lossy(&ca).contains("BEGIN CERTIFICATE")
            && !String::from_utf8_lossy(&ca).contains("bm90IGEgY2VydGlmaWNhdGU="),
        "the rotator issued a fresh CA"
    );

    // Fail closed, for certain: with the rotator stopped, the API server is given a CA that did not
    // sign the serving certificate. Every call must now fail, never admit, until the rotator is
    // back and re-injects the right bundle.
    let rotator: Api<Deployment> = Api::namespaced(client.clone(), &release_ns);
    let scale = |n: i32| json!({"spec": {"replicas": n}});
    rotator
        .patch(ROTATOR, &PatchParams::default(), &Patch::Merge(scale(0)))
        .await
        .expect("stop the rotator");
    let deadline = Instant::now() + STEP;
    while ready_replicas(&client, &release_ns, ROTATOR).await > 0
        || rotator_pods(&client, &release_ns).await > 0
    {
        assert!(Instant::now() < deadline, "the rotator did not stop");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    untrust_webhooks(&client, garbage).await;
    let mut failed_closed = false;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let (outcome, message) = probe(&approvals, &uid).await;
        assert_ne!(
            outcome,
            Probe::Admitted,
            "admitted with an untrusted webhook: {message}"
        );
        if outcome == Probe::CallFailed {
            failed_closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert!(
        failed_closed,
        "no probe failed closed while the API server could not trust the webhook"
    );
    rotator
        .patch(ROTATOR, &PatchParams::default(), &Patch::Merge(scale(1)))
        .await
        .expect("restart the rotator");
    let deadline = Instant::now() + STEP;
    loop {
        let (outcome, message) = probe(&approvals, &uid).await;
        assert_ne!(outcome, Probe::Admitted, "admitted while recovering: {message}");
        if outcome == Probe::Refused {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the rotator did not repair the bundle: {message}"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    uninstall(&release_ns);
}

/// The cert rotator's Deployment in the release.
const ROTATOR: &str = "ptah-ptah-operator-cert-rotator";

async fn rotator_pods(client: &Client, ns: &str) -> usize {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), ns);
    pods.list(&kube::api::ListParams::default().labels("app.kubernetes.io/component=cert-rotator"))
        .await
        .map(|l| l.items.len())
        .unwrap_or(usize::MAX)
}

/// Gives every webhook of the release's admission configurations `pem` as its CA bundle.
async fn untrust_webhooks(client: &Client, pem: &str) {
    use k8s_openapi::{
        ByteString,
        api::admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
    };
    use kube::api::PostParams;
    let bundle = || Some(ByteString(pem.as_bytes().to_vec()));
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let mut m = mutating
        .get("ptah-operator")
        .await
        .expect("mutating configuration");
    m.webhooks
        .iter_mut()
        .flatten()
        .for_each(|w| w.client_config.ca_bundle = bundle());
    mutating
        .replace("ptah-operator", &PostParams::default(), &m)
        .await
        .expect("untrust mutating");
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mut v = validating
        .get("ptah-operator")
        .await
        .expect("validating configuration");
    v.webhooks
        .iter_mut()
        .flatten()
        .for_each(|w| w.client_config.ca_bundle = bundle());
    validating
        .replace("ptah-operator", &PostParams::default(), &v)
        .await
        .expect("untrust validating");
}
