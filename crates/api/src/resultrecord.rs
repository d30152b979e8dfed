//! `PtahResultRecord`: one immutable piece of an operation's result, delivered by its runner over
//! mutual TLS and stored by the manager's receiver (docs/security.md, "Durable result delivery").
//!
//! Only the manager reads or writes these: they hold a Plan's SQL and reference-row values, which
//! readers and authors of the namespace must not see (the chart's roles leave them out).

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{schemaplan::ChunkData, shared::Sha256Digest};

/// The label every record carries: its operation's stem without the `ptah-result-` prefix,
/// shortened to a label value's 63 characters, so one list finds an operation's records.
pub const RESULT_OPERATION_LABEL: &str = "operator.ptah.run/result-operation";

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResultRecordType {
    /// The operation's one enrolment: created when the receiver issues its client certificate;
    /// the API server's create is the check that it happens once across replicas.
    Credential,
    /// Announces a body: its size, chunk count and digest. Written first.
    Intent,
    /// One piece of the body (at most 512 KiB).
    Chunk,
    /// Written last, once every chunk is stored: the body may be read.
    Complete,
    /// The manager consumed the result; the records await deletion.
    Retired,
}

/// What an `intent` record announces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultIntent {
    /// The body's size in bytes.
    #[schemars(range(min = 1))]
    pub size: i64,
    /// How many chunk records hold it.
    #[schemars(range(min = 1, max = 64))]
    pub chunks: i32,
    /// The body's sha256.
    pub digest: Sha256Digest,
}

/// One record of an operation's delivered result (no status).
#[derive(CustomResource, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[kube(
    group = "operator.ptah.run",
    version = "v1alpha1",
    kind = "PtahResultRecord",
    plural = "ptahresultrecords",
    namespaced,
    shortname = "ptahresult",
    category = "ptah",
    derive = "PartialEq"
)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self == oldSelf").message("a result record is immutable"))]
#[x_kube(validation = Rule::new("(self.type == 'chunk') == (has(self.index) && has(self.data))")
    .message("a chunk record, and only a chunk record, has an index and data"))]
#[x_kube(validation = Rule::new("(self.type == 'intent') == has(self.intent)")
    .message("an intent record, and only an intent record, announces a body"))]
pub struct PtahResultRecordSpec {
    /// What the record is.
    #[serde(rename = "type")]
    pub record_type: ResultRecordType,
    /// The operation's stem, the common beginning of its records' names.
    #[schemars(length(min = 1, max = 80), regex(pattern = r"^ptah-result-[0-9a-f]{64}$"))]
    pub stem: String,
    /// A chunk's number, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 63))]
    pub index: Option<i32>,
    /// A chunk's bytes (base64 on the wire, at most 512 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 699052))]
    pub data: Option<ChunkData>,
    /// An intent's announcement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<ResultIntent>,
}

/// The value of [`RESULT_OPERATION_LABEL`] for the records under `stem`.
pub fn operation_label(stem: &str) -> &str {
    let hex = stem.strip_prefix("ptah-result-").unwrap_or(stem);
    hex.get(..63).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operation_label_is_the_stem_hash_within_a_label_value() {
        let stem = format!("ptah-result-{}", "a".repeat(64));
        let label = operation_label(&stem);
        assert_eq!(label.len(), 63);
        assert!(label.chars().all(|c| c == 'a'));
    }
}
