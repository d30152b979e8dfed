use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::shared::{Approver, Sha256Digest};
use ptah_api::{
    PtahMigration, PtahMigrationApprovalSpec, PtahMigrationPlan, PtahMigrationRunAcknowledgmentSpec,
};
use serde_json::{Value, json};

use super::common::{APPROVAL_STAMP, binding_copies, stamp};
use super::fixtures::{binding_json, d, err_of, merged};
use super::migration_rules::*;

fn plan() -> PtahMigrationPlan {
    let spec = merged(
        json!({
            "contractVersion": 1, "migrationRef": {"name": "orders", "uid": "migration-uid"},
            "fingerprint": d('1'), "historyFingerprint": d('7'), "currentVersion": 3,
            "migrations": [{"version": 4, "checksum": "c4"}, {"version": 5, "checksum": "c5"}]
        }),
        &binding_json(),
    );
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigrationPlan",
        "metadata": {"name": "ptah-mplan-0123456789abcdef01234567", "namespace": "ns", "uid": "plan-uid"},
        "spec": spec
    }))
    .expect("plan")
}

fn approval(extra: Value) -> PtahMigrationApprovalSpec {
    let spec = json!({
        "migrationRef": {"name": "orders", "uid": "migration-uid"},
        "planRef": {"name": "ptah-mplan-0123456789abcdef01234567", "uid": "plan-uid"},
        "planFingerprint": d('1')
    });
    serde_json::from_value(merged(spec, &extra)).expect("approval spec")
}

/// A migration whose status merges `status` over one waiting for a decision on `plan()`.
fn migration(status: Value) -> PtahMigration {
    let waiting = json!({
        "phase": "AwaitingApproval",
        "plan": {"name": "ptah-mplan-0123456789abcdef01234567", "uid": "plan-uid"},
        "artifact": {"digest": d('a')},
        "history": {"observedAt": "2025-01-01T00:00:00Z", "contractVersion": 1, "currentVersion": 3,
                    "appliedCount": 3, "pendingCount": 2, "fingerprint": d('7'), "targetIdentityDigest": d('3')},
        "conditions": [{"type": "ApprovalRequired", "status": "True", "reason": "AwaitingApproval",
                        "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}]
    });
    let status = merged(waiting, &status);
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": "orders", "namespace": "ns", "uid": "migration-uid"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "k", "urlFrom": {"name": "db", "key": "url"}},
            "artifact": {"ociRef": "oci://r.example/m:v1", "verificationPolicyFrom": {"name": "pol", "key": "p"}}
        },
        "status": status
    }))
    .expect("migration")
}

fn unresolved(id: char) -> Value {
    json!({"unresolvedRun": {"outcome": "Unknown", "operationID": d(id), "jobName": "ptah-m-apply-x",
                             "recordedAt": "2025-01-01T00:00:00Z"}})
}

#[test]
fn references_must_match_the_live_plan_including_its_history() {
    assert_eq!(check_references(&approval(json!({})), &plan()), Ok(()));
    assert_eq!(
        check_references(&approval(json!({"historyFingerprint": d('7')})), &plan()),
        Ok(())
    );
    let stale = err_of(check_references(
        &approval(json!({"historyFingerprint": d('8')})),
        &plan(),
    ));
    assert!(
        stale.starts_with("stale history fingerprint: the approval names"),
        "{stale}"
    );
    let wrong_fp = approval(json!({"planFingerprint": d('9')}));
    assert!(err_of(check_references(&wrong_fp, &plan())).starts_with("fingerprint does not match"));
    let wrong_uid = approval(json!({"planRef": {"name": "ptah-mplan-0123456789abcdef01234567", "uid": "x"}}));
    assert!(err_of(check_references(&wrong_uid, &plan())).starts_with("planRef does not match"));
    let wrong_owner = approval(json!({"migrationRef": {"name": "orders", "uid": "x"}}));
    assert!(err_of(check_references(&wrong_owner, &plan())).starts_with("migrationRef does not match"));
}

#[test]
fn copied_bindings_must_equal_the_plans() {
    let same = approval(
        json!({"artifactDigest": d('a'), "executionBindingID": "v1-0123456789abcdef0123456789abcdef"}),
    );
    assert_eq!(check_bindings(&same, &plan()), Ok(()));
    let differs = approval(json!({"coordinationDigest": d('9'), "controllerStateVersion": 2}));
    assert_eq!(
        err_of(check_bindings(&differs, &plan())),
        "bindings do not match the plan: coordinationDigest, controllerStateVersion"
    );
}

