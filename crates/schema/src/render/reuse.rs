//! Names a plan hands from a dropped object to a created one. An index and a UNIQUE or PRIMARY KEY
//! constraint share one namespace (on MySQL both are keys of the table; on PostgreSQL the
//! constraint's index is a relation named like it), and drops normally come last, so a plain
//! index that becomes a UNIQUE constraint of the same name would be created while its old self
//! still holds the name. Such drops come first instead.

use std::collections::BTreeSet;

use crate::diff::{Constraint, DiffCategory, SchemaDiff};
use crate::model::{Dialect, QualifiedName};

use super::{MysqlFlavor, Out, drop_constraint, drop_index};

/// The removed indexes and constraints whose name a created one takes over.
#[derive(Default)]
pub(super) struct Reused {
    indexes: BTreeSet<(QualifiedName, String)>,
    constraints: BTreeSet<(QualifiedName, String)>,
}

fn keyed(c: &Constraint) -> bool {
    matches!(c, Constraint::PrimaryKey(_) | Constraint::Unique(_))
}

impl Reused {
    /// What `diff` drops under a name it also creates, across the index/key boundary.
    pub(super) fn of(diff: &SchemaDiff) -> Reused {
        let key = |t: &QualifiedName, n: &str| (t.clone(), n.to_owned());
        let created_keys: BTreeSet<_> = diff
            .constraints_added
            .iter()
            .map(|c| (&c.table, &c.constraint))
            .chain(diff.constraints_modified.iter().map(|c| (&c.table, &c.to)))
            .filter(|(_, c)| keyed(c))
            .map(|(t, c)| key(t, c.name()))
            .collect();
        let created_indexes: BTreeSet<_> = diff
            .indexes_added
            .iter()
            .map(|c| key(&c.table, &c.index.name))
            .chain(diff.indexes_modified.iter().map(|c| key(&c.table, &c.to.name)))
            .collect();
        Reused {
            indexes: diff
                .indexes_removed
                .iter()
                .map(|c| key(&c.table, &c.index.name))
                .filter(|k| created_keys.contains(k))
                .collect(),
            constraints: diff
                .constraints_removed
                .iter()
                .filter(|c| keyed(&c.constraint))
                .map(|c| key(&c.table, c.constraint.name()))
                .filter(|k| created_indexes.contains(k))
                .collect(),
        }
    }

    /// Whether the removed index `name` of `table` is dropped early.
    pub(super) fn index(&self, table: &QualifiedName, name: &str) -> bool {
        self.indexes.contains(&(table.clone(), name.to_owned()))
    }

    /// Whether the removed constraint `name` of `table` is dropped early.
    pub(super) fn constraint(&self, table: &QualifiedName, name: &str) -> bool {
        self.constraints.contains(&(table.clone(), name.to_owned()))
    }

    /// The early drops, before any index or constraint is created.
    pub(super) fn drops(&self, diff: &SchemaDiff, dialect: Dialect, flavor: MysqlFlavor, out: &mut Out) {
        for c in &diff.constraints_removed {
            if self.constraint(&c.table, c.constraint.name()) {
                out.push(
                    DiffCategory::ConstraintsRemoved,
                    drop_constraint(dialect, flavor, &c.table, &c.constraint),
                );
            }
        }
        for c in &diff.indexes_removed {
            if self.index(&c.table, &c.index.name) {
                out.push(
                    DiffCategory::IndexesRemoved,
                    drop_index(dialect, &c.table, &c.index, diff.online(&c.table)),
                );
            }
        }
    }
}
