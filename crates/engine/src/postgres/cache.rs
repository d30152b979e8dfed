//! What the server made of hand-written texts, remembered for the life of the process.
//!
//! A declared CHECK body, default, index or trigger whose text is not the catalog's is probed on
//! every plan (the declaration does not change, and neither does the catalog's text), and a
//! controller plans the same schemas again and again. Whether a desired text is stored as a given
//! live text depends on little but the two texts, so the verdict is kept by both; a run that
//! changes either text asks the server again.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Verdicts kept at most; the map is emptied when it grows past this, which bounds memory and
/// costs one probe per text afterwards.
const CAPACITY: usize = 8192;

/// The kind of object a text belongs to, so texts of different kinds never share a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A table's column default (the model's value, debug-printed).
    Default,
    /// A table's CHECK body.
    Check,
    /// A whole index (debug-printed).
    Index,
    /// A domain's CHECK body, keyed with the domain's base type.
    DomainCheck,
    /// A trigger statement.
    Trigger,
}

/// A verdict's key: the kind, the declared text (with what else the probe depended on) and the
/// live text.
pub(crate) type Key = (Kind, String, String);

fn map() -> &'static Mutex<HashMap<Key, bool>> {
    static VERDICTS: OnceLock<Mutex<HashMap<Key, bool>>> = OnceLock::new();
    VERDICTS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The process-wide verdicts: whether a desired text is stored as a live text.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Verdicts;

impl Verdicts {
    /// The verdict for `key`, if the server was asked before.
    pub(crate) fn get(self, key: &Key) -> Option<bool> {
        map().lock().ok()?.get(key).copied()
    }

    /// Remembers what the server said.
    pub(crate) fn put(self, key: Key, same: bool) {
        if let Ok(mut verdicts) = map().lock() {
            if verdicts.len() >= CAPACITY {
                verdicts.clear();
            }
            verdicts.insert(key, same);
        }
    }
}
