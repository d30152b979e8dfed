//! `compare` without a cluster: the built Job after the defaulting kube-apiserver 1.35 applies to
//! a batch/v1 Job (observed on the T3 server, see `apiserver.rs`) is accepted; edits are not.

mod common;

use common::{ALL_OPS, intent};
use k8s_openapi::api::batch::v1::Job;
use ptah_workload::{DifferenceKind, build, compare};
use serde_json::{Value, json};

const JOB_UID: &str = "69ac38be-e9de-4989-96a8-896b9d8c2b11";

/// What the API server does to a created Job: server metadata, the generated selector and its
/// labels, defaulted Job and Pod fields, the deprecated service-account mirror, empty objects
/// it always serializes, re-spelled quantities, and a status from the Job controller.
fn as_served(job: &Job) -> Value {
    let mut v = serde_json::to_value(job).expect("json");
    let name = v["metadata"]["name"].clone();
    let meta = &mut v["metadata"];
    meta["uid"] = json!(JOB_UID);
    meta["resourceVersion"] = json!("768");
    meta["generation"] = json!(1);
    meta["creationTimestamp"] = json!("2026-11-29T22:07:23Z");
    meta["managedFields"] =
        json!([{"manager": "ptah-operator", "operation": "Update", "apiVersion": "batch/v1"}]);
    let spec = &mut v["spec"];
    spec["selector"] = json!({"matchLabels": {"batch.kubernetes.io/controller-uid": JOB_UID}});
    spec["suspend"] = json!(false);
    spec["manualSelector"] = json!(false);
    spec["completionMode"] = json!("NonIndexed");
    let template = &mut spec["template"];
    template["metadata"]["creationTimestamp"] = Value::Null;
    let labels = &mut template["metadata"]["labels"];
    labels["batch.kubernetes.io/controller-uid"] = json!(JOB_UID);
    labels["controller-uid"] = json!(JOB_UID);
    labels["batch.kubernetes.io/job-name"] = name.clone();
    labels["job-name"] = name;
    let pod = &mut template["spec"];
    pod["dnsPolicy"] = json!("ClusterFirst");
    pod["schedulerName"] = json!("default-scheduler");
    pod["serviceAccount"] = pod["serviceAccountName"].clone();
    for list in ["initContainers", "containers"] {
        for c in pod[list].as_array_mut().expect("containers") {
            c["terminationMessagePath"] = json!("/dev/termination-log");
            c["terminationMessagePolicy"] = json!("File");
            c["securityContext"]["procMount"] = json!("Default");
            c["resources"]["requests"]["cpu"] = json!("0.25");
            c["ports"] = json!([]);
        }
    }
    v["status"] = json!({"active": 1, "ready": 0, "startTime": "2026-11-29T22:07:23Z"});
    v
}

fn served(job: &Job) -> Job {
    serde_json::from_value(as_served(job)).expect("a Job")
}

fn edited(job: &Job, edit: impl FnOnce(&mut Value)) -> Job {
    let mut v = as_served(job);
    edit(&mut v);
    serde_json::from_value(v).expect("a Job")
}

/// One edit of a served Job.
type Edit = Box<dyn FnOnce(&mut Value)>;

fn main_container(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]["containers"][0]
}

#[test]
fn a_defaulted_read_back_is_accepted() {
    for op in ALL_OPS {
        let job = build(&intent(op)).expect("builds");
        compare(&job, &job).expect("identical");
        compare(&job, &served(&job)).unwrap_or_else(|e| panic!("{op}: {e}"));
    }
}

#[test]
fn a_changed_env_value_or_image_is_refused_by_path() {
    let job = build(&intent(ptah_dataplane::Operation::Apply)).expect("builds");
    let err = compare(
        &job,
        &edited(&job, |v| {
            main_container(v)["env"][1]["value"] = json!("sha256:other")
        }),
    )
    .expect_err("changed env");
    assert_eq!(err.differences.len(), 1, "{err}");
    assert_eq!(
        err.differences[0].path,
        "spec.template.spec.containers[0].env[1].value"
    );
    assert_eq!(err.differences[0].kind, DifferenceKind::Changed);
    assert!(
        !err.to_string().contains("sha256:other"),
        "values never appear: {err}"
    );

    let err = compare(
        &job,
        &edited(&job, |v| {
            v["spec"]["template"]["spec"]["initContainers"][0]["image"] = json!("evil:latest")
        }),
    )
    .expect_err("changed image");
    assert_eq!(
        err.differences[0].path,
        "spec.template.spec.initContainers[0].image"
    );
}

#[test]
fn additions_beyond_known_defaults_are_refused() {
    let job = build(&intent(ptah_dataplane::Operation::Plan)).expect("builds");
    let cases: Vec<(&str, Edit)> = vec![
        (
            "spec.template.spec.containers[0].env",
            Box::new(|v| {
                main_container(v)["env"]
                    .as_array_mut()
                    .expect("env")
                    .push(json!({"name": "PTAH_REGISTRY_TOKEN", "value": "x"}))
            }),
        ),
        (
            "spec.template.spec.containers[0].securityContext.privileged",
            Box::new(|v| main_container(v)["securityContext"]["privileged"] = json!(true)),
        ),
        (
            "spec.template.spec.hostNetwork",
            Box::new(|v| v["spec"]["template"]["spec"]["hostNetwork"] = json!(true)),
        ),
        (
            "metadata.annotations.example.com/extra",
            Box::new(|v| v["metadata"]["annotations"]["example.com/extra"] = json!("1")),
        ),
        (
            "spec.template.metadata.labels.job-name",
            Box::new(|v| v["spec"]["template"]["metadata"]["labels"]["job-name"] = json!("another-job")),
        ),
        (
            "spec.selector",
            Box::new(|v| v["spec"]["selector"] = json!({"matchLabels": {"team": "payments"}})),
        ),
        (
            "spec.ttlSecondsAfterFinished",
            Box::new(|v| v["spec"]["ttlSecondsAfterFinished"] = json!(300)),
        ),
        (
            "spec.template.spec.dnsPolicy",
            Box::new(|v| v["spec"]["template"]["spec"]["dnsPolicy"] = json!("Default")),
        ),
        (
            "metadata.ownerReferences[0].controller",
            Box::new(|v| v["metadata"]["ownerReferences"][0]["controller"] = json!(false)),
        ),
        (
            "spec.template.spec.containers[0].resources.limits.memory",
            Box::new(|v| main_container(v)["resources"]["limits"]["memory"] = json!("1Gi")),
        ),
        (
            "spec.template.spec.automountServiceAccountToken",
            Box::new(|v| {
                let pod = v["spec"]["template"]["spec"].as_object_mut().expect("pod");
                pod.remove("automountServiceAccountToken");
            }),
        ),
    ];
    for (path, edit) in cases {
        let err = compare(&job, &edited(&job, edit)).expect_err(path);
        assert!(err.differences.iter().any(|d| d.path == path), "{path}: {err}");
    }
}

#[test]
fn the_result_ttl_is_a_later_patch_not_an_intent() {
    assert_eq!(ptah_workload::RESULT_TTL_SECONDS, 300);
    for op in ALL_OPS {
        let job = build(&intent(op)).expect("builds");
        assert!(
            job.spec
                .as_ref()
                .and_then(|s| s.ttl_seconds_after_finished)
                .is_none()
        );
    }
}
