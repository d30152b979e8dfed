//! The approved sequence is the executor's own: `expected_sequence` digests to what
//! `ptah_migrate::sequence_fingerprint` computes (the `sequence_fingerprint` of `up` and the
//! `pending_sequence_fingerprint` of `status`), and its text is what `--expect-sequence` parses.

use proptest::prelude::*;
use ptah_dataplane::{SequenceStep, expected_sequence, sequence_digest};
use ptah_migrate::{SequenceEntry, TxMode, Version, parse_expected, sequence_fingerprint};

fn word(mode: TxMode) -> &'static str {
    match mode {
        TxMode::File => "file",
        TxMode::None => "none",
    }
}

fn pair(version: i64, checksum: String, mode: TxMode) -> (SequenceStep, SequenceEntry) {
    (
        SequenceStep {
            version,
            checksum: checksum.clone(),
            transaction: word(mode).to_owned(),
            description: Some("create widgets".to_owned()),
        },
        SequenceEntry {
            version: Version(version),
            checksum,
            transaction: mode,
        },
    )
}

#[test]
fn the_digest_is_the_executors_sequence_fingerprint() {
    let (steps, entries): (Vec<_>, Vec<_>) = [
        pair(
            1_785_255_952,
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".to_owned(),
            TxMode::File,
        ),
        pair(
            1_785_255_999,
            "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752".to_owned(),
            TxMode::None,
        ),
    ]
    .into_iter()
    .unzip();
    let (text, digest) = expected_sequence(&steps).expect("valid");
    assert_eq!(digest, sequence_fingerprint(&entries));
    assert_eq!(parse_expected(&text).expect("ptah parses it"), entries);
    // What the executor prints for the same entries has the same digest.
    let executor_text = serde_json::to_string_pretty(&entries).expect("json");
    assert_eq!(sequence_digest(&executor_text), Ok(digest));
    assert_eq!(
        expected_sequence(&[]).expect("empty").1,
        sequence_fingerprint(&[])
    );
    // One changed field changes the digest, as it changes the executor's.
    let mut other = steps.clone();
    other[1].transaction = "file".to_owned();
    assert_ne!(expected_sequence(&other).expect("valid").1, digest);
}

proptest! {
    #[test]
    fn any_valid_sequence_digests_like_the_executor(
        raw in prop::collection::btree_map(0i64..i64::MAX, ("[0-9a-f]{64}", any::<bool>()), 0..20),
    ) {
        let (steps, entries): (Vec<_>, Vec<_>) = raw
            .into_iter()
            .map(|(v, (sum, file))| pair(v, sum, if file { TxMode::File } else { TxMode::None }))
            .unzip();
        let (text, digest) = expected_sequence(&steps).expect("valid");
        prop_assert_eq!(digest, sequence_fingerprint(&entries));
        prop_assert_eq!(parse_expected(&text).expect("ptah parses it"), entries);
    }
}
