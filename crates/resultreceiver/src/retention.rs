//! Which records to delete, decided from their names' stems, types and ages alone.
//!
//! A result is kept about an hour after the manager retired it (consumed and settled), so a
//! person can still look at it; a delivery cut short (an `intent` without `complete`) is
//! abandoned once no certificate that could finish it is valid any more; a complete result the
//! manager never retired (its claim was replaced) goes after a day.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use ptah_resultdelivery::RecordType;

use crate::issue::MAX_CLIENT_LIFETIME_SECONDS;

/// How long a retired result is kept.
pub const RETIRED_KEPT: SignedDuration = SignedDuration::from_hours(1);
/// How long a cut-short delivery waits for its retry: the longest certificate life plus an hour.
pub const PARTIAL_KEPT: SignedDuration = SignedDuration::from_secs(MAX_CLIENT_LIFETIME_SECONDS + 3600);
/// How long a complete result nobody retired is kept.
pub const UNRETIRED_KEPT: SignedDuration = SignedDuration::from_hours(24);

/// One stored record, as a list of the records' metadata shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMeta {
    /// Its object name.
    pub name: String,
    /// The operation's stem ([`ptah_resultdelivery::ResultBinding::record_stem`]), from its label.
    pub stem: String,
    /// Its type.
    pub record_type: RecordType,
    /// `metadata.creationTimestamp`.
    pub created: Timestamp,
}

/// The names of the records to delete at `now`, every record of an expired operation at once.
pub fn expired(records: &[RecordMeta], now: Timestamp) -> Vec<String> {
    let mut by_stem: BTreeMap<&str, Vec<&RecordMeta>> = BTreeMap::new();
    for record in records {
        by_stem.entry(&record.stem).or_default().push(record);
    }
    let mut out = Vec::new();
    for group in by_stem.values() {
        let first = |t: RecordType| {
            group
                .iter()
                .filter(|r| r.record_type == t)
                .map(|r| r.created)
                .min()
        };
        let older =
            |at: Option<Timestamp>, kept: SignedDuration| at.is_some_and(|at| now.duration_since(at) >= kept);
        let gone = match (first(RecordType::Retired), first(RecordType::Complete)) {
            (Some(retired), _) => older(Some(retired), RETIRED_KEPT),
            (None, Some(complete)) => older(Some(complete), UNRETIRED_KEPT),
            // No `complete`: a delivery cut short, or records without their intent.
            (None, None) => older(group.iter().map(|r| r.created).min(), PARTIAL_KEPT),
        };
        if gone {
            out.extend(group.iter().map(|r| r.name.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + minutes * 60).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn record(stem: &str, record_type: RecordType, minute: i64) -> RecordMeta {
        RecordMeta {
            name: format!("{stem}-{}", record_type.as_str()),
            stem: stem.to_owned(),
            record_type,
            created: at(minute),
        }
    }

    #[test]
    fn a_retired_result_goes_an_hour_after_it_was_retired_and_whole() {
        let records = [
            record("a", RecordType::Intent, 0),
            record("a", RecordType::Chunk, 0),
            record("a", RecordType::Complete, 0),
            record("a", RecordType::Retired, 10),
        ];
        assert!(expired(&records, at(69)).is_empty());
        assert_eq!(
            expired(&records, at(70)).len(),
            4,
            "every record of the operation at once"
        );
    }

    #[test]
    fn a_cut_short_delivery_waits_for_every_certificate_that_could_finish_it() {
        let records = [
            record("b", RecordType::Intent, 0),
            record("b", RecordType::Chunk, 1),
        ];
        assert!(expired(&records, at(179)).is_empty());
        assert_eq!(expired(&records, at(180)).len(), 2);
    }

    #[test]
    fn a_complete_result_nobody_retired_goes_after_a_day_and_others_are_untouched() {
        let records = [
            record("c", RecordType::Intent, 0),
            record("c", RecordType::Complete, 0),
            record("d", RecordType::Intent, 1400),
        ];
        assert!(expired(&records, at(24 * 60 - 1)).is_empty());
        assert_eq!(
            expired(&records, at(24 * 60)),
            vec!["c-intent".to_owned(), "c-complete".to_owned()]
        );
    }
}
