//! The spec-writer record: who joins it, what restores it, what overflows it.

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::admission::Operation;
use serde_json::{Value, json};

use super::*;

fn user(name: &str, uid: Option<&str>) -> UserInfo {
    UserInfo {
        username: Some(name.into()),
        uid: uid.map(Into::into),
        ..UserInfo::default()
    }
}

fn apply(object: &Value, verdict: Verdict) -> Value {
    let mut out = object.clone();
    if let Verdict::Patch(p) = verdict {
        json_patch::patch(&mut out, &p).expect("patch applies");
    }
    out
}

/// `object` after a write by `who` (`old` is the stored object for an UPDATE).
fn write(old: Option<&Value>, new: &Value, who: &UserInfo) -> Value {
    let op = if old.is_some() {
        Operation::Update
    } else {
        Operation::Create
    };
    apply(new, stamp_spec_writer(&op, old, new, who).expect("admitted"))
}

fn writers(object: &Value) -> Vec<(String, Option<String>)> {
    recorded(|key| annotation(object, key))
        .expect("readable")
        .into_iter()
        .map(|w| (w.username, w.uid))
        .collect()
}

fn names(object: &Value) -> Vec<String> {
    writers(object).into_iter().map(|(n, _)| n).collect()
}

fn schema(interval: &str) -> Value {
    json!({"kind": "PtahSchema", "metadata": {"name": "s"},
           "spec": {"interval": interval, "desired": {"ociRef": "oci://r/x:v1"}}})
}

