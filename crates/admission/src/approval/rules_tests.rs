use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ptah_api::{PtahSchema, PtahSchemaApprovalSpec, PtahSchemaPlan};
use serde_json::{Value, json};

use super::common::{APPROVAL_STAMP, stamp};
use super::fixtures::{binding_json, d, err_of, merged};
use super::rules::*;

fn plan() -> PtahSchemaPlan {
    let spec = merged(
        json!({
            "contractVersion": 3, "schemaRef": {"name": "orders", "uid": "schema-uid"},
            "fingerprint": d('1'), "contentDigest": d('2'), "size": 1,
            "actualStateFingerprint": d('c'), "desiredStateFingerprint": d('d'),
            "dialect": "postgresql", "destructive": false, "statementCount": 1,
            "chunks": [{"name": "p1-0", "key": "chunk", "index": 0, "digest": d('2'), "size": 1}]
        }),
        &binding_json(),
    );
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaPlan",
        "metadata": {"name": "p1", "namespace": "ns", "uid": "plan-uid"},
        "spec": spec
    }))
    .expect("plan")
}

fn approval(extra: Value) -> PtahSchemaApprovalSpec {
    let spec = json!({
        "schemaRef": {"name": "orders", "uid": "schema-uid"},
        "planRef": {"name": "p1", "uid": "plan-uid"},
        "planFingerprint": d('1')
    });
    serde_json::from_value(merged(spec, &extra)).expect("approval spec")
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
fn identity_must_be_the_requesters_and_stamped() {
    let me = ptah_api::shared::Approver {
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

/// `phase`, with an operation `op` in flight (Job `job`), the plan p1 still current and waiting.
fn busy(phase: &str, op: &str) -> PtahSchema {
    let mut s = schema(phase, "True", "p1");
    let claim = json!({"type": op, "id": d('7'), "inputFingerprint": d('8'), "jobName": "ptah-s-job",
                       "startedAt": "2025-01-01T00:00:00Z", "attempt": 1,
                       "executionBindingID": "v1-0123456789abcdef0123456789abcdef"});
    if let Some(st) = s.status.as_mut() {
        st.active_operation = Some(serde_json::from_value(claim).expect("claim"));
    }
    s
}

/// Issue 33: approvals were refused about half the time while the interval's refresh ran.
#[test]
fn the_current_plan_is_approvable_while_a_refresh_runs() {
    let a = approval(json!({}));
    for (phase, op) in [
        ("Resolving", "Resolve"),
        ("Verifying", "Verify"),
        ("Observing", "Observe"),
        ("Planning", "Plan"),
    ] {
        assert_eq!(check_schema(&a, &busy(phase, op), &plan()), Ok(()), "{phase}");
    }
    // The refresh of a plan that no longer waits, or that it already replaced, admits nothing.
    let mut unrequired = busy("Resolving", "Resolve");
    if let Some(c) = unrequired.status.as_mut().map(|st| &mut st.conditions[0]) {
        c.status = "False".into();
    }
    assert!(err_of(check_schema(&a, &unrequired, &plan())).contains("ApprovalRequired is False"));
    let mut replaced = busy("Planning", "Plan");
    if let Some(st) = replaced.status.as_mut() {
        st.plan = Some(serde_json::from_value(current("p2")).expect("current"));
    }
    assert!(err_of(check_schema(&a, &replaced, &plan())).starts_with("plan is stale"));
    // An Apply (and the proof that follows it) is never a refresh.
    assert_eq!(
        err_of(check_schema(&a, &busy("Applying", "Apply"), &plan())),
        "schema is not waiting for an approval (phase Applying)"
    );
    assert_eq!(
        err_of(check_schema(&a, &busy("Resolving", "Apply"), &plan())),
        "schema is not waiting for an approval (phase Resolving)"
    );
    assert_eq!(
        err_of(check_schema(&a, &busy("VerifyingConvergence", "Plan"), &plan())),
        "schema is not waiting for an approval (phase VerifyingConvergence)"
    );
    // A refresh phase with nothing in flight is not one.
    assert_eq!(
        err_of(check_schema(&a, &schema("Resolving", "True", "p1"), &plan())),
        "schema is not waiting for an approval (phase Resolving)"
    );
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

#[test]
fn the_stamp_fills_every_omitted_copy_from_the_plan() {
    let object =
        json!({"spec": serde_json::to_value(approval(json!({"ptahVersion": "1.4.2"}))).expect("spec")});
    let me = ptah_api::shared::Approver {
        username: "alice".into(),
        uid: None,
        groups: vec![],
    };
    let derived = derived(&plan()).expect("derived");
    let patch = stamp(
        &object,
        &APPROVAL_STAMP,
        &me,
        "2025-05-05T05:05:05Z",
        "req",
        &derived,
    )
    .expect("patch");
    let mut out = object.clone();
    json_patch::patch(&mut out, &patch).expect("applies");
    let stamped: PtahSchemaApprovalSpec = serde_json::from_value(out["spec"].clone()).expect("spec");
    assert_eq!(
        stamped.actual_state_fingerprint.as_ref().map(|f| f.as_str()),
        Some(d('c').as_str())
    );
    assert_eq!(
        stamped.desired_state_fingerprint.as_ref().map(|f| f.as_str()),
        Some(d('d').as_str())
    );
    assert_eq!(
        stamped.bindings,
        super::common::binding_copies(&plan().spec.binding)
    );
    assert_eq!(check_bindings(&stamped, &plan()), Ok(()));
    assert_eq!(stamped.approver.map(|a| a.username).as_deref(), Some("alice"));
}

#[test]
fn a_deleting_plan_is_refused() {
    let mut p = plan();
    p.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert_eq!(
        err_of(check_references(&approval(json!({})), &p)),
        "plan is being deleted: p1"
    );
}
