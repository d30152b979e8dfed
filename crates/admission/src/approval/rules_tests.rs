use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use ptah_api::shared::{Approver, Sha256Digest};
use ptah_api::{PtahSchema, PtahSchemaApprovalSpec, PtahSchemaPlan};
use ptah_managercache::{CacheError, ConfigMapRead};
use serde_json::{Value, json};

use super::rules::*;
use crate::specwriter::{WRITER_UID_ANNOTATION, WRITER_USERNAME_ANNOTATION};

fn d(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

fn plan() -> PtahSchemaPlan {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaPlan",
        "metadata": {"name": "p1", "namespace": "ns", "uid": "plan-uid"},
        "spec": {
            "contractVersion": 3, "schemaRef": {"name": "orders", "uid": "schema-uid"},
            "fingerprint": d('1'), "contentDigest": d('2'), "size": 1,
            "actualStateFingerprint": d('c'), "desiredStateFingerprint": d('d'),
            "artifactDigest": d('a'), "coordinationDigest": d('b'), "targetIdentityDigest": d('3'),
            "policyFingerprint": d('4'), "verificationPolicyUID": "pol-uid", "verificationPolicyDigest": d('e'),
            "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
            "controllerImage": "m:1", "controllerRevision": "1", "controllerStateVersion": 1,
            "ptahVersion": "1.4.2", "executorImage": format!("e@{}", d('f')),
            "runnerImage": format!("r@{}", d('5')), "runnerProtocolVersion": 5,
            "dialect": "postgresql", "destructive": false, "statementCount": 1,
            "chunks": [{"name": "p1-0", "key": "chunk", "index": 0, "digest": d('2'), "size": 1}]
        }
    }))
    .expect("plan")
}

fn approval(extra: Value) -> PtahSchemaApprovalSpec {
    let mut spec = json!({
        "schemaRef": {"name": "orders", "uid": "schema-uid"},
        "planRef": {"name": "p1", "uid": "plan-uid"},
        "planFingerprint": d('1')
    });
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    serde_json::from_value(spec).expect("approval spec")
}

fn schema(phase: &str, required: &str, plan_name: &str) -> PtahSchema {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": "orders", "namespace": "ns", "uid": "schema-uid"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "k", "urlFrom": {"name": "db", "key": "url"}},
            "desired": {"ociRef": "oci://r.example/s:v1", "verificationPolicyFrom": {"name": "pol", "key": "p"}}
        },
        "status": {
            "phase": phase,
            "source": {"digest": d('a')},
            "target": {"identityDigest": d('3'), "coordinationDigest": d('b')},
            "plan": serde_json::to_value(current(plan_name)).expect("current"),
            "conditions": [{"type": "ApprovalRequired", "status": required, "reason": "AwaitingApproval",
                            "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}]
        }
    }))
    .expect("schema")
}

fn current(name: &str) -> Value {
    let p = plan();
    let mut v = serde_json::to_value(&p.spec).expect("spec");
    let o = v.as_object_mut().expect("object");
    for k in ["contractVersion", "schemaRef", "size", "chunks", "dialect"] {
        o.remove(k);
    }
    o.insert("name".into(), json!(name));
    o.insert(
        "uid".into(),
        json!(if name == "p1" { "plan-uid" } else { "other-uid" }),
    );
    v
}

fn err_of(r: Result<(), String>) -> String {
    r.expect_err("refused")
}

#[test]
fn references_must_match_the_live_plan() {
    assert_eq!(check_references(&approval(json!({})), &plan()), Ok(()));
    let wrong_fp = approval(json!({"planFingerprint": d('9')}));
    assert!(err_of(check_references(&wrong_fp, &plan())).contains("fingerprint does not match"));
    let wrong_uid = approval(json!({"planRef": {"name": "p1", "uid": "x"}}));
    assert!(err_of(check_references(&wrong_uid, &plan())).contains("planRef does not match"));
    let wrong_schema = approval(json!({"schemaRef": {"name": "orders", "uid": "x"}}));
    assert!(err_of(check_references(&wrong_schema, &plan())).contains("schemaRef does not match"));
}

