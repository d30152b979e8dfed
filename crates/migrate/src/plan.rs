//! Pure decisions over (directory, revision rows): what is pending, what `up` would run, and
//! whether that still matches an approved sequence.

use std::collections::BTreeMap;

use ptah_fingerprint::Fingerprint;
use serde::{Deserialize, Serialize};

use crate::{Error, Migration, Revision, TxMode, Version};

/// How pending versions below the current version are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecOrder {
    /// Refuse when a pending version is below the current one (the default).
    #[default]
    Linear,
    /// Leave such versions pending and run the rest.
    LinearSkip,
    /// Run them too.
    NonLinear,
}

/// One approved step: the version, the up file's checksum and how it runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequenceEntry {
    /// The version.
    pub version: Version,
    /// Hex sha256 of the up file.
    pub checksum: String,
    /// The transaction mode.
    pub transaction: TxMode,
}

/// The fingerprint of a sequence (over its canonical JSON).
pub fn sequence_fingerprint(entries: &[SequenceEntry]) -> Fingerprint {
    Fingerprint::of(entries).expect("a list of versions, hex strings and modes always has a JSON form")
}

/// Parses `--expect-sequence`: a JSON array of entries, or an object with `pending_sequence`.
pub fn parse_expected(text: &str) -> Result<Vec<SequenceEntry>, Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Shape {
        List(Vec<SequenceEntry>),
        Status { pending_sequence: Vec<SequenceEntry> },
    }
    match serde_json::from_str::<Shape>(text) {
        Ok(
            Shape::List(list)
            | Shape::Status {
                pending_sequence: list,
            },
        ) => Ok(list),
        Err(_) => {
            // Re-parse as a list for a precise message.
            let err = serde_json::from_str::<Vec<SequenceEntry>>(text)
                .err()
                .map_or_else(|| "unexpected shape".to_owned(), |e| e.to_string());
            Err(Error::InvalidExpectedSequence(format!(
                "expected a JSON array of {{version, checksum, transaction}}: {err}"
            )))
        }
    }
}

/// Refuses when `found` differs from `expected`, naming the first difference.
pub fn check_expected(expected: &[SequenceEntry], found: &[SequenceEntry]) -> Result<(), Error> {
    if expected == found {
        return Ok(());
    }
    let difference = match expected.iter().zip(found).position(|(e, f)| e != f) {
        Some(i) => {
            let (e, f) = (&expected[i], &found[i]);
            if e.version != f.version {
                format!(
                    "step {}: expected version {}, found version {}",
                    i + 1,
                    e.version,
                    f.version
                )
            } else if e.checksum != f.checksum {
                format!("version {}: the checksum changed", e.version)
            } else {
                format!("version {}: the transaction mode changed", e.version)
            }
        }
        None => format!("expected {} migrations, found {}", expected.len(), found.len()),
    };
    Err(Error::SequenceMismatch {
        difference,
        expected_digest: sequence_fingerprint(expected).to_string(),
        actual_digest: sequence_fingerprint(found).to_string(),
    })
}

/// What the rows and the directory say, before any execution-order rule applies.
#[derive(Debug, Clone)]
pub struct Reading<'a> {
    /// The highest applied version.
    pub current: Option<Version>,
    /// Directory migrations that are not applied, in version order (checkpoints resolved).
    pub pending: Vec<&'a Migration>,
    /// The pending versions below the current version.
    pub out_of_order: Vec<Version>,
    /// Applied rows whose file checksum changed: (row, file checksum).
    pub modified: Vec<(&'a Revision, String)>,
    /// Rows whose version the directory lacks.
    pub ahead: Vec<&'a Revision>,
    /// The first row a run left unfinished.
    pub dirty: Option<&'a Revision>,
}

