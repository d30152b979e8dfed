use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta, Time};
use ptah_api::shared::{
    ApprovalBindingCopies, Approver, ImmutableObjectReference, PlanExecutionBinding, Sha256Digest,
};
use ptah_managercache::{CacheError, ConfigMapRead};
use serde_json::{Map, Value, json};

use super::common::*;
use super::fixtures::{binding_json, d, err_of};
use crate::specwriter::{SPEC_WRITERS_ANNOTATION, WRITER_UID_ANNOTATION, WRITER_USERNAME_ANNOTATION};

fn binding() -> PlanExecutionBinding {
    serde_json::from_value(binding_json()).expect("binding")
}

fn alice() -> Approver {
    Approver {
        username: "alice".into(),
        uid: Some("u".into()),
        groups: vec!["g".into()],
    }
}

fn reference(name: &str, uid: &str) -> ImmutableObjectReference {
    ImmutableObjectReference {
        name: name.into(),
        uid: uid.into(),
    }
}

fn meta(name: &str, uid: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        uid: Some(uid.into()),
        ..ObjectMeta::default()
    }
}

fn applied(object: &Value, patch: &json_patch::Patch) -> Value {
    let mut out = object.clone();
    json_patch::patch(&mut out, patch).expect("applies");
    out
}

#[test]
fn stamping_overwrites_the_clients_identity_in_either_shape() {
    let object = json!({"spec": {
        "approver": {"username": "mallory"}, "approvedAt": "2000-01-01T00:00:00Z",
        "acknowledgedBy": {"username": "mallory"}, "acknowledgedAt": "2000-01-01T00:00:00Z",
        "mutationRequestUID": "forged"
    }});
    let patch = stamp(
        &object,
        &APPROVAL_STAMP,
        &alice(),
        "2025-05-05T05:05:05Z",
        "req-1",
        &Map::new(),
    )
    .expect("patch");
    let out = applied(&object, &patch);
    assert_eq!(
        out["spec"]["approver"],
        json!({"username": "alice", "uid": "u", "groups": ["g"]})
    );
    assert_eq!(out["spec"]["approvedAt"], "2025-05-05T05:05:05Z");
    assert_eq!(out["spec"]["mutationRequestUID"], "req-1");
    // The other kind's fields are not this stamp's business.
    assert_eq!(out["spec"]["acknowledgedBy"], json!({"username": "mallory"}));

    let patch = stamp(
        &object,
        &ACKNOWLEDGMENT_STAMP,
        &alice(),
        "2025-05-05T05:05:05Z",
        "req-2",
        &Map::new(),
    )
    .expect("patch");
    let out = applied(&object, &patch);
    assert_eq!(out["spec"]["acknowledgedBy"]["username"], "alice");
    assert_eq!(out["spec"]["acknowledgedAt"], "2025-05-05T05:05:05Z");
    assert_eq!(out["spec"]["mutationRequestUID"], "req-2");

    let err = stamp(&json!({}), &ACKNOWLEDGMENT_STAMP, &alice(), "t", "r", &Map::new()).expect_err("no spec");
    assert_eq!(err, "the acknowledgment has no spec");
    assert!(now_rfc3339().ends_with('Z'));
}

#[test]
fn derived_fields_fill_omitted_and_null_copies_but_keep_sent_ones() {
    let object = json!({"spec": {"ptahVersion": "9.9.9", "artifactDigest": null}});
    let derived = derived_fields(&binding(), [("historyFingerprint", json!(d('7')))]).expect("derived");
    let out = applied(
        &object,
        &stamp(&object, &APPROVAL_STAMP, &alice(), "t", "r", &derived).expect("patch"),
    );
    assert_eq!(
        out["spec"]["ptahVersion"], "9.9.9",
        "a sent copy is kept (it was compared before)"
    );
    assert_eq!(out["spec"]["artifactDigest"], json!(d('a')));
    assert_eq!(out["spec"]["historyFingerprint"], json!(d('7')));
    assert_eq!(out["spec"]["runnerProtocolVersion"], 5);
}

