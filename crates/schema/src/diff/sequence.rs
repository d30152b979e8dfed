//! Sequences: matched by name, compared option by option.

use serde::{Deserialize, Serialize};

use super::SchemaDiff;
use crate::model::{Schema, Sequence, SequenceOwner};

/// A sequence whose options, owner or comment change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceChange {
    /// The actual sequence.
    pub from: Sequence,
    /// The desired sequence.
    pub to: Sequence,
}

/// Fills the sequence parts of `d`. A sequence owned by a table or column the plan drops goes
/// with it, so it is not dropped again.
pub(super) fn diff_sequences(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    d.sequence_names = desired.sequences.keys().cloned().collect();
    for (name, want) in &desired.sequences {
        match actual.sequences.get(name) {
            None => d.sequences_added.push(want.clone()),
            Some(have) if have != want => d.sequences_modified.push(SequenceChange {
                from: have.clone(),
                to: want.clone(),
            }),
            Some(_) => {}
        }
    }
    // Whether the plan drops the column (or its whole table), which takes an owned sequence along.
    let dropped = |o: &SequenceOwner| {
        actual
            .tables
            .get(&o.table)
            .is_some_and(|t| t.column(&o.column).is_some())
            && desired
                .tables
                .get(&o.table)
                .is_none_or(|t| t.column(&o.column).is_none())
    };
    d.sequences_removed = actual
        .sequences
        .values()
        .filter(|s| !desired.sequences.contains_key(&s.name))
        .filter(|s| s.owned_by.as_ref().is_none_or(|o| !dropped(o)))
        .cloned()
        .collect();
}
