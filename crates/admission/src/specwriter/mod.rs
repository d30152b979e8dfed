//! Four-eyes support: record everyone who has written a PtahSchema's (or PtahMigration's) spec.
//!
//! On CREATE, and on an UPDATE that changes the spec, the writer joins the record
//! ([`SPEC_WRITERS_ANNOTATION`], bounded by [`MAX_SPEC_WRITERS`]) and becomes the last writer;
//! whatever the client sent in those annotations is overwritten. On any other UPDATE (status,
//! finalizers, labels) the annotations are restored to their stored values. So nobody can name
//! someone else as a writer, or drop themselves from the record, without the webhook seeing it.

mod record;
#[cfg(test)]
mod tests;

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, Operation};
use serde_json::{Map, Value};

use crate::Admission;
use crate::review::{Verdict, object_json};

pub use record::{
    MAX_SPEC_WRITERS, OWNED_ANNOTATIONS, SPEC_WRITERS_ANNOTATION, SpecWriter, WRITER_UID_ANNOTATION,
    WRITER_USERNAME_ANNOTATION, recorded,
};

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The values the webhook's annotations must have after a spec write by `user`: the stored
/// record (`old`, none on CREATE) with `user` added, and `user` as the last writer.
fn written(old: Option<&Value>, user: &UserInfo, noun: &str) -> Result<[Option<String>; 3], String> {
    let username = user.username.as_deref().filter(|u| !u.is_empty());
    let username = username.ok_or("the request carries no username")?;
    let uid = user.uid.as_deref().filter(|u| !u.is_empty());
    let stored = match old {
        Some(old) => recorded(|key| annotation(old, key)).map_err(|e| {
            format!(
                "four-eyes: {e}; only this webhook writes it, so it was changed while the webhook \
                 was off. Re-create the {noun} to start a new record"
            )
        })?,
        None => Vec::new(),
    };
    let writer = SpecWriter {
        username: username.to_owned(),
        uid: uid.map(str::to_owned),
    };
    let writers = record::with_writer(stored, writer, noun)?;
    Ok([
        Some(record::encode(&writers)?),
        Some(username.to_owned()),
        uid.map(str::to_owned),
    ])
}

/// The patch that leaves `new` with the right writer annotations: the record with the requester
/// added when the spec is written (CREATE, or an UPDATE changing `spec`), otherwise the stored
/// values from `old`. A spec write that would overflow the record is refused (`Err`).
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
    let noun = new.get("kind").and_then(Value::as_str).unwrap_or("resource");
    // Only a CREATE has no old object, and a CREATE always writes the spec.
    let values = match old {
        Some(old) if !writes_spec => OWNED_ANNOTATIONS.map(|key| annotation(old, key).map(str::to_owned)),
        _ => written(old, user, noun)?,
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
    for (key, value) in OWNED_ANNOTATIONS.into_iter().zip(values) {
        match value {
            Some(v) => annotations.insert(key.to_owned(), Value::String(v)),
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

/// The kinds whose spec writers are recorded: the ones a person approves plans of.
pub const SPEC_WRITER_KINDS: [&str; 2] = ["PtahSchema", "PtahMigration"];

impl Admission {
    /// Mutating (CREATE/UPDATE of PtahSchema/PtahMigration): records or restores the writers. Any
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