#[test]
fn the_copies_cover_every_binding_of_the_plan() {
    // Same field names, same values: a binding added to the plan but not to the copies fails here.
    let copies = serde_json::to_value(binding_copies(&binding())).expect("copies");
    assert_eq!(copies, binding_json());
    assert_eq!(
        copies_mismatch(&binding_copies(&binding()), &binding()),
        Vec::<&str>::new()
    );
    assert_eq!(
        copies_mismatch(&ApprovalBindingCopies::default(), &binding()),
        Vec::<&str>::new()
    );
}

#[test]
fn every_differing_copy_is_named() {
    let mut wrong = binding_json();
    for (key, value) in wrong.as_object_mut().expect("object") {
        *value = match value {
            Value::Number(_) => json!(77),
            Value::String(s) if s.starts_with("sha256:") => json!(d('9')),
            Value::String(s) if s.starts_with("v1-") => json!("v1-ffffffffffffffffffffffffffffffff"),
            Value::String(s) if s.contains('@') => json!(format!("x@{}", d('9'))),
            _ => json!(format!("other-{key}")),
        };
    }
    let copies: ApprovalBindingCopies = serde_json::from_value(wrong).expect("copies");
    let named = copies_mismatch(&copies, &binding());
    assert_eq!(named.len(), 14, "{named:?}");
    let e = err_of(bindings_verdict(&named));
    assert!(
        e.starts_with("bindings do not match the plan: artifactDigest, coordinationDigest"),
        "{e}"
    );
    assert!(e.ends_with("runnerImage, runnerProtocolVersion"), "{e}");
    assert_eq!(bindings_verdict(&[]), Ok(()));
}

#[test]
fn the_stamp_must_be_complete_and_the_requesters() {
    let at = Time(jiff::Timestamp::UNIX_EPOCH);
    let me = alice();
    let full = Stamped {
        identity: Some(&me),
        at: Some(&at),
        request_uid: Some("r"),
    };
    assert_eq!(check_stamped(&full, &ACKNOWLEDGMENT_STAMP, &alice()), Ok(()));
    let bob = Approver {
        username: "bob".into(),
        ..alice()
    };
    let e = err_of(check_stamped(&full, &ACKNOWLEDGMENT_STAMP, &bob));
    assert_eq!(
        e,
        r#"the stamped acknowledgedBy "alice" is not the requester "bob""#
    );
    // Same name, other groups: not the same identity.
    let regrouped = Approver {
        groups: vec![],
        ..alice()
    };
    assert!(err_of(check_stamped(&full, &APPROVAL_STAMP, &regrouped)).contains("is not the requester"));
    let none = Stamped {
        identity: None,
        ..full
    };
    assert_eq!(
        err_of(check_stamped(&none, &ACKNOWLEDGMENT_STAMP, &alice())),
        "the acknowledgment carries no acknowledgedBy (the mutating webhook did not run)"
    );
    let no_time = Stamped { at: None, ..full };
    assert!(err_of(check_stamped(&no_time, &ACKNOWLEDGMENT_STAMP, &alice())).contains("no acknowledgedAt"));
    let empty_uid = Stamped {
        request_uid: Some(""),
        ..full
    };
    assert!(err_of(check_stamped(&empty_uid, &APPROVAL_STAMP, &alice())).contains("no mutationRequestUID"));
}