#[test]
fn the_stamp_hydrates_the_history_fingerprint_and_every_copy() {
    let object = json!({"spec": serde_json::to_value(approval(json!({}))).expect("spec")});
    let me = Approver {
        username: "alice".into(),
        uid: Some("u".into()),
        groups: vec!["system:authenticated".into()],
    };
    let patch = stamp(
        &object,
        &APPROVAL_STAMP,
        &me,
        "2025-05-05T05:05:05Z",
        "req",
        &derived(&plan()).expect("derived"),
    )
    .expect("patch");
    let mut out = object.clone();
    json_patch::patch(&mut out, &patch).expect("applies");
    let spec: PtahMigrationApprovalSpec = serde_json::from_value(out["spec"].clone()).expect("spec");
    assert_eq!(
        spec.history_fingerprint.as_ref().map(Sha256Digest::as_str),
        Some(d('7').as_str())
    );
    assert_eq!(spec.bindings, binding_copies(&plan().spec.binding));
    assert_eq!(spec.approver, Some(me.clone()));
    assert_eq!(check_identity(&spec, &me), Ok(()));
    // What was hydrated passes every later check.
    assert_eq!(check_references(&spec, &plan()), Ok(()));
    assert_eq!(check_migration(&spec, &migration(json!({})), &plan()), Ok(()));
}

#[test]
fn the_history_must_be_the_one_the_plan_was_derived_from() {
    let a = approval(json!({}));
    assert_eq!(check_history(&a, &plan(), &migration(json!({}))), Ok(()));
    let mut moved = migration(json!({}));
    if let Some(h) = moved.status.as_mut().and_then(|s| s.history.as_mut()) {
        h.fingerprint = Sha256Digest::parse(&d('8')).expect("digest");
    }
    let e = err_of(check_history(&a, &plan(), &moved));
    assert!(
        e.starts_with("stale history fingerprint: migration orders last read history"),
        "{e}"
    );
    assert!(err_of(check_migration(&a, &moved, &plan())).starts_with("stale history fingerprint"));
    let mut unread = migration(json!({}));
    if let Some(s) = unread.status.as_mut() {
        s.history = None;
    }
    assert_eq!(
        err_of(check_history(&a, &plan(), &unread)),
        "stale history fingerprint: migration orders has no history reading"
    );
}