#[test]
fn create_records_the_creator_and_overwrites_forged_values() {
    let mut obj = schema("5m");
    obj["metadata"]["annotations"] = json!({
        WRITER_USERNAME_ANNOTATION: "mallory",
        SPEC_WRITERS_ANNOTATION: "[{\"username\":\"carol\"}]",
    });
    let out = write(None, &obj, &user("alice", Some("u1")));
    assert_eq!(annotation(&out, WRITER_USERNAME_ANNOTATION), Some("alice"));
    assert_eq!(annotation(&out, WRITER_UID_ANNOTATION), Some("u1"));
    assert_eq!(writers(&out), vec![("alice".to_owned(), Some("u1".to_owned()))]);

    let bare = json!({"metadata": {"name": "s"}, "spec": {}});
    let out = write(None, &bare, &user("bob", None));
    assert_eq!(annotation(&out, WRITER_UID_ANNOTATION), None);
    assert_eq!(
        annotation(&out, SPEC_WRITERS_ANNOTATION),
        Some(r#"[{"username":"bob"}]"#)
    );
}

/// D3 of issue 33: B changing only `interval` used to replace A as the writer of record.
#[test]
fn a_later_writer_joins_the_record_and_nobody_leaves_it() {
    let a = write(None, &schema("5m"), &user("alice", Some("u1")));
    let mut changed = a.clone();
    changed["spec"]["interval"] = json!("10m");
    let b = write(Some(&a), &changed, &user("bob", None));
    assert_eq!(names(&b), ["alice", "bob"]);
    assert_eq!(annotation(&b, WRITER_USERNAME_ANNOTATION), Some("bob"));
    assert_eq!(annotation(&b, WRITER_UID_ANNOTATION), None);

    // Alice writing again does not duplicate her, and she becomes the last writer.
    let mut again = b.clone();
    again["spec"]["interval"] = json!("1h");
    let c = write(Some(&b), &again, &user("alice", Some("u1")));
    assert_eq!(names(&c), ["alice", "bob"]);
    assert_eq!(annotation(&c, WRITER_USERNAME_ANNOTATION), Some("alice"));

    // A spec write that also sends a record without bob still keeps him.
    let mut forged = c.clone();
    forged["spec"]["interval"] = json!("2h");
    forged["metadata"]["annotations"][SPEC_WRITERS_ANNOTATION] = json!(r#"[{"username":"carol"}]"#);
    let d = write(Some(&c), &forged, &user("dave", None));
    assert_eq!(names(&d), ["alice", "bob", "dave"]);
}

#[test]
fn other_updates_restore_every_stored_annotation() {
    let a = write(None, &schema("5m"), &user("alice", Some("u1")));
    // A metadata-only update leaves the record alone…
    let mut labelled = a.clone();
    labelled["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(
        stamp_spec_writer(&Operation::Update, Some(&a), &labelled, &user("bob", None)),
        Ok(Verdict::Allow)
    );
    // …and a forged or removed record on such an update is put back.
    let mut forged = a.clone();
    forged["metadata"]["annotations"][SPEC_WRITERS_ANNOTATION] = json!("[]");
    forged["metadata"]["annotations"][WRITER_USERNAME_ANNOTATION] = json!("carol");
    forged["metadata"]["annotations"]
        .as_object_mut()
        .expect("map")
        .remove(WRITER_UID_ANNOTATION);
    let out = write(Some(&a), &forged, &user("bob", None));
    assert_eq!(out["metadata"]["annotations"], a["metadata"]["annotations"]);
    let mut stripped = a.clone();
    stripped["metadata"]
        .as_object_mut()
        .expect("map")
        .remove("annotations");
    let out = write(Some(&a), &stripped, &user("bob", None));
    assert_eq!(out["metadata"]["annotations"], a["metadata"]["annotations"]);
}

#[test]
fn the_single_writer_annotations_of_earlier_releases_seed_the_record() {
    let mut old = schema("5m");
    old["metadata"]["annotations"] =
        json!({WRITER_USERNAME_ANNOTATION: "alice", WRITER_UID_ANNOTATION: "u1"});
    assert_eq!(writers(&old), vec![("alice".to_owned(), Some("u1".to_owned()))]);
    let mut changed = old.clone();
    changed["spec"]["interval"] = json!("10m");
    let out = write(Some(&old), &changed, &user("bob", None));
    assert_eq!(names(&out), ["alice", "bob"]);
}

#[test]
fn the_record_is_bounded_and_a_new_writer_past_it_is_refused() {
    let mut object = write(None, &schema("0m"), &user("w0", None));
    for i in 1..MAX_SPEC_WRITERS {
        let mut next = object.clone();
        next["spec"]["interval"] = json!(format!("{i}m"));
        object = write(Some(&object), &next, &user(&format!("w{i}"), None));
    }
    assert_eq!(writers(&object).len(), MAX_SPEC_WRITERS);
    let mut next = object.clone();
    next["spec"]["interval"] = json!("99m");
    let refused = stamp_spec_writer(&Operation::Update, Some(&object), &next, &user("late", None))
        .expect_err("a 17th writer");
    assert!(
        refused.starts_with("four-eyes: 16 identities have written this PtahSchema's spec"),
        "{refused}"
    );
    assert!(refused.contains("late may not write it"), "{refused}");
    // A recorded writer may still change it.
    let out = write(Some(&object), &next, &user("w3", None));
    assert_eq!(writers(&out).len(), MAX_SPEC_WRITERS);
    assert_eq!(annotation(&out, WRITER_USERNAME_ANNOTATION), Some("w3"));
}

#[test]
fn an_unreadable_record_refuses_spec_writes_and_is_kept_on_others() {
    let mut old = schema("5m");
    old["metadata"]["annotations"] = json!({SPEC_WRITERS_ANNOTATION: "alice"});
    let mut changed = old.clone();
    changed["spec"]["interval"] = json!("10m");
    let refused = stamp_spec_writer(&Operation::Update, Some(&old), &changed, &user("bob", None))
        .expect_err("unreadable");
    assert!(
        refused.contains("is unreadable") && refused.contains("Re-create the PtahSchema"),
        "{refused}"
    );
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"x": "y"});
    assert_eq!(
        stamp_spec_writer(&Operation::Update, Some(&old), &labelled, &user("bob", None)),
        Ok(Verdict::Allow)
    );
    let nameless = json!({"metadata": {"annotations": {SPEC_WRITERS_ANNOTATION: r#"[{"username":""}]"#}}});
    assert!(
        recorded(|k| annotation(&nameless, k))
            .expect_err("nameless")
            .contains("without a username")
    );
}

#[test]
fn a_writer_is_matched_by_username_unless_both_uids_differ() {
    let w = |uid: Option<&str>| SpecWriter {
        username: "alice".into(),
        uid: uid.map(Into::into),
    };
    assert!(w(Some("1")).is("alice", Some("1")));
    assert!(w(None).is("alice", Some("1")));
    assert!(w(Some("1")).is("alice", None));
    assert!(!w(Some("1")).is("alice", Some("2")));
    assert!(!w(None).is("bob", None));
}

#[test]
fn delete_is_ignored_and_anonymous_writes_refused() {
    let obj = json!({"metadata": {}, "spec": {}});
    assert_eq!(
        stamp_spec_writer(&Operation::Delete, None, &obj, &user("a", None)),
        Ok(Verdict::Allow)
    );
    assert_eq!(
        stamp_spec_writer(&Operation::Create, None, &obj, &UserInfo::default()),
        Err("the request carries no username".to_owned())
    );
    assert_eq!(
        stamp_spec_writer(&Operation::Update, None, &obj, &user("a", None)),
        Err("an UPDATE without the old object".to_owned())
    );
}
