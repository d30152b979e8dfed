//! Four-eyes support: record who last wrote a PtahSchema's (or PtahMigration's) spec.
//!
//! On CREATE and on an UPDATE that changes the spec, the writer's username and UID are stamped
//! as annotations, overwriting whatever the client sent. On any other UPDATE (status, finalizers,
//! labels) the annotations are restored to their stored values, so nobody can name someone else
//! as the writer without writing the spec themselves.

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, Operation};
use serde_json::{Map, Value};

use crate::Admission;
use crate::review::{Verdict, object_json};

/// Annotation holding the username of the last spec writer.
pub const WRITER_USERNAME_ANNOTATION: &str = "operator.ptah.run/last-spec-writer-username";
/// Annotation holding the UID of the last spec writer (absent when the authenticator gives none).
pub const WRITER_UID_ANNOTATION: &str = "operator.ptah.run/last-spec-writer-uid";

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The patch that leaves `new` with the right writer annotations: the requester's when the spec
/// is written (CREATE, or an UPDATE changing `spec`), otherwise the stored ones from `old`.
pub fn stamp_spec_writer(
    operation: &Operation,
    old: Option<&Value>,
    new: &Value,
    user: &UserInfo,
) -> Result<Verdict, String> {
    let writes_spec = match (operation, old) {
        (Operation::Create, _) => true,
        (Operation::Update, Some(old)) => old.get("spec") != new.get("spec"),
        (Operation::Update, None) => return Err("an UPDATE without the old object".into()),
        _ => return Ok(Verdict::Allow),
    };
    let (username, uid) = if writes_spec {
        let username = user.username.as_deref().filter(|u| !u.is_empty());
        let username = username.ok_or("the request carries no username")?;
        (Some(username), user.uid.as_deref().filter(|u| !u.is_empty()))
    } else {
        let old = old.unwrap_or(new);
        (
            annotation(old, WRITER_USERNAME_ANNOTATION),
            annotation(old, WRITER_UID_ANNOTATION),
        )
    };
    let mut stamped = new.clone();
    let metadata = stamped
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or("the object has no metadata")?;
    let annotations = metadata
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if annotations.is_null() {
        *annotations = Value::Object(Map::new());
    }
    let annotations = annotations
        .as_object_mut()
        .ok_or("metadata.annotations is not an object")?;
    for (key, value) in [
        (WRITER_USERNAME_ANNOTATION, username),
        (WRITER_UID_ANNOTATION, uid),
    ] {
        match value {
            Some(v) => annotations.insert(key.to_owned(), Value::String(v.to_owned())),
            None => annotations.remove(key),
        };
    }
    if annotations.is_empty() && new.pointer("/metadata/annotations").is_none() {
        metadata.remove("annotations");
    }
    let patch = json_patch::diff(new, &stamped);
    Ok(if patch.0.is_empty() {
        Verdict::Allow
    } else {
        Verdict::Patch(patch)
    })
}

/// The kinds whose spec writer is recorded: the ones a person approves plans of.
pub const SPEC_WRITER_KINDS: [&str; 2] = ["PtahSchema", "PtahMigration"];

impl Admission {
    /// Mutating (CREATE/UPDATE of PtahSchema/PtahMigration): stamps or restores the writer. Any
    /// other kind is refused, so a misrouted webhook fails closed instead of annotating it.
    pub async fn mutate_spec_writer(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        let kind = req.kind.kind.as_str();
        if !SPEC_WRITER_KINDS.contains(&kind) {
            return Verdict::deny(format!("the spec-writer webhook does not handle kind {kind}"));
        }
        let result = object_json(req.object.as_ref(), "object").and_then(|new| {
            let old = match req.operation {
                Operation::Update => Some(object_json(req.old_object.as_ref(), "old object")?),
                _ => None,
            };
            stamp_spec_writer(&req.operation, old.as_ref(), &new, &req.user_info)
        });
        result.unwrap_or_else(Verdict::Deny)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn create_stamps_and_overwrites_forged_values() {
        let obj = json!({"metadata": {"name": "s", "annotations": {WRITER_USERNAME_ANNOTATION: "mallory"}}, "spec": {"a": 1}});
        let v = stamp_spec_writer(&Operation::Create, None, &obj, &user("alice", Some("u1"))).expect("ok");
        let out = apply(&obj, v);
        assert_eq!(annotation(&out, WRITER_USERNAME_ANNOTATION), Some("alice"));
        assert_eq!(annotation(&out, WRITER_UID_ANNOTATION), Some("u1"));

        let bare = json!({"metadata": {"name": "s"}, "spec": {}});
        let out = apply(
            &bare,
            stamp_spec_writer(&Operation::Create, None, &bare, &user("bob", None)).expect("ok"),
        );
        assert_eq!(annotation(&out, WRITER_USERNAME_ANNOTATION), Some("bob"));
        assert_eq!(annotation(&out, WRITER_UID_ANNOTATION), None);
    }

    #[test]
    fn spec_update_restamps_and_other_updates_restore() {
        let old = json!({"metadata": {"annotations": {WRITER_USERNAME_ANNOTATION: "alice", WRITER_UID_ANNOTATION: "u1"}}, "spec": {"a": 1}});
        let mut changed = old.clone();
        changed["spec"]["a"] = json!(2);
        let out = apply(
            &changed,
            stamp_spec_writer(&Operation::Update, Some(&old), &changed, &user("bob", None)).expect("ok"),
        );
        assert_eq!(annotation(&out, WRITER_USERNAME_ANNOTATION), Some("bob"));
        assert_eq!(annotation(&out, WRITER_UID_ANNOTATION), None);

        // A metadata-only update leaves the writer alone…
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"x": "y"});
        let v = stamp_spec_writer(&Operation::Update, Some(&old), &labelled, &user("bob", None)).expect("ok");
        assert_eq!(v, Verdict::Allow);
        // …and a forged writer on such an update is put back.
        let mut forged = old.clone();
        forged["metadata"]["annotations"][WRITER_USERNAME_ANNOTATION] = json!("carol");
        forged["metadata"]["annotations"]
            .as_object_mut()
            .expect("map")
            .remove(WRITER_UID_ANNOTATION);
        let out = apply(
            &forged,
            stamp_spec_writer(&Operation::Update, Some(&old), &forged, &user("bob", None)).expect("ok"),
        );
        assert_eq!(annotation(&out, WRITER_USERNAME_ANNOTATION), Some("alice"));
        assert_eq!(annotation(&out, WRITER_UID_ANNOTATION), Some("u1"));
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
    }
}
