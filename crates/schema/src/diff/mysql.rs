//! MySQL stored routines, events and view options: matched by key, compared by value. A
//! routine or event that changes is dropped and created again (MySQL's `ALTER` changes neither a
//! body nor a parameter list), in the same phases as PostgreSQL's routines.

use serde::{Deserialize, Serialize};

use super::{IndexCommentChange, IndexRef, SchemaDiff};
use crate::model::{Event, QualifiedName, Schema, StoredRoutine, Table};

/// A MySQL routine whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRoutineChange {
    /// The actual routine.
    pub from: StoredRoutine,
    /// The desired routine.
    pub to: StoredRoutine,
}

/// A MySQL event whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventChange {
    /// The actual event.
    pub from: Event,
    /// The desired event.
    pub to: Event,
}

/// Fills the stored-routine and event parts of `d`, and keeps the desired view options for the
/// renderer.
pub(super) fn diff_mysql_programs(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    for (key, want) in &desired.stored_routines {
        match actual.stored_routines.get(key) {
            None => d.stored_routines_added.push(want.clone()),
            Some(have) if have != want => d.stored_routines_modified.push(StoredRoutineChange {
                from: have.clone(),
                to: want.clone(),
            }),
            Some(_) => {}
        }
    }
    d.stored_routines_removed = actual
        .stored_routines
        .iter()
        .filter(|(k, _)| !desired.stored_routines.contains_key(*k))
        .map(|(_, r)| r.clone())
        .collect();
    for (key, want) in &desired.events {
        match actual.events.get(key) {
            None => d.events_added.push(want.clone()),
            Some(have) if !want.matches(have) => d.events_modified.push(EventChange {
                from: have.clone(),
                to: want.clone(),
            }),
            Some(_) => {}
        }
    }
    d.events_removed = actual
        .events
        .iter()
        .filter(|(k, _)| !desired.events.contains_key(*k))
        .map(|(_, e)| e.clone())
        .collect();
    d.view_options.clone_from(&desired.view_options);
    index_comments(desired, actual, d);
}

/// MySQL index comments: the desired ones for every index the plan creates, and the kept indexes
/// whose comment changes, which are rebuilt (MySQL has no statement that sets a comment alone).
fn index_comments(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    for t in desired.tables.values().filter(|t| t.name.schema.is_empty()) {
        if !t.index_comments.is_empty() {
            d.mysql_index_comments
                .insert(t.name.name.clone(), t.index_comments.clone());
        }
    }
    let mysql = |c: &IndexCommentChange| c.table.schema.is_empty();
    for c in d.index_comments_modified.iter().filter(|c| mysql(c)) {
        let kept = desired
            .tables
            .get(&c.table)
            .and_then(|t| t.indexes.get(&c.index))
            .filter(|i| actual.tables.get(&c.table).and_then(|t| t.indexes.get(&c.index)) == Some(*i));
        if let Some(index) = kept {
            d.mysql_index_rebuilds.push(IndexRef {
                table: c.table.clone(),
                index: index.clone(),
            });
        }
    }
}

/// Whether the view called `name` has other options in `desired` than in `actual`.
pub(super) fn view_options_differ(desired: &Schema, actual: &Schema, name: &str) -> bool {
    desired.view_options.get(name) != actual.view_options.get(name)
}

/// MySQL tables (on either side) with a FULLTEXT, SPATIAL or hash index: InnoDB adds a column to
/// them or changes their indexes only under a lock, and MariaDB keeps a hash index in a hidden
/// column it changes by copying the table.
pub(super) fn offline_tables(desired: &Schema, actual: &Schema) -> std::collections::BTreeSet<QualifiedName> {
    let locked = |t: &&Table| {
        t.name.schema.is_empty()
            && t.indexes.values().any(|i| {
                i.method.as_deref().is_some_and(|m| {
                    ["fulltext", "spatial", "hash"].contains(&m.to_ascii_lowercase().as_str())
                })
            })
    };
    desired
        .tables
        .values()
        .chain(actual.tables.values())
        .filter(locked)
        .map(|t| t.name.clone())
        .collect()
}
