//! Declared renames: which hints apply to the live schema, and the live schema as it is once they
//! are applied, which the rest of the differ compares with the desired one.
//!
//! A hint applies when the live schema has the old object and not the new one. Once it has been
//! applied the hint is stale and ignored with a notice, as it is when both names exist. A column
//! is renamed only into the type the document declares for it; otherwise the plan is refused.
//!
//! A renamed table keeps its indexes and constraints under their old names (the server renames
//! neither), while the document names them after the new table. So on a table that is renamed or
//! has a renamed column, an index or constraint the document declares under another name with the
//! same definition is renamed too, never dropped and built again.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{IndexTarget, QualifiedName, Schema, Table};

/// A table a declared hint renames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRenamed {
    /// The live name.
    pub from: QualifiedName,
    /// The declared name (same schema).
    pub to: QualifiedName,
}

/// A column a declared hint renames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnRenamed {
    /// The table, by its declared name.
    pub table: QualifiedName,
    /// The live name.
    pub from: String,
    /// The declared name.
    pub to: String,
}

/// What kind of object an [`ObjectRenamed`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenamedKind {
    /// An index.
    Index,
    /// A PRIMARY KEY, UNIQUE, CHECK or FOREIGN KEY constraint.
    Constraint,
}

/// An index or constraint of a renamed table that the document declares under another name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRenamed {
    /// The table, by its declared name.
    pub table: QualifiedName,
    /// Index or constraint.
    pub kind: RenamedKind,
    /// The live name.
    pub from: String,
    /// The declared name.
    pub to: String,
}

/// A declared hint the plan does not act on, and why (a notice, not a change).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenameIgnored {
    /// `table app.accounts` or `column email of app.accounts`.
    pub object: String,
    /// Why: already renamed, or both names exist.
    pub reason: String,
}

/// A column hint whose old column has another type than the declared one: no plan is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenameConflict {
    /// The table, by its declared name.
    pub table: QualifiedName,
    /// The declared column.
    pub column: String,
    /// The old column.
    pub from: String,
}

/// The renames that apply, and the live schema with them applied.
pub(super) struct Resolved<'a> {
    pub actual: Cow<'a, Schema>,
    pub tables: Vec<TableRenamed>,
    pub columns: Vec<ColumnRenamed>,
    pub ignored: Vec<RenameIgnored>,
    pub conflicts: Vec<RenameConflict>,
}

/// Applies `desired`'s rename hints that fit `actual`.
pub(super) fn resolve<'a>(desired: &Schema, actual: &'a Schema) -> Resolved<'a> {
    let mut r = Resolved {
        actual: Cow::Borrowed(actual),
        tables: Vec::new(),
        columns: Vec::new(),
        ignored: Vec::new(),
        conflicts: Vec::new(),
    };
    for hint in &desired.renames.tables {
        let from = QualifiedName::new(hint.table.schema.clone(), hint.from.clone());
        let object = || format!("table {}", hint.table);
        match (
            r.actual.tables.contains_key(&from),
            r.actual.tables.contains_key(&hint.table),
        ) {
            (true, false) => {
                rename_table(r.actual.to_mut(), &from, &hint.table);
                r.tables.push(TableRenamed {
                    from,
                    to: hint.table.clone(),
                });
            }
            (true, true) => r.ignored.push(RenameIgnored {
                object: object(),
                reason: format!("both {from} and {} exist", hint.table),
            }),
            (false, true) => r.ignored.push(RenameIgnored {
                object: object(),
                reason: format!("already renamed from {}", hint.from),
            }),
            (false, false) => {}
        }
    }
    for hint in &desired.renames.columns {
        let Some(have) = r.actual.tables.get(&hint.table) else {
            continue;
        };
        let object = || format!("column {} of {}", hint.column, hint.table);
        let declared = desired
            .tables
            .get(&hint.table)
            .and_then(|t| t.column(&hint.column));
        match (have.column(&hint.from), have.column(&hint.column), declared) {
            (Some(old), None, Some(new)) if old.data_type != new.data_type => {
                r.conflicts.push(RenameConflict {
                    table: hint.table.clone(),
                    column: hint.column.clone(),
                    from: hint.from.clone(),
                });
            }
            (Some(_), None, _) => {
                rename_column(r.actual.to_mut(), &hint.table, &hint.from, &hint.column);
                r.columns.push(ColumnRenamed {
                    table: hint.table.clone(),
                    from: hint.from.clone(),
                    to: hint.column.clone(),
                });
            }
            (Some(_), Some(_), _) => r.ignored.push(RenameIgnored {
                object: object(),
                reason: format!("both {} and {} exist", hint.from, hint.column),
            }),
            (None, Some(_), _) => r.ignored.push(RenameIgnored {
                object: object(),
                reason: format!("already renamed from {}", hint.from),
            }),
            (None, None, _) => {}
        }
    }
    r
}