#[test]
fn the_migration_must_wait_for_a_decision_on_exactly_this_plan() {
    let a = approval(json!({}));
    let ok = migration(json!({}));
    assert_eq!(check_migration(&a, &ok, &plan()), Ok(()));
    assert_eq!(
        err_of(check_migration(
            &a,
            &migration(json!({"phase": "InSync"})),
            &plan()
        )),
        "migration is not waiting for a decision (phase InSync)"
    );
    let not_required = migration(
        json!({"conditions": [{"type": "ApprovalRequired", "status": "False",
        "reason": "HistoryMatched", "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}),
    );
    assert!(err_of(check_migration(&a, &not_required, &plan())).contains("not waiting for a decision"));
    let other_plan = migration(json!({"plan": {"name": "ptah-mplan-ffffffffffffffffffffffff", "uid": "u2"}}));
    assert!(
        err_of(check_migration(&a, &other_plan, &plan()))
            .starts_with("plan is stale: migration orders's current plan")
    );
    let no_plan = migration(json!({"plan": null}));
    assert!(err_of(check_migration(&a, &no_plan, &plan())).contains("has no current plan"));
    let busy = migration(json!({"activeOperation": {
        "type": "History", "id": d('6'), "inputFingerprint": d('6'), "jobName": "ptah-m-history-x",
        "startedAt": "2025-01-01T00:00:00Z", "attempt": 1, "executionBindingID": "v1-0123456789abcdef0123456789abcdef"}}));
    assert!(
        err_of(check_migration(&a, &busy, &plan())).contains("operation in flight (Job ptah-m-history-x)")
    );
    // The interval's refresh (issue 33): a Resolve, Verify or history read, the plan still current.
    let refreshing = |phase: &str, op: &str| {
        migration(json!({"phase": phase, "activeOperation": {
            "type": op, "id": d('6'), "inputFingerprint": d('6'), "jobName": "ptah-m-refresh-x",
            "startedAt": "2025-01-01T00:00:00Z", "attempt": 1, "executionBindingID": "v1-0123456789abcdef0123456789abcdef"}}))
    };
    for (phase, op) in [
        ("Resolving", "Resolve"),
        ("Verifying", "Verify"),
        ("Reading", "History"),
    ] {
        assert_eq!(
            check_migration(&a, &refreshing(phase, op), &plan()),
            Ok(()),
            "{phase}"
        );
    }
    for (phase, op) in [("VerifyingHistory", "History"), ("Applying", "Apply")] {
        assert_eq!(
            err_of(check_migration(&a, &refreshing(phase, op), &plan())),
            format!("migration is not waiting for a decision (phase {phase})")
        );
    }
    assert_eq!(
        err_of(check_migration(&a, &refreshing("Reading", "Apply"), &plan())),
        "migration is not waiting for a decision (phase Reading)"
    );
    assert!(err_of(check_migration(&a, &migration(unresolved('6')), &plan())).contains("unresolved run"));
    let new_artifact = migration(json!({"artifact": {"digest": d('9')}}));
    assert_eq!(
        err_of(check_migration(&a, &new_artifact, &plan())),
        "plan is stale: the artifact digest changed"
    );
    let mut other_db = migration(json!({}));
    if let Some(h) = other_db.status.as_mut().and_then(|s| s.history.as_mut()) {
        h.target_identity_digest = Sha256Digest::parse(&d('9')).expect("digest");
    }
    assert!(err_of(check_migration(&a, &other_db, &plan())).contains("database identity changed"));

    let mut replaced = migration(json!({}));
    replaced.metadata.uid = Some("other".into());
    assert!(err_of(check_migration(&a, &replaced, &plan())).contains("was replaced"));
    let mut deleting = migration(json!({}));
    deleting.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert_eq!(
        err_of(check_migration(&a, &deleting, &plan())),
        "migration orders is being deleted"
    );
    let mut statusless = migration(json!({}));
    statusless.status = None;
    assert!(err_of(check_migration(&a, &statusless, &plan())).contains("has no status yet"));
}

fn acknowledgment(id: char, extra: Value) -> PtahMigrationRunAcknowledgmentSpec {
    let spec = json!({"migrationRef": {"name": "orders", "uid": "migration-uid"}, "operationID": d(id)});
    serde_json::from_value(merged(spec, &extra)).expect("acknowledgment spec")
}

#[test]
fn an_acknowledgment_names_exactly_the_unresolved_run() {
    let ack = acknowledgment('6', json!({}));
    // An unresolved run blocks the migration (phase Blocked); the acknowledgment does not care.
    let blocked = merged(unresolved('6'), &json!({"phase": "Blocked"}));
    assert_eq!(check_acknowledgment(&ack, &migration(blocked)), Ok(()));
    let e = err_of(check_acknowledgment(&ack, &migration(unresolved('5'))));
    assert!(
        e.starts_with("acknowledgment for another operation: migration orders's unresolved run is operation"),
        "{e}"
    );
    assert_eq!(
        err_of(check_acknowledgment(&ack, &migration(json!({})))),
        "no unresolved run: migration orders has nothing to acknowledge"
    );
    let mut unreconciled = migration(json!({}));
    unreconciled.status = None;
    assert!(err_of(check_acknowledgment(&ack, &unreconciled)).starts_with("no unresolved run"));
    let elsewhere = acknowledgment('6', json!({"migrationRef": {"name": "orders", "uid": "old"}}));
    assert_eq!(
        err_of(check_acknowledgment(&elsewhere, &migration(unresolved('6')))),
        "migration orders was replaced: its UID is migration-uid, the acknowledgment names old"
    );
}

#[test]
fn an_acknowledgment_carries_its_acknowledgers_stamp() {
    let me = Approver {
        username: "alice".into(),
        uid: None,
        groups: vec!["g".into()],
    };
    let stamped = |who: &str| {
        acknowledgment(
            '6',
            json!({"acknowledgedBy": {"username": who, "groups": ["g"]}, "acknowledgedAt": "2025-01-01T00:00:00Z",
                   "mutationRequestUID": "r"}),
        )
    };
    assert_eq!(check_acknowledger(&stamped("alice"), &me), Ok(()));
    assert!(err_of(check_acknowledger(&stamped("bob"), &me)).contains("is not the requester"));
    assert!(err_of(check_acknowledger(&acknowledgment('6', json!({})), &me)).contains("no acknowledgedBy"));
    // An approval's fields do not stand in for an acknowledgment's.
    let wrong_shape = acknowledgment(
        '6',
        json!({"approver": {"username": "alice", "groups": ["g"]}, "approvedAt": "2025-01-01T00:00:00Z",
               "mutationRequestUID": "r"}),
    );
    assert!(err_of(check_acknowledger(&wrong_shape, &me)).contains("no acknowledgedBy"));
}
