//! Foreign keys that must be rebuilt because the key they reference is dropped.
//!
//! PostgreSQL ties a foreign key to the unique index behind the referenced key, so it refuses to
//! drop a PRIMARY KEY or UNIQUE constraint (even to add it again under another name or over other
//! columns) while a foreign key uses it. Each live foreign key over the columns of such a key,
//! that the plan does not drop or change already, is listed as modified into itself: the renderer
//! drops modified foreign keys before other constraints change and adds them after.

use std::collections::BTreeSet;

use super::{Constraint, ConstraintChange, SchemaDiff};
use crate::model::{QualifiedName, Schema};

/// Adds to `d` the live foreign keys that reference a primary or unique key `d` drops.
pub(super) fn rebuild_dependent_foreign_keys(actual: &Schema, d: &mut SchemaDiff) {
    let dropped_keys: Vec<(QualifiedName, BTreeSet<String>)> = d
        .constraints_modified
        .iter()
        .map(|c| (&c.table, &c.from))
        .chain(d.constraints_removed.iter().map(|c| (&c.table, &c.constraint)))
        .filter_map(|(table, constraint)| {
            let columns = match constraint {
                Constraint::PrimaryKey(k) => &k.columns,
                Constraint::Unique(k) => &k.columns,
                _ => return None,
            };
            Some((table.clone(), columns.iter().cloned().collect()))
        })
        .collect();
    if dropped_keys.is_empty() {
        return;
    }
    let removed_tables: BTreeSet<&QualifiedName> = d.tables_removed.iter().map(|t| &t.name).collect();
    let handled: BTreeSet<(QualifiedName, String)> = d
        .constraints_modified
        .iter()
        .map(|c| (c.table.clone(), c.from.name().to_owned()))
        .chain(
            d.constraints_removed
                .iter()
                .map(|c| (c.table.clone(), c.constraint.name().to_owned())),
        )
        .collect();
    let mut rebuilt = Vec::new();
    for table in actual.tables.values() {
        if removed_tables.contains(&table.name) {
            continue;
        }
        for fk in table.foreign_keys.values() {
            let columns: BTreeSet<String> = fk.referenced_columns.iter().cloned().collect();
            let depends = dropped_keys
                .iter()
                .any(|(t, k)| *t == fk.referenced_table && *k == columns);
            if depends && !handled.contains(&(table.name.clone(), fk.name.clone())) {
                rebuilt.push(ConstraintChange {
                    table: table.name.clone(),
                    from: Constraint::ForeignKey(fk.clone()),
                    to: Constraint::ForeignKey(fk.clone()),
                });
            }
        }
    }
    d.constraints_modified.extend(rebuilt);
}
