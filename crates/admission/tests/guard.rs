//! T3: the write guard of manager-owned Jobs, called by the real kube-apiserver.
//!
//! Issue 33: a cluster administrator could not delete an operation Job. A member of
//! `system:masters` may now delete (never create or change) what the manager owns: the guard
//! admits it, and the chart's match condition does not even call the guard for it, so the break
//! glass works while no manager replica serves.

mod common;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{Fixture, SCOPE_LABEL, Server};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use ptah_admission::AdmissionConfig;
use ptah_apitests::admissionpolicy::{image_sets, render_template};
use serde_json::{Value, json};

const MANAGER: &str = "system:serviceaccount:ptah-system:ptah-operator";

fn job(name: &str) -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "ptah-operator"}},
        "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "registry.local/none:1"}]}}}
    }))
    .expect("a Job")
}

/// The chart's match conditions of the workloads guard, as helm renders them.
fn chart_conditions() -> Value {
    let digest = format!("sha256:{}", "a".repeat(64));
    let sets = image_sets(
        &format!("registry.local/ptah@{digest}"),
        &format!("registry.local/ptah-runner@{digest}"),
    );
    let docs = render_template("ptah", "ptah-system", "templates/webhooks.yaml", &sets)
        .unwrap_or_else(|e| panic!("helm template: {e}"));
    docs.iter()
        .filter(|d| d["kind"] == "ValidatingWebhookConfiguration")
        .flat_map(|d| d["webhooks"].as_array().cloned().unwrap_or_default())
        .find(|h| h["name"] == "validate-manager-owned-workloads.operator.ptah.run")
        .map(|h| h["matchConditions"].clone())
        .expect("the chart's workloads guard")
}

/// Registers the guard for labelled Jobs of the fixture's namespace, with `conditions`.
async fn register(f: &Fixture, port: u16, conditions: Value) {
    let bundle = base64::engine::general_purpose::STANDARD.encode(&f.ca_pem);
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": f.config_name},
        "webhooks": [{
            "name": "vguard.test.ptah.run",
            "clientConfig": {"url": format!("https://127.0.0.1:{port}{}", ptah_admission::ROUTE_MANAGER_OWNED),
                             "caBundle": bundle},
            "rules": [{"apiGroups": ["batch"], "apiVersions": ["v1"], "resources": ["jobs"],
                       "operations": ["CREATE", "UPDATE", "DELETE"]}],
            "objectSelector": {"matchLabels": {"app.kubernetes.io/managed-by": "ptah-operator"}},
            "namespaceSelector": {"matchLabels": {SCOPE_LABEL: f.ns}},
            "matchConditions": conditions,
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 10
        }]
    });
    Api::<ValidatingWebhookConfiguration>::all(f.admin.clone())
        .patch(
            &f.config_name,
            &PatchParams::apply("ptah-admission-tests").force(),
            &Patch::Apply(config),
        )
        .await
        .expect("validating configuration");
}

async fn delete(client: &Client, ns: &str, name: &str, dry_run: bool) -> Result<(), String> {
    let params = DeleteParams {
        dry_run,
        ..DeleteParams::default()
    };
    Api::<Job>::namespaced(client.clone(), ns)
        .delete(name, &params)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Retries `attempt` until it passes `done`, for at most 60 s (configuration changes reach the
/// API server's admission chain asynchronously).
async fn until<F, Fut>(
    what: &str,
    mut attempt: F,
    done: impl Fn(&Result<(), String>) -> bool,
) -> Result<(), String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let start = Instant::now();
    loop {
        let result = attempt().await;
        if done(&result) {
            return result;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} after 60 s: {result:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn cluster_admins_delete_operation_jobs_and_nobody_else_does() {
    let f = Fixture::new("adm-guard").await;
    let role: Role = serde_json::from_value(json!({
        "metadata": {"name": "job-deleter"},
        "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "create", "delete"]}]
    }))
    .expect("role");
    Api::<Role>::namespaced(f.admin.clone(), &f.ns)
        .create(&PostParams::default(), &role)
        .await
        .expect("role");
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "job-deleter"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "job-deleter"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": f.user_name}]
    }))
    .expect("binding");
    Api::<RoleBinding>::namespaced(f.admin.clone(), &f.ns)
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    // The Jobs exist before the guard does (it would refuse anyone but the manager creating
    // them), and are labelled after their create, which the chart's policies reserve for the
    // manager when they are installed in the cluster.
    let jobs: Api<Job> = Api::namespaced(f.admin.clone(), &f.ns);
    for name in ["first", "second"] {
        let mut unlabelled = job(name);
        unlabelled.metadata.labels = None;
        jobs.create(&PostParams::default(), &unlabelled)
            .await
            .expect("create a Job");
        jobs.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app.kubernetes.io/managed-by": "ptah-operator"}}})),
        )
        .await
        .expect("label it as the manager's");
    }
    let config = AdmissionConfig {
        manager_username: MANAGER.into(),
        ..AdmissionConfig::default()
    };
    let server = Server::start(f.admin.clone(), f.dir.path(), config).await;

    // The guard alone, called for every request.
    register(&f, server.port, json!([])).await;
    let probe = || async {
        Api::<Job>::namespaced(f.user.clone(), &f.ns)
            .create(
                &PostParams {
                    dry_run: true,
                    ..PostParams::default()
                },
                &job("probe"),
            )
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let refused = until("the guard refuses the user's create", probe, |r| {
        r.as_ref()
            .err()
            .is_some_and(|e| e.contains("written by the manager only"))
    })
    .await;
    assert!(refused.is_err());
    let err = delete(&f.user, &f.ns, "first", false)
        .await
        .expect_err("the user may not delete an operation Job");
    assert!(
        err.contains(&format!("{} may not delete this one", f.user_name)),
        "{err}"
    );
    delete(&f.admin, &f.ns, "first", false)
        .await
        .expect("a member of system:masters deletes an operation Job");

    // The chart's conditions, and no replica serving: the administrator's delete is not sent.
    register(&f, server.port, chart_conditions()).await;
    server.stop().await;
    until(
        "the administrator's delete skips the stopped guard",
        || delete(&f.admin, &f.ns, "second", true),
        Result::is_ok,
    )
    .await
    .expect("admitted");
    let err = delete(&f.user, &f.ns, "second", false)
        .await
        .expect_err("anyone else still fails closed");
    assert!(err.contains("failed calling webhook"), "{err}");
    delete(&f.admin, &f.ns, "second", false)
        .await
        .expect("deleted while no replica serves");

    f.cleanup().await;
}
