//! `PtahResultRecord` objects: how the receiver writes an operation's delivered result and how
//! the reconcilers read it back (docs/security.md, "Durable result delivery").

use std::collections::BTreeMap;

use k8s_openapi::{ByteString, apimachinery::pkg::apis::meta::v1::OwnerReference};
use kube::api::ListParams;
use ptah_api::{
    PtahResultRecord, PtahResultRecordSpec,
    resultrecord::{RESULT_OPERATION_LABEL, ResultIntent, ResultRecordType, operation_label},
    schemaplan::ChunkData,
};
use ptah_fingerprint::Digest;
use ptah_resultdelivery::{Intent, ReassemblyError, RecordType, ResourceKind, reassemble};

/// The records of one operation, found by their label and kept only when their stem matches.
pub fn list_params(stem: &str) -> ListParams {
    ListParams::default().labels(&format!("{RESULT_OPERATION_LABEL}={}", operation_label(stem)))
}

/// The owner reference of an operation's records: its resource, so deleting the resource deletes
/// them; not the controller, which is the resource's own.
pub fn owner(kind: ResourceKind, name: &str, uid: &str) -> OwnerReference {
    let kind = match kind {
        ResourceKind::PtahSchema => "PtahSchema",
        ResourceKind::PtahMigration => "PtahMigration",
    };
    OwnerReference {
        api_version: format!("{}/{}", ptah_api::GROUP, ptah_api::VERSION),
        kind: kind.to_owned(),
        name: name.to_owned(),
        uid: uid.to_owned(),
        controller: Some(false),
        block_owner_deletion: None,
    }
}

/// The API's name of a record type.
pub fn api_type(t: RecordType) -> ResultRecordType {
    match t {
        RecordType::Credential => ResultRecordType::Credential,
        RecordType::Intent => ResultRecordType::Intent,
        RecordType::Chunk => ResultRecordType::Chunk,
        RecordType::Complete => ResultRecordType::Complete,
        RecordType::Retired => ResultRecordType::Retired,
    }
}

/// What one record holds beside its stem.
#[derive(Debug, Clone, Copy)]
pub enum Content<'a> {
    /// The one-time enrolment mark.
    Credential,
    /// The announcement.
    Intent(&'a Intent),
    /// Chunk `index` with its bytes.
    Chunk(u32, &'a [u8]),
    /// The end of a stored body.
    Complete,
    /// The consumed mark.
    Retired,
}

/// The record of `content` under `stem` in `namespace`, owned by `owner`.
pub fn record(namespace: &str, stem: &str, owner: OwnerReference, content: Content<'_>) -> PtahResultRecord {
    let (record_type, name, index, data, intent) = match content {
        Content::Credential => (
            ResultRecordType::Credential,
            RecordType::Credential.record_name(stem, 0),
            None,
            None,
            None,
        ),
        Content::Intent(i) => (
            ResultRecordType::Intent,
            RecordType::Intent.record_name(stem, 0),
            None,
            None,
            Some(ResultIntent {
                size: i64::try_from(i.size).unwrap_or(i64::MAX),
                chunks: i32::try_from(i.chunks).unwrap_or(i32::MAX),
                digest: i.digest.into(),
            }),
        ),
        Content::Chunk(n, bytes) => (
            ResultRecordType::Chunk,
            RecordType::Chunk.record_name(stem, n),
            Some(i32::try_from(n).unwrap_or(i32::MAX)),
            Some(ChunkData(ByteString(bytes.to_vec()))),
            None,
        ),
        Content::Complete => (
            api_type(RecordType::Complete),
            RecordType::Complete.record_name(stem, 0),
            None,
            None,
            None,
        ),
        Content::Retired => (
            api_type(RecordType::Retired),
            RecordType::Retired.record_name(stem, 0),
            None,
            None,
            None,
        ),
    };
    let mut out = PtahResultRecord::new(
        &name,
        PtahResultRecordSpec {
            record_type,
            stem: stem.to_owned(),
            index,
            data,
            intent,
        },
    );
    out.metadata.namespace = Some(namespace.to_owned());
    out.metadata.owner_references = Some(vec![owner]);
    out.metadata.labels = Some(BTreeMap::from([
        (
            RESULT_OPERATION_LABEL.to_owned(),
            operation_label(stem).to_owned(),
        ),
        (
            ptah_workload::MANAGED_BY_LABEL.to_owned(),
            ptah_workload::MANAGED_BY_VALUE.to_owned(),
        ),
    ]));
    out
}

/// What the records of an operation hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// No intent.
    Nothing,
    /// An intent of a body with this digest, not yet complete.
    Partial(Digest),
    /// A complete body: its bytes and digest.
    Complete(Vec<u8>, Digest),
}

/// Why stored records cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    /// The intent holds a digest that does not parse.
    #[error("the intent record holds no valid digest")]
    IntentDigest,
    /// The chunks do not make up the announced body.
    #[error(transparent)]
    Reassembly(#[from] ReassemblyError),
}