#[test]
fn references_name_the_exact_live_objects() {
    assert_eq!(check_plan_ref(&reference("p", "1"), &meta("p", "1")), Ok(()));
    assert!(
        err_of(check_plan_ref(&reference("p", "2"), &meta("p", "1"))).starts_with("planRef does not match")
    );
    assert_eq!(
        check_owner("migrationRef", &reference("m", "1"), &reference("m", "1")),
        Ok(())
    );
    assert_eq!(
        err_of(check_owner(
            "migrationRef",
            &reference("m", "2"),
            &reference("m", "1")
        )),
        "migrationRef does not match the plan: the approval names m/2, the plan belongs to m/1"
    );
    let fp = Sha256Digest::parse(&d('1')).expect("digest");
    assert_eq!(check_fingerprint(&fp, "p", &d('1')), Ok(()));
    assert!(err_of(check_fingerprint(&fp, "p", &d('2'))).starts_with("fingerprint does not match"));

    assert_eq!(
        check_live("migration", "approval", &reference("m", "1"), &meta("m", "1")),
        Ok(())
    );
    assert_eq!(
        err_of(check_live(
            "migration",
            "acknowledgment",
            &reference("m", "2"),
            &meta("m", "1")
        )),
        "migration m was replaced: its UID is 1, the acknowledgment names 2"
    );
    let mut deleting = meta("m", "1");
    deleting.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert_eq!(
        err_of(check_live(
            "migration",
            "approval",
            &reference("m", "1"),
            &deleting
        )),
        "migration m is being deleted"
    );
}