/// `from` becomes `to` in `schema`, and every reference to it follows.
fn rename_table(schema: &mut Schema, from: &QualifiedName, to: &QualifiedName) {
    if let Some(mut table) = schema.tables.remove(from) {
        table.name = to.clone();
        schema.tables.insert(to.clone(), table);
    }
    for table in schema.tables.values_mut() {
        for fk in table.foreign_keys.values_mut() {
            if &fk.referenced_table == from {
                fk.referenced_table = to.clone();
            }
        }
        if let Some(p) = table.partition_of.as_mut().filter(|p| &p.parent == from) {
            p.parent = to.clone();
        }
    }
    let triggers = std::mem::take(&mut schema.triggers);
    schema.triggers = triggers
        .into_values()
        .map(|mut t| {
            if &t.table == from {
                t.table = to.clone();
            }
            (t.key(), t)
        })
        .collect();
    for s in schema.sequences.values_mut() {
        if let Some(owner) = s.owned_by.as_mut().filter(|o| &o.table == from) {
            owner.table = to.clone();
        }
    }
}

/// Column `from` of `table` becomes `to`, in the table's keys and indexes and in the foreign keys
/// and sequences that name it.
fn rename_column(schema: &mut Schema, table: &QualifiedName, from: &str, to: &str) {
    let follow = |names: &mut Vec<String>| {
        for n in names.iter_mut().filter(|n| *n == from) {
            *n = to.to_owned();
        }
    };
    if let Some(t) = schema.tables.get_mut(table) {
        for c in t.columns.iter_mut().filter(|c| c.name == from) {
            c.name = to.to_owned();
        }
        if let Some(pk) = t.primary_key.as_mut() {
            follow(&mut pk.columns);
        }
        t.uniques.values_mut().for_each(|u| follow(&mut u.columns));
        t.foreign_keys.values_mut().for_each(|fk| follow(&mut fk.columns));
        for index in t.indexes.values_mut() {
            follow(&mut index.include);
            for part in &mut index.parts {
                if matches!(&part.target, IndexTarget::Column(c) if c == from) {
                    part.target = IndexTarget::Column(to.to_owned());
                }
            }
        }
        if let Some(rows) = t.rows.as_mut() {
            follow(&mut rows.key);
        }
    }
    for other in schema.tables.values_mut() {
        for fk in other
            .foreign_keys
            .values_mut()
            .filter(|fk| &fk.referenced_table == table)
        {
            follow(&mut fk.referenced_columns);
        }
    }
    for s in schema.sequences.values_mut() {
        if let Some(owner) = s
            .owned_by
            .as_mut()
            .filter(|o| &o.table == table && o.column == from)
        {
            owner.column = to.to_owned();
        }
    }
}

