use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::pod_matches_template;

fn job() -> Job {
    serde_json::from_value(json!({
        "metadata": {"name": "ptah-plan-x", "uid": "j1", "labels": {"app.kubernetes.io/managed-by": "ptah-operator"}},
        "spec": {"template": {
            "metadata": {"labels": {"app.kubernetes.io/managed-by": "ptah-operator", "op": "plan"}},
            "spec": {
                "automountServiceAccountToken": false,
                "securityContext": {"runAsNonRoot": true},
                "containers": [{
                    "name": "runner", "image": "r@sha256:00", "command": ["/ptah-runner"], "args": ["plan"],
                    "env": [{"name": "PTAH_OP", "value": "plan"}],
                    "volumeMounts": [{"name": "work", "mountPath": "/work"}],
                    "securityContext": {"allowPrivilegeEscalation": false}
                }],
                "volumes": [{"name": "work", "emptyDir": {}}]
            }
        }}
    }))
    .expect("job")
}

fn pod_from(job: &Job) -> Value {
    let mut pod = serde_json::to_value(&job.spec.as_ref().expect("spec").template).expect("template");
    pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] = json!("ptah-plan-x");
    pod["metadata"]["labels"]["controller-uid"] = json!("j1");
    pod["spec"]["serviceAccountName"] = json!("default");
    pod["spec"]["tolerations"] = json!([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]);
    pod
}

fn check(pod: Value) -> Result<(), String> {
    let pod: Pod = serde_json::from_value(pod).expect("pod");
    pod_matches_template(&pod, &job())
}

#[test]
fn the_job_controllers_pod_matches() {
    assert_eq!(check(pod_from(&job())), Ok(()));
}

#[test]
fn every_security_relevant_difference_is_refused() {
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        (
            "image",
            Box::new(|p| p["spec"]["containers"][0]["image"] = json!("evil@sha256:11")),
        ),
        (
            "command",
            Box::new(|p| p["spec"]["containers"][0]["command"] = json!(["/bin/sh"])),
        ),
        (
            "args",
            Box::new(|p| p["spec"]["containers"][0]["args"] = json!(["apply"])),
        ),
        ("env", Box::new(|p| p["spec"]["containers"][0]["env"] = json!([]))),
        (
            "envFrom",
            Box::new(|p| p["spec"]["containers"][0]["envFrom"] = json!([{"secretRef": {"name": "db"}}])),
        ),
        (
            "volumeMounts",
            Box::new(|p| p["spec"]["containers"][0]["volumeMounts"] = json!([])),
        ),
        (
            "securityContext",
            Box::new(|p| p["spec"]["containers"][0]["securityContext"] = json!({"privileged": true})),
        ),
        (
            "volumes",
            Box::new(|p| p["spec"]["volumes"] = json!([{"name": "work", "hostPath": {"path": "/"}}])),
        ),
        (
            "securityContext",
            Box::new(|p| p["spec"]["securityContext"] = json!({})),
        ),
        (
            "serviceAccountName",
            Box::new(|p| p["spec"]["serviceAccountName"] = json!("admin")),
        ),
        (
            "automountServiceAccountToken",
            Box::new(|p| p["spec"]["automountServiceAccountToken"] = json!(true)),
        ),
        (
            "hostNetwork",
            Box::new(|p| p["spec"]["hostNetwork"] = json!(true)),
        ),
        ("hostPID", Box::new(|p| p["spec"]["hostPID"] = json!(true))),
        ("hostIPC", Box::new(|p| p["spec"]["hostIPC"] = json!(true))),
        (
            "containers",
            Box::new(|p| p["spec"]["containers"][0]["name"] = json!("other")),
        ),
        (
            "initContainers",
            Box::new(|p| p["spec"]["initContainers"] = json!([{"name": "i", "image": "x"}])),
        ),
        (
            "ephemeral",
            Box::new(|p| p["spec"]["ephemeralContainers"] = json!([{"name": "e", "image": "x"}])),
        ),
        (
            "label op",
            Box::new(|p| p["metadata"]["labels"]["op"] = json!("apply")),
        ),
        (
            "label extra",
            Box::new(|p| p["metadata"]["labels"]["extra"] = json!("1")),
        ),
    ];
    for (field, mutate) in cases {
        let mut pod = pod_from(&job());
        mutate(&mut pod);
        let err = check(pod).expect_err(field);
        let word = field.split(' ').next_back().unwrap_or(field);
        assert!(err.contains(word), "{field}: {err}");
    }
}
