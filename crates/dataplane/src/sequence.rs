//! The migration sequence: the steps a History reading reports (exactly what a default `ptah
//! migrations up` would run), the JSON text a migration Apply hands `ptah migrations up
//! --expect-sequence`, and its digest.
//!
//! The digest is the [`Fingerprint`] of the sequence's canonical JSON `[{version, checksum,
//! transaction}]` — the very value `ptah` reports as `sequence_fingerprint` after an `up` and as
//! `pending_sequence_fingerprint` in `status` — so the manager can compare the fingerprint of the
//! run with the approved one without reading the database.

use ptah_fingerprint::Fingerprint;
use serde::{Deserialize, Serialize};

/// The most steps a sequence may have: a `PtahMigrationPlan` holds at most 256 migrations.
pub const MAX_SEQUENCE_STEPS: usize = 256;
/// The longest checksum, in bytes (the executor's is 64 lowercase hex digits).
pub const MAX_CHECKSUM_BYTES: usize = 128;
/// The longest description, in characters (the plan CRD's bound); the runner cuts longer ones.
pub const MAX_DESCRIPTION_CHARS: usize = 128;
/// The longest transaction word, in bytes.
const MAX_TRANSACTION_BYTES: usize = 64;

/// One step of a migration sequence, as the executor selected it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SequenceStep {
    /// The migration's version.
    pub version: i64,
    /// The executor's checksum of the up file (lowercase hex).
    pub checksum: String,
    /// How the executor runs the file, in its own word (`file`, `none`).
    pub transaction: String,
    /// The migration's description, from the executor's pending list (not part of the digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The form `ptah migrations up --expect-sequence` parses: no description, snake_case keys (all
/// single words), unknown fields refused on the way in.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    version: i64,
    checksum: String,
    transaction: String,
}

/// A sequence that cannot be approved or handed to the executor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SequenceError {
    /// More steps than a plan holds.
    #[error("a migration sequence has at most {MAX_SEQUENCE_STEPS} steps, this one has {0}")]
    TooLong(usize),
    /// A step breaks a rule.
    #[error("step {index}: {reason}")]
    InvalidStep {
        /// The step's position (from 0).
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// The text is not a JSON array of `{version, checksum, transaction}`.
    #[error("not a JSON array of {{version, checksum, transaction}}: {0}")]
    NotASequence(String),
    /// The sequence has no canonical JSON form (cannot happen for valid steps).
    #[error("the sequence has no canonical JSON form: {0}")]
    Canonical(String),
}

impl SequenceStep {
    /// Checks the step's own fields: a lowercase hex checksum of 1–128 bytes, a lowercase
    /// transaction word, and a description of at most 128 characters without control characters.
    pub fn check(&self) -> Result<(), &'static str> {
        let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        if self.checksum.is_empty()
            || self.checksum.len() > MAX_CHECKSUM_BYTES
            || !self.checksum.bytes().all(hex)
        {
            return Err("the checksum is not 1-128 lowercase hex digits");
        }
        let word = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_';
        if self.transaction.is_empty()
            || self.transaction.len() > MAX_TRANSACTION_BYTES
            || !self.transaction.bytes().all(word)
        {
            return Err("the transaction mode is not a lowercase word");
        }
        if let Some(d) = &self.description
            && (d.chars().count() > MAX_DESCRIPTION_CHARS || d.chars().any(char::is_control))
        {
            return Err("the description is longer than 128 characters or has a control character");
        }
        Ok(())
    }
}

/// Checks a whole sequence: at most [`MAX_SEQUENCE_STEPS`] valid steps in strictly increasing
/// version order (the executor selects in version order and never twice).
pub fn check_sequence(steps: &[SequenceStep]) -> Result<(), SequenceError> {
    if steps.len() > MAX_SEQUENCE_STEPS {
        return Err(SequenceError::TooLong(steps.len()));
    }
    for (index, step) in steps.iter().enumerate() {
        step.check()
            .map_err(|reason| SequenceError::InvalidStep { index, reason })?;
        if index > 0 && steps[index - 1].version >= step.version {
            return Err(SequenceError::InvalidStep {
                index,
                reason: "versions are not strictly increasing",
            });
        }
    }
    Ok(())
}

fn entries(steps: &[SequenceStep]) -> Vec<Entry> {
    steps
        .iter()
        .map(|s| Entry {
            version: s.version,
            checksum: s.checksum.clone(),
            transaction: s.transaction.clone(),
        })
        .collect()
}

