//! The record of everyone who has written a PtahSchema's or PtahMigration's spec, kept in
//! annotations that only the spec-writer webhook sets.
//!
//! The record is a set, never shrinking while the resource exists: a plan is computed from the
//! whole spec, and the webhook sees only the old and the new object, so it cannot tell which
//! writer chose a value the plan depends on (an `interval`-only edit keeps the values another
//! writer chose). Counting every writer is the strict form of "nobody who shaped the plan's
//! inputs approves it". Only re-creating the resource starts a new record.

use serde::{Deserialize, Serialize};

/// Annotation holding every identity that has written the spec, as a JSON array of
/// `{"username", "uid"}` objects in the order they first wrote it.
pub const SPEC_WRITERS_ANNOTATION: &str = "operator.ptah.run/spec-writers";
/// Annotation holding the username of the last spec writer (still written; the only record of
/// releases before the set, read as one more writer).
pub const WRITER_USERNAME_ANNOTATION: &str = "operator.ptah.run/last-spec-writer-username";
/// Annotation holding the UID of the last spec writer (absent when the authenticator gives none).
pub const WRITER_UID_ANNOTATION: &str = "operator.ptah.run/last-spec-writer-uid";
/// The most identities the record holds. A spec write by one more identity is refused rather
/// than dropping anyone, since a dropped writer could then approve.
pub const MAX_SPEC_WRITERS: usize = 16;

/// The annotations the webhook owns: restored on every write that does not change the spec.
pub const OWNED_ANNOTATIONS: [&str; 3] = [
    SPEC_WRITERS_ANNOTATION,
    WRITER_USERNAME_ANNOTATION,
    WRITER_UID_ANNOTATION,
];

/// One identity that wrote the spec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecWriter {
    /// The requester's username.
    pub username: String,
    /// The requester's UID, when the authenticator gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

impl SpecWriter {
    /// Whether the identity (`username`, `uid`) is this writer: the same username, unless both
    /// carry a UID and the UIDs differ (a deleted and re-created account is another principal).
    /// A missing UID on either side matches, so an authenticator that omits it cannot launder
    /// the writer into an approver.
    pub fn is(&self, username: &str, uid: Option<&str>) -> bool {
        self.username == username
            && match (self.uid.as_deref(), uid) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// The writers `get` (an annotation lookup) records: the set, plus the single last writer that
/// releases before the set wrote, when it is not in the set already. An unreadable set is an
/// error, never an empty record.
pub fn recorded<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Vec<SpecWriter>, String> {
    let mut writers: Vec<SpecWriter> = match get(SPEC_WRITERS_ANNOTATION) {
        None => Vec::new(),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("the annotation {SPEC_WRITERS_ANNOTATION} is unreadable ({e})"))?,
    };
    if writers.iter().any(|w| w.username.is_empty()) {
        return Err(format!(
            "the annotation {SPEC_WRITERS_ANNOTATION} names a writer without a username"
        ));
    }
    let legacy = get(WRITER_USERNAME_ANNOTATION)
        .filter(|u| !u.is_empty())
        .map(|username| SpecWriter {
            username: username.to_owned(),
            uid: get(WRITER_UID_ANNOTATION)
                .filter(|u| !u.is_empty())
                .map(str::to_owned),
        });
    if let Some(last) = legacy
        && !writers.contains(&last)
    {
        writers.push(last);
    }
    Ok(writers)
}

/// `writers` with `writer` added unless it is recorded already; `Err` with the refusal when that
/// would pass [`MAX_SPEC_WRITERS`] (`noun` names the resource in the message).
pub fn with_writer(
    mut writers: Vec<SpecWriter>,
    writer: SpecWriter,
    noun: &str,
) -> Result<Vec<SpecWriter>, String> {
    if writers.contains(&writer) {
        return Ok(writers);
    }
    if writers.len() >= MAX_SPEC_WRITERS {
        return Err(format!(
            "four-eyes: {} identities have written this {noun}'s spec, the most its record holds, \
             so {} may not write it too: forgetting a writer would let them approve. One of the \
             recorded writers may change it, or re-create the {noun} to start a new record",
            writers.len(),
            writer.username
        ));
    }
    writers.push(writer);
    Ok(writers)
}

/// The annotation value of `writers`.
pub fn encode(writers: &[SpecWriter]) -> Result<String, String> {
    serde_json::to_string(writers).map_err(|e| format!("cannot encode the spec writers: {e}"))
}