#[test]
fn copied_bindings_must_equal_the_plans() {
    let same = approval(
        json!({"artifactDigest": d('a'), "runnerProtocolVersion": 5, "verificationPolicyUID": "pol-uid"}),
    );
    assert_eq!(check_bindings(&same, &plan()), Ok(()));
    let differs =
        approval(json!({"artifactDigest": d('9'), "ptahVersion": "0.1", "actualStateFingerprint": d('9')}));
    let e = err_of(check_bindings(&differs, &plan()));
    assert!(
        e.contains("artifactDigest") && e.contains("ptahVersion") && e.contains("actualStateFingerprint"),
        "{e}"
    );
}

#[test]
fn stamping_overwrites_the_clients_identity() {
    let object = json!({"spec": {"approver": {"username": "mallory"}, "approvedAt": "2000-01-01T00:00:00Z"}});
    let me = Approver {
        username: "alice".into(),
        uid: Some("u".into()),
        groups: vec!["g".into()],
    };
    let patch = stamp(&object, &me, "2025-05-05T05:05:05Z", "req-1").expect("patch");
    let mut out = object.clone();
    json_patch::patch(&mut out, &patch).expect("applies");
    assert_eq!(
        out["spec"]["approver"],
        json!({"username": "alice", "uid": "u", "groups": ["g"]})
    );
    assert_eq!(out["spec"]["approvedAt"], "2025-05-05T05:05:05Z");
    assert_eq!(out["spec"]["mutationRequestUID"], "req-1");
    assert!(stamp(&json!({}), &me, "t", "r").is_err());
    assert!(now_rfc3339().ends_with('Z'));
}

#[test]
fn identity_must_be_the_requesters_and_stamped() {
    let me = Approver {
        username: "alice".into(),
        uid: None,
        groups: vec!["g".into()],
    };
    let stamped = |who: &str| {
        approval(
            json!({"approver": {"username": who, "groups": ["g"]}, "approvedAt": "2025-01-01T00:00:00Z", "mutationRequestUID": "r"}),
        )
    };
    assert_eq!(check_identity(&stamped("alice"), &me), Ok(()));
    assert!(err_of(check_identity(&stamped("bob"), &me)).contains("is not the requester"));
    assert!(err_of(check_identity(&approval(json!({})), &me)).contains("no approver"));
    let mut no_uid = stamped("alice");
    no_uid.mutation_request_uid = None;
    assert!(err_of(check_identity(&no_uid, &me)).contains("mutationRequestUID"));
    let mut no_time = stamped("alice");
    no_time.approved_at = None;
    assert!(err_of(check_identity(&no_time, &me)).contains("approvedAt"));
}

#[test]
fn the_schema_must_wait_for_exactly_this_plan() {
    let a = approval(json!({}));
    assert_eq!(
        check_schema(&a, &schema("AwaitingApproval", "True", "p1"), &plan()),
        Ok(())
    );
    let e = err_of(check_schema(&a, &schema("InSync", "True", "p1"), &plan()));
    assert_eq!(e, "schema is not waiting for an approval (phase InSync)");
    assert!(
        err_of(check_schema(
            &a,
            &schema("AwaitingApproval", "False", "p1"),
            &plan()
        ))
        .contains("ApprovalRequired is False")
    );
    assert!(
        err_of(check_schema(
            &a,
            &schema("AwaitingApproval", "True", "p2"),
            &plan()
        ))
        .starts_with("plan is stale")
    );

    let mut s = schema("AwaitingApproval", "True", "p1");
    s.metadata.uid = Some("other".into());
    assert!(err_of(check_schema(&a, &s, &plan())).contains("was replaced"));
    let mut s = schema("AwaitingApproval", "True", "p1");
    s.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert!(err_of(check_schema(&a, &s, &plan())).contains("being deleted"));
    let mut s = schema("AwaitingApproval", "True", "p1");
    if let Some(st) = s.status.as_mut() {
        st.source = None;
    }
    assert!(err_of(check_schema(&a, &s, &plan())).contains("artifact digest"));
    let mut s = schema("AwaitingApproval", "True", "p1");
    if let Some(p) = s.status.as_mut().and_then(|st| st.plan.as_mut()) {
        p.approval = Some(serde_json::from_value(json!({"name": "a0", "uid": "u", "approver": {"username": "x"}, "approvedAt": "2025-01-01T00:00:00Z"})).expect("approval"));
    }
    assert!(err_of(check_schema(&a, &s, &plan())).contains("already recorded approval a0"));
    let mut s = schema("AwaitingApproval", "True", "p1");
    if let Some(st) = s.status.as_mut() {
        st.conditions = vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: "Active".into(),
            message: String::new(),
            last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
            observed_generation: None,
        }];
    }
    assert!(err_of(check_schema(&a, &s, &plan())).contains("ApprovalRequired is absent"));
}

