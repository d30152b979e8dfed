//! T3: the pod-intent webhook, called by the real kube-apiserver, admits a new operation Pod only
//! when its Job is the one its PtahSchema's claim recorded, by the admission snapshot persisted
//! before dispatch; and a Pod that differs from its Job's template is refused.

mod common;

use common::{Fixture, SCOPE_LABEL, Server};
use k8s_openapi::api::{
    admissionregistration::v1::ValidatingWebhookConfiguration, batch::v1::Job, core::v1::Pod,
};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use ptah_admission::AdmissionConfig;
use ptah_api::PtahSchema;
use ptah_apitests::admissionpolicy::{Verdict, eventually};
use serde_json::{Value, json};

const JOB: &str = "ptah-plan-orders-0123456789abcdef";

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

async fn register(f: &Fixture, port: u16, bundle: &str) {
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": f.config_name},
        "webhooks": [{
            "name": "vpodintent.test.ptah.run",
            "clientConfig": {"url": format!("https://127.0.0.1:{port}{}", ptah_admission::ROUTE_OPERATION_PODS), "caBundle": bundle},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE", "UPDATE"]}],
            "namespaceSelector": {"matchLabels": {SCOPE_LABEL: f.ns}},
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 10,
        }],
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

fn labels() -> Value {
    json!({
        "app.kubernetes.io/managed-by": "ptah-operator",
        "app.kubernetes.io/component": "schema-operation",
        "operator.ptah.run/schema": "orders",
        "operator.ptah.run/operation": "plan",
        "operator.ptah.run/operation-id": "0123456789abcdef",
    })
}

/// A suspended operation Job owned by `schema` (suspended: no Pod of its own ever starts).
async fn create_job(admin: &Client, ns: &str, schema: &PtahSchema) -> Job {
    let job: Job = serde_json::from_value(json!({
        "metadata": {
            "name": JOB, "labels": labels(),
            "ownerReferences": [{
                "apiVersion": PtahSchema::api_version(&()), "kind": "PtahSchema", "name": schema.name_any(),
                "uid": schema.uid(), "controller": true,
            }],
        },
        "spec": {
            "suspend": true, "backoffLimit": 0,
            "template": {
                "metadata": {"labels": labels()},
                "spec": {
                    "restartPolicy": "Never", "automountServiceAccountToken": false,
                    "containers": [{"name": "ptah", "image": format!("registry.example/ptah@sha256:{}", "5".repeat(64))}],
                },
            },
        },
    }))
    .expect("job");
    Api::<Job>::namespaced(admin.clone(), ns)
        .create(&PostParams::default(), &job)
        .await
        .expect("create job")
}

/// The Pod the Job controller would make of `job`.
fn pod_of(job: &Job) -> Pod {
    let template = job.spec.as_ref().map(|s| s.template.clone()).expect("template");
    let mut meta = template.metadata.unwrap_or_default();
    meta.name = Some(format!("{JOB}-abcde"));
    meta.owner_references = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "batch/v1".into(),
            kind: "Job".into(),
            name: job.name_any(),
            uid: job.uid().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: None,
        },
    ]);
    Pod {
        metadata: meta,
        spec: template.spec,
        status: None,
    }
}

/// Sets the schema's claim: `job_name` and, when given, the snapshot's template digest.
async fn claim(admin: &Client, ns: &str, job_name: &str, template_digest: Option<&str>) {
    let mut op = json!({
        "type": "Plan",
        "id": format!("sha256:{}", "0".repeat(64)),
        "inputFingerprint": format!("sha256:{}", "1".repeat(64)),
        "jobName": job_name,
        "startedAt": "2026-12-03T00:00:00Z",
        "attempt": 1,
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
    });
    if let Some(d) = template_digest {
        op["admissionSnapshot"] =
            json!({"version": "v1", "digest": format!("sha256:{}", "2".repeat(64)), "templateDigest": d});
    }
    // A merge patch replaces the claim whole, snapshot included, through the status subresource.
    let patch = json!({"status": {"activeOperation": op}});
    Api::<PtahSchema>::namespaced(admin.clone(), ns)
        .patch_status("orders", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("set the claim");
    if template_digest.is_none() {
        let drop = json!({"status": {"activeOperation": {"admissionSnapshot": null}}});
        Api::<PtahSchema>::namespaced(admin.clone(), ns)
            .patch_status("orders", &PatchParams::default(), &Patch::Merge(&drop))
            .await
            .expect("drop the snapshot");
    }
}

async fn create_pod(client: &Client, ns: &str, pod: &Pod) -> Verdict {
    Verdict::of(
        Api::<Pod>::namespaced(client.clone(), ns)
            .create(&dry_run(), pod)
            .await,
    )
}

#[tokio::test]
async fn a_new_operation_pod_needs_the_claim_snapshot_of_its_job() {
    let f = Fixture::new("podintent").await;
    let server = Server::start(f.admin.clone(), f.dir.path(), AdmissionConfig::default()).await;
    let bundle = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&f.ca_pem)
    };
    register(&f, server.port, &bundle).await;
    let schema = Api::<PtahSchema>::namespaced(f.admin.clone(), &f.ns)
        .create(&PostParams::default(), &common::schema_object(&f.ns, "orders"))
        .await
        .expect("create schema");
    let job = create_job(&f.admin, &f.ns, &schema).await;
    let pod = pod_of(&job);
    let digest = ptah_workload::template_digest(&job.spec.as_ref().expect("spec").template)
        .expect("digest")
        .as_str()
        .to_owned();

    // No claim yet: refused once the webhook is active.
    assert!(
        eventually(|| async {
            create_pod(&f.admin, &f.ns, &pod)
                .await
                .refused_for("has no claim for Job")
        })
        .await,
        "the webhook never took effect: {:?}",
        create_pod(&f.admin, &f.ns, &pod).await
    );

    claim(&f.admin, &f.ns, JOB, Some(&digest)).await;
    assert_eq!(
        create_pod(&f.admin, &f.ns, &pod).await,
        Verdict::Admitted,
        "the claimed Job's Pod"
    );

    let mut changed = pod.clone();
    if let Some(c) = changed.spec.as_mut().and_then(|s| s.containers.first_mut()) {
        c.image = Some(format!("evil.example/tool@sha256:{}", "e".repeat(64)));
    }
    let verdict = create_pod(&f.admin, &f.ns, &changed).await;
    assert!(
        verdict.refused_for("image differs from the Job template"),
        "{verdict:?}"
    );

    claim(&f.admin, &f.ns, JOB, Some(&format!("sha256:{}", "9".repeat(64)))).await;
    let verdict = create_pod(&f.admin, &f.ns, &pod).await;
    assert!(
        verdict.refused_for("is not the one its claim recorded before dispatch"),
        "{verdict:?}"
    );

    claim(
        &f.admin,
        &f.ns,
        "ptah-plan-orders-fedcba9876543210",
        Some(&digest),
    )
    .await;
    let verdict = create_pod(&f.admin, &f.ns, &pod).await;
    assert!(verdict.refused_for("has no claim for Job"), "{verdict:?}");

    claim(&f.admin, &f.ns, JOB, None).await;
    let verdict = create_pod(&f.admin, &f.ns, &pod).await;
    assert!(
        verdict.refused_for("recorded no admission snapshot"),
        "{verdict:?}"
    );

    server.stop().await;
    let _ = Api::<Job>::namespaced(f.admin.clone(), &f.ns)
        .delete(JOB, &DeleteParams::background())
        .await;
    f.cleanup().await;
}
