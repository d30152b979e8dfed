//! A body cut into records and put back together, an exactly 8 MiB plan included, and every way
//! stored records can fail to make up their body.

mod common;

use common::plan_body;
use proptest::prelude::*;
use ptah_dataplane::MAX_PLAN_BYTES;
use ptah_fingerprint::Digest;
use ptah_resultdelivery::{
    EncodedBody, Intent, MAX_BODY_BYTES, MAX_RECORD_DATA_BYTES, ReassemblyError, RecordType, ResultBody,
    reassemble, split,
};

fn numbered<'a>(chunks: &[&'a [u8]]) -> Vec<(u32, &'a [u8])> {
    (0..).zip(chunks.iter().copied()).collect()
}

#[test]
fn an_exactly_8_mib_plan_is_chunked_and_put_back_to_the_same_body() {
    // A line of SQL repeated to exactly the plan bound, newline included.
    let line = "INSERT INTO t VALUES (1);\n";
    let mut plan = line.repeat(MAX_PLAN_BYTES / line.len());
    plan.push_str(&"-".repeat(MAX_PLAN_BYTES - plan.len() - 1));
    plan.push('\n');
    assert_eq!(plan.len(), MAX_PLAN_BYTES);
    let body = plan_body(&plan)
        .encode()
        .expect("an 8 MiB plan is a deliverable body");
    assert!(body.bytes.len() > MAX_PLAN_BYTES && body.bytes.len() <= MAX_BODY_BYTES);
    let (intent, chunks) = split(&body);
    assert_eq!(intent.size, body.bytes.len() as u64);
    assert_eq!(
        intent.chunks as usize,
        body.bytes.len().div_ceil(MAX_RECORD_DATA_BYTES)
    );
    assert_eq!(
        intent.chunks, 17,
        "8 MiB of plan and the rest of the body in 512 KiB records"
    );
    assert!(chunks.iter().all(|c| c.len() <= MAX_RECORD_DATA_BYTES));
    let mut shuffled = numbered(&chunks);
    shuffled.reverse();
    let back = reassemble(&intent, &shuffled).expect("reassembled");
    assert_eq!(back, body.bytes);
    let decoded = ResultBody::decode(&back, &intent.digest.to_string()).expect("decoded");
    assert_eq!(decoded.payload.stdout.as_deref(), Some(plan.as_str()));
}

#[test]
fn a_missing_repeated_short_or_altered_chunk_is_refused() {
    let body = EncodedBody {
        bytes: vec![7u8; 2 * MAX_RECORD_DATA_BYTES + 10],
        digest: Digest::of(&vec![7u8; 2 * MAX_RECORD_DATA_BYTES + 10]),
    };
    let (intent, chunks) = split(&body);
    let all = numbered(&chunks);
    assert_eq!(
        reassemble(&intent, &all[..2]),
        Err(ReassemblyError::ChunkOrder(2))
    );
    let repeated = [all[0], all[0], all[2]];
    assert_eq!(
        reassemble(&intent, &repeated),
        Err(ReassemblyError::ChunkOrder(0))
    );
    let beyond = [all[0], all[1], all[2], (3, all[2].1)];
    assert_eq!(reassemble(&intent, &beyond), Err(ReassemblyError::ChunkOrder(3)));
    let short = [all[0], (1, &all[1].1[..10]), all[2]];
    assert_eq!(
        reassemble(&intent, &short),
        Err(ReassemblyError::ChunkSize { index: 1, len: 10 })
    );
    let mut altered_last = all[2].1.to_vec();
    altered_last[0] = 8;
    let altered = [all[0], all[1], (2, altered_last.as_slice())];
    assert!(matches!(
        reassemble(&intent, &altered),
        Err(ReassemblyError::Digest { .. })
    ));
    let longer_last = vec![7u8; 11];
    let longer = [all[0], all[1], (2, longer_last.as_slice())];
    assert!(matches!(
        reassemble(&intent, &longer),
        Err(ReassemblyError::Size { .. })
    ));
}

#[test]
fn an_intent_no_body_can_match_is_refused() {
    let digest = Digest::of(b"x");
    let impossible = |size: u64, chunks: u32| {
        matches!(
            reassemble(&Intent { size, chunks, digest }, &[]),
            Err(ReassemblyError::ImpossibleIntent { .. })
        )
    };
    assert!(impossible(0, 0));
    assert!(impossible(10, 2));
    assert!(impossible(MAX_BODY_BYTES as u64 + 1, u32::MAX));
    assert!(impossible(MAX_RECORD_DATA_BYTES as u64 + 1, 1));
}

#[test]
fn record_names_stay_valid_kubernetes_names() {
    let stem = common::binding().record_stem();
    for (kind, chunk) in [
        (RecordType::Intent, 0),
        (RecordType::Chunk, 96),
        (RecordType::Complete, 0),
        (RecordType::Retired, 0),
    ] {
        let name = kind.record_name(&stem, chunk);
        assert!(name.len() <= 253, "{name}");
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{name}"
        );
    }
    assert!(RecordType::Chunk.record_name(&stem, 7).ends_with("-chunk-0007"));
}

#[test]
fn bodies_at_every_record_boundary_reassemble_exactly() {
    for len in [
        1,
        MAX_RECORD_DATA_BYTES - 1,
        MAX_RECORD_DATA_BYTES,
        MAX_RECORD_DATA_BYTES + 1,
        2 * MAX_RECORD_DATA_BYTES,
    ] {
        let bytes = vec![9u8; len];
        let body = EncodedBody {
            digest: Digest::of(&bytes),
            bytes,
        };
        let (intent, chunks) = split(&body);
        assert_eq!(
            intent.chunks as usize,
            len.div_ceil(MAX_RECORD_DATA_BYTES),
            "{len}"
        );
        assert_eq!(
            reassemble(&intent, &numbered(&chunks)).expect("reassembled"),
            body.bytes
        );
    }
}

proptest! {
    // The boundaries are the test above; these are random lengths and contents across two records.
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_body_split_into_records_reassembles_exactly(len in 1usize..(2 * MAX_RECORD_DATA_BYTES + 3), seed: u8) {
        let bytes: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect();
        let body = EncodedBody { digest: Digest::of(&bytes), bytes };
        let (intent, chunks) = split(&body);
        prop_assert_eq!(intent.chunks as usize, len.div_ceil(MAX_RECORD_DATA_BYTES));
        let back = reassemble(&intent, &numbered(&chunks)).expect("reassembled");
        prop_assert_eq!(back, body.bytes);
    }
}