/// The indexes and constraints of `have` (a renamed table, as renamed) that `want` declares under
/// another name with the same definition; `have` takes their declared names. MySQL can rename
/// neither a CHECK nor a FOREIGN KEY constraint (those are dropped and added as before), and its
/// primary key is always `PRIMARY`.
pub(super) fn renamed_objects(want: &Table, have: &mut Table, mysql: bool) -> Vec<ObjectRenamed> {
    let mut out = Vec::new();
    let mut push = |kind, from: &str, to: &str| {
        out.push(ObjectRenamed {
            table: want.name.clone(),
            kind,
            from: from.to_owned(),
            to: to.to_owned(),
        });
    };
    for (from, to) in rename_matched(&mut have.indexes, &want.indexes, |i, name| i.name = name) {
        if let Some(comment) = have.index_comments.remove(&from) {
            have.index_comments.insert(to.clone(), comment);
        }
        push(RenamedKind::Index, &from, &to);
    }
    if let (Some(h), Some(w)) = (have.primary_key.as_mut(), want.primary_key.as_ref())
        && h.name != w.name
        && h.columns == w.columns
        && !mysql
    {
        push(RenamedKind::Constraint, &h.name, &w.name);
        h.name.clone_from(&w.name);
    }
    // MySQL's UNIQUE constraint is an index, renamed as one.
    let unique = if mysql {
        RenamedKind::Index
    } else {
        RenamedKind::Constraint
    };
    for (from, to) in rename_matched(&mut have.uniques, &want.uniques, |u, name| u.name = name) {
        push(unique, &from, &to);
    }
    if mysql {
        return out;
    }
    let mut renamed = rename_matched(&mut have.checks, &want.checks, |c, name| c.name = name);
    renamed.extend(rename_matched(
        &mut have.foreign_keys,
        &want.foreign_keys,
        |f, name| f.name = name,
    ));
    for (from, to) in renamed {
        if have.not_valid.remove(&from) {
            have.not_valid.insert(to.clone());
        }
        push(RenamedKind::Constraint, &from, &to);
    }
    out
}

/// Gives the objects of `have` that `want` declares under another name ([`matches`]) their
/// declared names; returns the `(live name, declared name)` pairs.
fn rename_matched<T: Clone + PartialEq>(
    have: &mut BTreeMap<String, T>,
    want: &BTreeMap<String, T>,
    set_name: fn(&mut T, String),
) -> Vec<(String, String)> {
    let pairs = matches(have, want, set_name);
    for (from, to) in &pairs {
        if let Some(mut object) = have.remove(from) {
            set_name(&mut object, to.clone());
            have.insert(to.clone(), object);
        }
    }
    pairs
}

/// `(live name, declared name)` of the objects only one side names that pair up one to one:
/// equal but for the name, with no second candidate on either side.
fn matches<T: Clone + PartialEq>(
    have: &BTreeMap<String, T>,
    want: &BTreeMap<String, T>,
    rename: impl Fn(&mut T, String),
) -> Vec<(String, String)> {
    let gone: Vec<(&String, &T)> = have.iter().filter(|(n, _)| !want.contains_key(*n)).collect();
    let new: Vec<(&String, &T)> = want.iter().filter(|(n, _)| !have.contains_key(*n)).collect();
    let mut pairs = Vec::new();
    for (g, (_, old)) in gone.iter().enumerate() {
        for (n, (to, declared)) in new.iter().enumerate() {
            let mut renamed = (*old).clone();
            rename(&mut renamed, (*to).clone());
            if renamed == **declared {
                pairs.push((g, n));
            }
        }
    }
    let once =
        |pick: fn(&(usize, usize)) -> usize, i: usize| pairs.iter().filter(|p| pick(p) == i).count() == 1;
    pairs
        .iter()
        .filter(|(g, n)| once(|p| p.0, *g) && once(|p| p.1, *n))
        .map(|(g, n)| (gone[*g].0.clone(), new[*n].0.clone()))
        .collect()
}

/// `actual` with the table and column renames of `desired` that apply to it: the live schema as
/// the rest of the plan sees it, for a caller that compares objects by name.
pub fn with_renames<'a>(desired: &Schema, actual: &'a Schema) -> Cow<'a, Schema> {
    resolve(desired, actual).actual
}

/// The rename hints of `desired` that `actual` makes stale or ambiguous, with why: notices.
pub fn ignored_renames(desired: &Schema, actual: &Schema) -> Vec<RenameIgnored> {
    resolve(desired, actual).ignored
}