/// The intent of the records under `stem`, if any.
pub fn intent_of(records: &[PtahResultRecord], stem: &str) -> Result<Option<Intent>, StoredError> {
    let Some(i) = records
        .iter()
        .filter(|r| r.spec.stem == stem && r.spec.record_type == ResultRecordType::Intent)
        .find_map(|r| r.spec.intent.as_ref())
    else {
        return Ok(None);
    };
    Ok(Some(Intent {
        size: u64::try_from(i.size).map_err(|_| StoredError::IntentDigest)?,
        chunks: u32::try_from(i.chunks).map_err(|_| StoredError::IntentDigest)?,
        digest: i.digest.as_str().parse().map_err(|_| StoredError::IntentDigest)?,
    }))
}

/// What the records under `stem` (of one namespace) hold; a complete body is put back together
/// and checked against its intent.
pub fn stored(records: &[PtahResultRecord], stem: &str) -> Result<Found, StoredError> {
    let Some(intent) = intent_of(records, stem)? else {
        return Ok(Found::Nothing);
    };
    let mine = || records.iter().filter(|r| r.spec.stem == stem);
    if !mine().any(|r| r.spec.record_type == ResultRecordType::Complete) {
        return Ok(Found::Partial(intent.digest));
    }
    let chunks: Vec<(u32, &[u8])> = mine()
        .filter(|r| r.spec.record_type == ResultRecordType::Chunk)
        .filter_map(|r| {
            let index = u32::try_from(r.spec.index?).ok()?;
            Some((index, r.spec.data.as_ref()?.0.0.as_slice()))
        })
        .collect();
    let body = reassemble(&intent, &chunks)?;
    Ok(Found::Complete(body, intent.digest))
}

/// The contract's name of an API record type.
pub fn record_type(t: ResultRecordType) -> RecordType {
    match t {
        ResultRecordType::Credential => RecordType::Credential,
        ResultRecordType::Intent => RecordType::Intent,
        ResultRecordType::Chunk => RecordType::Chunk,
        ResultRecordType::Complete => RecordType::Complete,
        ResultRecordType::Retired => RecordType::Retired,
    }
}

#[cfg(test)]
mod tests {
    use ptah_resultdelivery::{EncodedBody, MAX_RECORD_DATA_BYTES, split};

    use super::*;

    const STEM: &str = "ptah-result-abababababababababababababababababababababababababababababababab";

    fn records_of(body: &EncodedBody, with_complete: bool) -> Vec<PtahResultRecord> {
        let owner = owner(ResourceKind::PtahSchema, "orders", "uid-1");
        let (intent, chunks) = split(body);
        let mut out = vec![record("shop", STEM, owner.clone(), Content::Intent(&intent))];
        for (i, chunk) in (0u32..).zip(chunks) {
            out.push(record("shop", STEM, owner.clone(), Content::Chunk(i, chunk)));
        }
        if with_complete {
            out.push(record("shop", STEM, owner, Content::Complete));
        }
        out
    }

    fn body(len: usize) -> EncodedBody {
        let bytes: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let digest = Digest::of(&bytes);
        EncodedBody { bytes, digest }
    }

    /// What the receiver writes, the reconcilers read back byte for byte; a body cut short is
    /// partial, and records of another operation never mix in.
    #[test]
    fn stored_records_read_back_to_the_body_their_intent_announced() {
        let b = body(2 * MAX_RECORD_DATA_BYTES + 17);
        let mut all = records_of(&b, true);
        assert_eq!(all.len(), 5);
        let mut other = records_of(&body(10), true);
        for r in &mut other {
            r.spec.stem = STEM.replace("abab", "cdcd");
        }
        all.extend(other);
        assert_eq!(
            stored(&all, STEM).expect("read"),
            Found::Complete(b.bytes.clone(), b.digest)
        );
        let partial = records_of(&b, false);
        assert_eq!(stored(&partial, STEM).expect("read"), Found::Partial(b.digest));
        assert_eq!(stored(&[], STEM).expect("read"), Found::Nothing);
        // A chunk missing from a complete body is an error, never a shorter body.
        let mut holed = records_of(&b, true);
        holed.remove(2);
        assert!(matches!(stored(&holed, STEM), Err(StoredError::Reassembly(_))));
    }

    #[test]
    fn every_record_carries_its_operation_label_and_its_resource_owner() {
        let r = record(
            "shop",
            STEM,
            owner(ResourceKind::PtahMigration, "orders", "uid-1"),
            Content::Retired,
        );
        assert_eq!(
            r.metadata.name.as_deref(),
            Some(format!("{STEM}-retired").as_str())
        );
        let labels = r.metadata.labels.clone().unwrap_or_default();
        assert_eq!(
            labels.get(RESULT_OPERATION_LABEL).map(String::as_str),
            Some(operation_label(STEM))
        );
        let owners = r.metadata.owner_references.clone().unwrap_or_default();
        assert_eq!(owners[0].kind, "PtahMigration");
        assert_eq!(owners[0].controller, Some(false));
        assert!(
            list_params(STEM)
                .label_selector
                .is_some_and(|s| s.contains(operation_label(STEM)))
        );
    }
}