fn required(status: &str) -> Vec<Condition> {
    vec![Condition {
        type_: "ApprovalRequired".into(),
        status: status.into(),
        reason: "AwaitingApproval".into(),
        message: String::new(),
        last_transition_time: Time(jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }]
}

#[test]
fn waiting_means_the_phase_the_condition_and_nothing_in_flight() {
    let conditions = required("True");
    let waiting = Waiting {
        noun: "migration",
        waits_for: "a decision",
        phase: Some("AwaitingApproval"),
        awaiting: true,
        refreshing: false,
        conditions: &conditions,
        in_flight: None,
    };
    assert_eq!(check_waiting(&waiting), Ok(()));
    let in_sync = Waiting {
        phase: Some("InSync"),
        awaiting: false,
        ..waiting
    };
    assert_eq!(
        err_of(check_waiting(&in_sync)),
        "migration is not waiting for a decision (phase InSync)"
    );
    let no_phase = Waiting {
        phase: None,
        awaiting: false,
        ..waiting
    };
    assert!(err_of(check_waiting(&no_phase)).contains("(phase none)"));
    let off = required("False");
    let not_required = Waiting {
        conditions: &off,
        ..waiting
    };
    assert_eq!(
        err_of(check_waiting(&not_required)),
        "migration is not waiting for a decision (ApprovalRequired is False)"
    );
    let absent = Waiting {
        conditions: &[],
        ..waiting
    };
    assert!(err_of(check_waiting(&absent)).contains("ApprovalRequired is absent"));
    let busy = Waiting {
        in_flight: Some("ptah-m-apply-x"),
        ..waiting
    };
    assert_eq!(
        err_of(check_waiting(&busy)),
        "migration has an operation in flight (Job ptah-m-apply-x)"
    );
    // The interval's refresh: a Resolve in flight, the plan still waiting for its approval.
    let refreshing = Waiting {
        phase: Some("Resolving"),
        awaiting: false,
        refreshing: true,
        in_flight: Some("ptah-m-resolve-x"),
        ..waiting
    };
    assert_eq!(check_waiting(&refreshing), Ok(()));
    // Still only while the plan needed an approval.
    let refreshing_unrequired = Waiting {
        conditions: &off,
        ..refreshing
    };
    assert_eq!(
        err_of(check_waiting(&refreshing_unrequired)),
        "migration is not waiting for a decision (ApprovalRequired is False)"
    );
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
    let b = binding();
    assert_eq!(check_policy(&b, Ok(&read("pol-uid", 'e'))), Ok(()));
    assert!(err_of(check_policy(&b, Ok(&read("new", 'e')))).contains("was replaced"));
    assert!(err_of(check_policy(&b, Ok(&read("pol-uid", '0')))).contains("bytes changed"));
    let missing = CacheError::NotFound {
        namespace: "ns".into(),
        name: "pol".into(),
    };
    assert!(err_of(check_policy(&b, Err(&missing))).contains("verification policy unusable"));
    assert_eq!(
        stale_unless(None, &Sha256Digest::parse(&d('a')).expect("digest"), "why"),
        Err("plan is stale: why".into())
    );
}

#[test]
fn four_eyes_refuses_every_recorded_writer_and_unrecorded_resources() {
    let meta = |pairs: &[(&str, &str)]| ObjectMeta {
        annotations: Some(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
        ..ObjectMeta::default()
    };
    let alice = Approver {
        username: "alice".into(),
        uid: Some("1".into()),
        groups: vec![],
    };
    // Alice wrote first, bob changed only the interval: bob is the last writer, alice is still
    // a writer (D3 of issue 33).
    let both = meta(&[
        (
            SPEC_WRITERS_ANNOTATION,
            r#"[{"username":"alice","uid":"1"},{"username":"bob"}]"#,
        ),
        (WRITER_USERNAME_ANNOTATION, "bob"),
    ]);
    assert_eq!(
        err_of(check_four_eyes(&alice, &both, "schema")),
        "four-eyes: alice has written the schema's spec, and nobody who ever wrote it may approve \
         its plans (writers on record: alice, bob)"
    );
    let carol = Approver {
        username: "carol".into(),
        uid: None,
        groups: vec![],
    };
    assert_eq!(check_four_eyes(&carol, &both, "schema"), Ok(()));
    // The single-writer annotations of earlier releases still count.
    let legacy = meta(&[
        (WRITER_USERNAME_ANNOTATION, "alice"),
        (WRITER_UID_ANNOTATION, "1"),
    ]);
    assert!(err_of(check_four_eyes(&alice, &legacy, "migration")).contains("alice has written"));
    assert_eq!(
        check_four_eyes(&alice, &meta(&[(WRITER_USERNAME_ANNOTATION, "bob")]), "schema"),
        Ok(())
    );
    // Same name, another UID: another principal (a re-created account); no UID on one side: the same.
    let recreated = meta(&[(SPEC_WRITERS_ANNOTATION, r#"[{"username":"alice","uid":"2"}]"#)]);
    assert_eq!(check_four_eyes(&alice, &recreated, "schema"), Ok(()));
    let no_uid = meta(&[(SPEC_WRITERS_ANNOTATION, r#"[{"username":"alice"}]"#)]);
    assert!(check_four_eyes(&alice, &no_uid, "schema").is_err());
    // No record, or one that does not read, refuses everyone.
    assert_eq!(
        err_of(check_four_eyes(&alice, &meta(&[]), "migration")),
        "four-eyes: the migration has no recorded spec writer, so no approval can be distinct"
    );
    assert!(
        err_of(check_four_eyes(&alice, &ObjectMeta::default(), "schema")).contains("no recorded spec writer")
    );
    let broken = err_of(check_four_eyes(
        &carol,
        &meta(&[(SPEC_WRITERS_ANNOTATION, "bob")]),
        "schema",
    ));
    assert!(
        broken.contains("is unreadable") && broken.contains("no approval can be proven distinct"),
        "{broken}"
    );
}

#[test]
fn updates_may_touch_metadata_only() {
    let old = json!({"metadata": {"labels": {}}, "spec": {"a": 1}});
    let relabelled = json!({"metadata": {"labels": {"x": "y"}}, "spec": {"a": 1}});
    assert_eq!(check_update(&old, &relabelled, "approval"), Ok(()));
    assert_eq!(
        err_of(check_update(
            &old,
            &json!({"metadata": {}, "spec": {"a": 2}}),
            "acknowledgment"
        )),
        "an acknowledgment's spec is immutable: only metadata may change"
    );
}