/// The approved sequence as `ptah migrations up --expect-sequence` parses it — the canonical JSON
/// array `[{"checksum","transaction","version"}]`, descriptions left out — and its digest, which
/// equals the `sequence_fingerprint` the executor reports for a run of exactly these steps.
pub fn expected_sequence(steps: &[SequenceStep]) -> Result<(String, Fingerprint), SequenceError> {
    check_sequence(steps)?;
    let entries = entries(steps);
    let bytes =
        ptah_fingerprint::canonical_json(&entries).map_err(|e| SequenceError::Canonical(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| SequenceError::Canonical(e.to_string()))?;
    let digest = Fingerprint::of(&entries).map_err(|e| SequenceError::Canonical(e.to_string()))?;
    Ok((text, digest))
}

/// Reads an expected sequence: only the array form (no `@file`, no status document), every
/// entry exactly `{version, checksum, transaction}`, and the rules of [`check_sequence`].
pub fn parse_expected_sequence(text: &str) -> Result<Vec<SequenceStep>, SequenceError> {
    let entries: Vec<Entry> =
        serde_json::from_str(text).map_err(|e| SequenceError::NotASequence(e.to_string()))?;
    let steps: Vec<SequenceStep> = entries
        .into_iter()
        .map(|e| SequenceStep {
            version: e.version,
            checksum: e.checksum,
            transaction: e.transaction,
            description: None,
        })
        .collect();
    check_sequence(&steps)?;
    Ok(steps)
}

/// The digest of an expected sequence's text, independent of its spelling (key order,
/// whitespace): what the runner compares with `PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST`.
pub fn sequence_digest(text: &str) -> Result<Fingerprint, SequenceError> {
    expected_sequence(&parse_expected_sequence(text)?).map(|(_, digest)| digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(version: i64, checksum: &str, transaction: &str) -> SequenceStep {
        SequenceStep {
            version,
            checksum: checksum.to_owned(),
            transaction: transaction.to_owned(),
            description: Some(format!("step {version}")),
        }
    }

    #[test]
    fn the_text_is_canonical_and_carries_no_description() {
        let (text, digest) =
            expected_sequence(&[step(2, "ab", "file"), step(10, "cd", "none")]).expect("valid");
        assert_eq!(
            text,
            r#"[{"checksum":"ab","transaction":"file","version":2},{"checksum":"cd","transaction":"none","version":10}]"#
        );
        assert_eq!(digest.sha256(), ptah_fingerprint::Sha256::of(text.as_bytes()));
        let respelled = "[ {\"version\": 2, \"transaction\": \"file\", \"checksum\": \"ab\"},\n\
                         {\"transaction\":\"none\",\"checksum\":\"cd\",\"version\":10} ]";
        assert_eq!(sequence_digest(respelled), Ok(digest));
        assert_ne!(
            sequence_digest(r#"[{"version":2,"checksum":"ab","transaction":"none"}]"#),
            Ok(digest)
        );
        let (empty, empty_digest) = expected_sequence(&[]).expect("empty");
        assert_eq!(empty, "[]");
        assert_eq!(sequence_digest("[]"), Ok(empty_digest));
    }

    #[test]
    fn other_shapes_and_broken_steps_are_refused() {
        for bad in [
            "@/etc/passwd",
            r#"{"pending_sequence":[]}"#,
            r#"[{"version":1,"checksum":"ab","transaction":"file","description":"x"}]"#,
            r#"[{"version":1,"checksum":"ab"}]"#,
            r#"[{"version":"1","checksum":"ab","transaction":"file"}]"#,
            r#"[{"version":1,"version":1,"checksum":"ab","transaction":"file"}]"#,
        ] {
            assert!(
                matches!(parse_expected_sequence(bad), Err(SequenceError::NotASequence(_))),
                "{bad}"
            );
        }
        const CHECKSUM: &str = "the checksum is not 1-128 lowercase hex digits";
        const TRANSACTION: &str = "the transaction mode is not a lowercase word";
        const DESCRIPTION: &str = "the description is longer than 128 characters or has a control character";
        const ORDER: &str = "versions are not strictly increasing";
        let described = |description: &str| SequenceStep {
            description: Some(description.to_owned()),
            ..step(1, "ab", "file")
        };
        for (steps, index, reason) in [
            (vec![step(1, "AB", "file")], 0, CHECKSUM),
            (vec![step(1, "", "file")], 0, CHECKSUM),
            (vec![step(1, &"a".repeat(129), "file")], 0, CHECKSUM),
            (vec![step(1, "ab", "File")], 0, TRANSACTION),
            (vec![step(1, "ab", "file"), step(1, "cd", "file")], 1, ORDER),
            (vec![step(3, "ab", "file"), step(2, "cd", "file")], 1, ORDER),
            (vec![described(&"d".repeat(129))], 0, DESCRIPTION),
            (vec![described("a\nb")], 0, DESCRIPTION),
        ] {
            assert_eq!(
                expected_sequence(&steps),
                Err(SequenceError::InvalidStep { index, reason }),
                "{steps:?}"
            );
        }
        let many: Vec<SequenceStep> = (1..=257).map(|v| step(v, "ab", "file")).collect();
        assert_eq!(expected_sequence(&many), Err(SequenceError::TooLong(257)));
        assert!(expected_sequence(&many[..256]).is_ok());
    }
}