/// Reads the directory against the rows.
pub fn read<'a>(migrations: &'a [Migration], rows: &'a [Revision]) -> Reading<'a> {
    let by_version: BTreeMap<Version, &Revision> = rows.iter().map(|r| (r.version, r)).collect();
    let files: BTreeMap<Version, &Migration> = migrations.iter().map(|m| (m.version, m)).collect();
    let current = rows.iter().filter(|r| r.is_applied()).map(|r| r.version).max();
    let applied = |v: Version| by_version.get(&v).is_some_and(|r| r.is_applied());
    // Versions below an applied checkpoint are covered by it.
    let floor = migrations
        .iter()
        .filter(|m| m.checkpoint && applied(m.version))
        .map(|m| m.version)
        .max();
    let newest_checkpoint = migrations
        .iter()
        .filter(|m| m.checkpoint)
        .map(|m| m.version)
        .max();
    let pending: Vec<&Migration> = migrations
        .iter()
        .filter(|m| !applied(m.version))
        .filter(|m| floor.is_none_or(|f| m.version > f))
        .filter(|m| match (rows.is_empty(), newest_checkpoint) {
            // An empty table starts at the newest checkpoint; otherwise checkpoints are ignored.
            (true, Some(c)) => m.version > c || (m.version == c && m.checkpoint),
            _ => !m.checkpoint,
        })
        .collect();
    let out_of_order = pending
        .iter()
        .map(|m| m.version)
        .filter(|v| current.is_some_and(|c| *v < c))
        .collect();
    let modified = rows
        .iter()
        .filter(|r| r.is_applied() && !r.checksum.is_empty())
        .filter_map(|r| {
            let file = files.get(&r.version)?.checksum();
            (file != r.checksum).then_some((r, file))
        })
        .collect();
    Reading {
        current,
        pending,
        out_of_order,
        modified,
        // A row repaired as absent claims nothing about the database, so it is never ahead.
        ahead: rows
            .iter()
            .filter(|r| !files.contains_key(&r.version) && !r.is_absent())
            .collect(),
        dirty: rows.iter().find(|r| r.is_dirty()),
    }
}

impl<'a> Reading<'a> {
    /// What `up` would run: refuses dirty rows, modified files and (under `linear`) out-of-order versions.
    pub fn select(&self, order: ExecOrder, limit: Option<usize>) -> Result<Vec<&'a Migration>, Error> {
        if let Some(row) = self.dirty {
            return Err(Error::Dirty {
                version: row.version,
                state: row.state.clone(),
                applied: row.applied,
                total: row.total,
            });
        }
        if let Some((row, _)) = self.modified.first() {
            return Err(Error::Modified { version: row.version });
        }
        let mut selected = self.pending.clone();
        if let (false, Some(current)) = (self.out_of_order.is_empty(), self.current) {
            match order {
                ExecOrder::Linear => {
                    return Err(Error::OutOfOrder {
                        versions: self.out_of_order.clone(),
                        current,
                    });
                }
                ExecOrder::LinearSkip => {
                    tracing::warn!(versions = ?self.out_of_order, "leaving out-of-order migrations pending");
                    selected.retain(|m| !self.out_of_order.contains(&m.version));
                }
                ExecOrder::NonLinear => {}
            }
        }
        if let Some(n) = limit {
            selected.truncate(n);
        }
        Ok(selected)
    }
}

/// The history fingerprint: the rows' identity-bearing columns, in version order.
pub fn history_fingerprint(rows: &[Revision]) -> Fingerprint {
    #[derive(Serialize)]
    struct Row<'a> {
        version: Version,
        description: &'a str,
        state: &'a str,
        applied: i64,
        total: i64,
        checksum: &'a str,
    }
    let rows: Vec<Row> = rows
        .iter()
        .map(|r| Row {
            version: r.version,
            description: &r.description,
            state: &r.state,
            applied: r.applied,
            total: r.total,
            checksum: &r.checksum,
        })
        .collect();
    Fingerprint::of(&rows).expect("rows of integers and strings always have a JSON form")
}
