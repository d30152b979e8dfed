//! The routing of the approval and spec-writer handlers, on paths that read nothing: a client
//! pointing nowhere proves no request is made.

use kube::core::DynamicObject;
use kube::core::admission::AdmissionRequest;
use serde_json::{Value, json};

use super::fixtures::d;
use crate::review::{Verdict, decode};
use crate::{Admission, AdmissionConfig};

fn admission() -> Admission {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("url"));
    let client = kube::Client::try_from(config).expect("client");
    Admission::new(client, AdmissionConfig::default())
}

fn request(
    kind: &str,
    operation: &str,
    object: Value,
    old: Option<Value>,
) -> AdmissionRequest<DynamicObject> {
    let mut request = json!({
        "uid": "req-1", "kind": {"group": "operator.ptah.run", "version": "v1alpha1", "kind": kind},
        "resource": {"group": "operator.ptah.run", "version": "v1alpha1", "resource": "x"},
        "namespace": "ns", "operation": operation,
        "userInfo": {"username": "alice", "uid": "u1", "groups": ["system:authenticated", "b", "b"]},
        "object": object
    });
    if let Some(old) = old {
        request["oldObject"] = old;
    }
    let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
    decode(body.to_string().as_bytes()).expect("decodes")
}

fn ack(extra: Value) -> Value {
    let mut spec = json!({"migrationRef": {"name": "orders", "uid": "m-uid"}, "operationID": d('6')});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    json!({"apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationRunAcknowledgment",
           "metadata": {"name": "a", "namespace": "ns"}, "spec": spec})
}

fn denial(v: Verdict) -> String {
    match v {
        Verdict::Deny(message) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn unknown_kinds_are_refused_by_every_handler() {
    let a = admission();
    let realm = json!({"apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahRealm", "metadata": {"name": "r"}, "spec": {}});
    let req = request("PtahRealm", "CREATE", realm, None);
    assert_eq!(
        denial(a.mutate_approval(&req).await),
        "the approval webhook does not handle kind PtahRealm"
    );
    assert_eq!(
        denial(a.validate_approval(&req).await),
        "the approval webhook does not handle kind PtahRealm"
    );
    assert_eq!(
        denial(a.mutate_spec_writer(&req).await),
        "the spec-writer webhook does not handle kind PtahRealm"
    );
}

#[tokio::test]
async fn an_acknowledgment_is_stamped_without_reading_anything() {
    let a = admission();
    let forged = ack(json!({"acknowledgedBy": {"username": "mallory"}, "mutationRequestUID": "forged"}));
    let req = request("PtahMigrationRunAcknowledgment", "CREATE", forged.clone(), None);
    let Verdict::Patch(patch) = a.mutate_approval(&req).await else {
        panic!("expected a stamp");
    };
    let mut out = forged;
    json_patch::patch(&mut out, &patch).expect("applies");
    assert_eq!(
        out["spec"]["acknowledgedBy"],
        json!({"username": "alice", "uid": "u1", "groups": ["b", "system:authenticated"]})
    );
    assert_eq!(out["spec"]["mutationRequestUID"], "req-1");
    assert!(
        out["spec"]["acknowledgedAt"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    assert!(out["spec"].get("approver").is_none());
}

#[tokio::test]
async fn updates_pass_the_mutator_and_may_not_change_a_decisions_spec() {
    let a = admission();
    let old = ack(json!({"acknowledgedBy": {"username": "alice"}}));
    let mut relabelled = old.clone();
    relabelled["metadata"]["labels"] = json!({"seen": "yes"});
    let req = request(
        "PtahMigrationRunAcknowledgment",
        "UPDATE",
        relabelled,
        Some(old.clone()),
    );
    assert_eq!(a.mutate_approval(&req).await, Verdict::Allow);
    assert_eq!(a.validate_approval(&req).await, Verdict::Allow);
    let mut changed = old.clone();
    changed["spec"]["operationID"] = json!(d('5'));
    let req = request("PtahMigrationRunAcknowledgment", "UPDATE", changed, Some(old));
    assert_eq!(
        denial(a.validate_approval(&req).await),
        "an acknowledgment's spec is immutable: only metadata may change"
    );
}

#[tokio::test]
async fn a_malformed_migration_approval_is_refused_by_name() {
    let a = admission();
    let object = json!({"apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationApproval",
                        "metadata": {"name": "a", "namespace": "ns"},
                        "spec": {"planRef": {"name": "p", "uid": "u"}, "planFingerprint": d('1')}});
    let req = request("PtahMigrationApproval", "CREATE", object, None);
    let e = denial(a.mutate_approval(&req).await);
    assert!(
        e.starts_with("malformed PtahMigrationApproval") && e.contains("migrationRef"),
        "{e}"
    );
}