#[test]
fn the_policy_must_be_the_planned_one() {
    let read = |uid: &str, digest: char| ConfigMapRead {
        uid: uid.into(),
        resource_version: "1".into(),
        immutable: true,
        bytes: Vec::new(),
        digest: Sha256Digest::parse(&d(digest)).expect("digest"),
    };
    assert_eq!(check_policy(&plan(), Ok(&read("pol-uid", 'e'))), Ok(()));
    assert!(err_of(check_policy(&plan(), Ok(&read("new", 'e')))).contains("was replaced"));
    assert!(err_of(check_policy(&plan(), Ok(&read("pol-uid", '0')))).contains("bytes changed"));
    let missing = CacheError::NotFound {
        namespace: "ns".into(),
        name: "pol".into(),
    };
    assert!(err_of(check_policy(&plan(), Err(&missing))).contains("verification policy unusable"));
}

#[test]
fn four_eyes_refuses_the_last_writer_and_unrecorded_writers() {
    let meta = |user: Option<&str>, uid: Option<&str>| {
        let mut a = std::collections::BTreeMap::new();
        if let Some(u) = user {
            a.insert(WRITER_USERNAME_ANNOTATION.to_owned(), u.to_owned());
        }
        if let Some(u) = uid {
            a.insert(WRITER_UID_ANNOTATION.to_owned(), u.to_owned());
        }
        ObjectMeta {
            annotations: Some(a),
            ..ObjectMeta::default()
        }
    };
    let alice = Approver {
        username: "alice".into(),
        uid: Some("1".into()),
        groups: vec![],
    };
    assert!(err_of(check_four_eyes(&alice, &meta(Some("alice"), Some("1")))).contains("may not approve"));
    assert_eq!(check_four_eyes(&alice, &meta(Some("bob"), None)), Ok(()));
    // Same name, another UID: another person (a recreated account).
    assert_eq!(check_four_eyes(&alice, &meta(Some("alice"), Some("2"))), Ok(()));
    assert!(err_of(check_four_eyes(&alice, &meta(None, None))).contains("no recorded spec writer"));
}

#[test]
fn updates_may_touch_metadata_only() {
    let old = json!({"metadata": {"labels": {}}, "spec": {"a": 1}});
    let relabelled = json!({"metadata": {"labels": {"x": "y"}}, "spec": {"a": 1}});
    assert_eq!(check_update(&old, &relabelled), Ok(()));
    assert!(err_of(check_update(&old, &json!({"metadata": {}, "spec": {"a": 2}}))).contains("immutable"));
}

#[test]
fn plan_load_failures_name_the_reason() {
    use ptah_planstore::PlanStoreError as E;
    assert!(
        plan_refusal(&E::NotReady {
            name: "p".into(),
            why: "w".into()
        })
        .starts_with("plan is not Ready")
    );
    assert!(plan_refusal(&E::NotFound { name: "p".into() }).contains("does not exist"));
    assert!(plan_refusal(&E::Tampered { what: "x".into() }).contains("fails its checks"));
    assert!(plan_refusal(&E::Deleting { what: "x".into() }).contains("being deleted"));
    assert!(
        plan_refusal(&E::UidMismatch {
            name: "p".into(),
            expected: "a".into(),
            actual: "b".into()
        })
        .contains("replaced")
    );
}
