//! Partitioning of tables on both sides: a table that becomes a partition, stops being one or
//! moves to another bound or parent, and a partition key that differs (which the planner refuses:
//! PostgreSQL cannot change a key in place).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{DiffCategory, SchemaDiff};
use crate::model::{
    Index, IndexTarget, PartitionOf, PrimaryKey, QualifiedName, Schema, Table, UniqueConstraint,
};
use crate::names::{pg_column_addition, pg_object_name};

/// A table whose place under a partitioned parent changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionChange {
    /// The table.
    pub table: QualifiedName,
    /// Its parent and bound now (`None`: a plain table, attached).
    pub from: Option<PartitionOf>,
    /// Its parent and bound as declared (`None`: a plain table, detached).
    pub to: Option<PartitionOf>,
}

/// A table whose partition key differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionKeyChange {
    /// The table.
    pub table: QualifiedName,
    /// The key now (`None`: not partitioned).
    pub from: Option<String>,
    /// The declared key (`None`: not partitioned).
    pub to: Option<String>,
}

/// Reports every table a partitioning change touches: the partition and, since attaching or
/// detaching locks the parent and changes what its queries see, its parents.
pub(super) fn touched_tables(d: &SchemaDiff, add: &mut impl FnMut(&QualifiedName, DiffCategory)) {
    for (changes, category) in [
        (&d.partitions_attached, DiffCategory::PartitionsAttached),
        (&d.partitions_detached, DiffCategory::PartitionsDetached),
        (&d.partitions_modified, DiffCategory::PartitionsModified),
    ] {
        for c in changes {
            add(&c.table, category);
            for parent in c.from.iter().chain(&c.to) {
                add(&parent.parent, category);
            }
        }
    }
    for c in &d.partition_keys_modified {
        add(&c.table, DiffCategory::PartitionKeysModified);
    }
}

/// The new partitions whose parent keeps a default partition: creating them scans it (under
/// lock), and the server refuses when it holds rows of the new bound.
pub(super) fn over_default(desired: &Schema, actual: &Schema, added: &[Table]) -> Vec<QualifiedName> {
    let kept_default = |parent: &QualifiedName| {
        actual.tables.values().any(|t| {
            t.partition_of
                .as_ref()
                .is_some_and(|p| p.parent == *parent && p.bound == "DEFAULT")
                && desired.tables.get(&t.name).map(|d| &d.partition_of) == Some(&t.partition_of)
        })
    };
    added
        .iter()
        .filter(|t| {
            t.partition_of
                .as_ref()
                .is_some_and(|p| p.bound != "DEFAULT" && kept_default(&p.parent))
        })
        .map(|t| t.name.clone())
        .collect()
}

/// Adds the partitioning differences of one table on both sides to `d`.
pub(super) fn diff_partitioning(want: &Table, have: &Table, d: &mut SchemaDiff) {
    if want.partition_by != have.partition_by {
        d.partition_keys_modified.push(PartitionKeyChange {
            table: want.name.clone(),
            from: have.partition_by.clone(),
            to: want.partition_by.clone(),
        });
    }
    if want.partition_of == have.partition_of {
        return;
    }
    let change = PartitionChange {
        table: want.name.clone(),
        from: have.partition_of.clone(),
        to: want.partition_of.clone(),
    };
    match (&change.from, &change.to) {
        (None, _) => d.partitions_attached.push(change),
        (_, None) => d.partitions_detached.push(change),
        _ => d.partitions_modified.push(change),
    }
}

/// The table as the plan's other statements find it once its partitioning has changed, so they
/// neither repeat nor undo what the server does: a detached partition keeps copies of its
/// parent's primary key, uniques and indexes (named as the server names them) and its checks and
/// foreign keys (named as the parent's); a table attached as a partition has its key, uniques,
/// indexes, checks and foreign keys that match the parent's taken over by the parent's.
pub(super) fn as_partitioned<'a>(
    want: &Table,
    have: &'a Table,
    desired: &Schema,
    actual: &Schema,
) -> Cow<'a, Table> {
    if want.partition_of == have.partition_of {
        return Cow::Borrowed(have);
    }
    let mut t = have.clone();
    if let Some(parent) = have
        .partition_of
        .as_ref()
        .and_then(|p| actual.tables.get(&p.parent))
    {
        keep_copies(&mut t, parent);
    }
    if let Some(parent) = want
        .partition_of
        .as_ref()
        .and_then(|p| desired.tables.get(&p.parent))
    {
        give_up_matches(&mut t, parent);
    }
    Cow::Owned(t)
}

/// A detached partition's own copies of what it inherited from `parent`.
fn keep_copies(t: &mut Table, parent: &Table) {
    let table = t.name.name.clone();
    if let (None, Some(pk)) = (&t.primary_key, &parent.primary_key) {
        t.primary_key = Some(PrimaryKey {
            name: pg_object_name(&table, None, "pkey"),
            columns: pk.columns.clone(),
        });
    }
    for u in parent.uniques.values() {
        let name = pg_object_name(&table, Some(&pg_column_addition(&u.columns)), "key");
        t.uniques.entry(name.clone()).or_insert(UniqueConstraint {
            name,
            columns: u.columns.clone(),
        });
    }
    for i in parent.indexes.values() {
        let labels: Vec<String> = i.parts.iter().map(|p| index_label(&p.target)).collect();
        let name = pg_object_name(&table, Some(&pg_column_addition(&labels)), "idx");
        t.indexes
            .entry(name.clone())
            .or_insert(Index { name, ..i.clone() });
    }
    for c in parent.checks.values() {
        t.checks.entry(c.name.clone()).or_insert_with(|| c.clone());
    }
    for fk in parent.foreign_keys.values() {
        t.foreign_keys
            .entry(fk.name.clone())
            .or_insert_with(|| fk.clone());
    }
}

/// The label PostgreSQL gives an index part in a generated name: the column, a function's name,
/// or `expr`.
fn index_label(target: &IndexTarget) -> String {
    match target {
        IndexTarget::Column(c) => c.clone(),
        IndexTarget::Expression(e) => {
            let name: String = e
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && e[name.len()..].starts_with('(') {
                name
            } else {
                "expr".to_owned()
            }
        }
    }
}

/// Takes off `t` what attaching it under `parent` makes the parent's: an index, key or foreign
/// key the same as one of the parent's is attached to it, a check of the same name merged.
fn give_up_matches(t: &mut Table, parent: &Table) {
    if t.primary_key.as_ref().is_some_and(|pk| {
        parent
            .primary_key
            .as_ref()
            .is_some_and(|p| p.columns == pk.columns)
    }) {
        t.primary_key = None;
    }
    t.uniques
        .retain(|_, u| !parent.uniques.values().any(|p| p.columns == u.columns));
    t.indexes.retain(|_, i| {
        !parent.indexes.values().any(|p| {
            (&p.parts, p.unique, &p.predicate, &p.method) == (&i.parts, i.unique, &i.predicate, &i.method)
        })
    });
    t.checks.retain(|n, c| parent.checks.get(n) != Some(c));
    t.foreign_keys.retain(|_, fk| {
        !parent.foreign_keys.values().any(|p| {
            (
                &p.columns,
                &p.referenced_table,
                &p.referenced_columns,
                p.on_delete,
                p.on_update,
            ) == (
                &fk.columns,
                &fk.referenced_table,
                &fk.referenced_columns,
                fk.on_delete,
                fk.on_update,
            )
        })
    });
}
