//! Differences inside a table that exists on both sides.

use std::collections::BTreeMap;

use super::loose;
use super::{
    ColumnAspect, ColumnChange, ColumnRef, Constraint, ConstraintChange, ConstraintRef, IndexChange,
    IndexRef, SchemaDiff, TableCommentChange, TableOptionsChange,
};
use serde::{Deserialize, Serialize};

use crate::model::{CheckConstraint, Column, ForeignKey, PrimaryKey, QualifiedName, Table, UniqueConstraint};

/// A comment set on (or cleared from) an index that exists once the plan ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexCommentChange {
    /// The table.
    pub table: QualifiedName,
    /// The index.
    pub index: String,
    /// The new comment; `None` clears it.
    pub comment: Option<String>,
}

/// Adds the differences between `want` and `have` (the same table) to `d`.
pub(super) fn diff_table(want: &Table, have: &Table, d: &mut SchemaDiff) {
    let name = &want.name;
    if want.comment != have.comment {
        d.table_comments_modified.push(TableCommentChange {
            table: name.clone(),
            from: have.comment.clone(),
            to: want.comment.clone(),
        });
    }
    // Declared means compared: undeclared, a table keeps whatever default it has.
    let declared_differs = |w: &Option<String>, h: &Option<String>| w.is_some() && w != h;
    if declared_differs(&want.charset, &have.charset) || declared_differs(&want.collation, &have.collation) {
        d.table_options_modified.push(TableOptionsChange {
            table: name.clone(),
            charset: want.charset.clone(),
            collation: want.collation.clone(),
        });
    }
    // A partition's columns are its parent's: the server changes them with the parent's. One
    // that is detached (even to be attached again) is changed on its own meanwhile.
    let inherited = want.partition_of.is_some() && want.partition_of == have.partition_of;
    for column in want.columns.iter().filter(|_| !inherited) {
        match have.column(&column.name) {
            None => d.columns_added.push(ColumnRef {
                table: name.clone(),
                column: column.clone(),
            }),
            Some(old) => {
                let mut changes = column_changes(old, column);
                if collation_differs(want, have, old, column) {
                    changes.push(ColumnAspect::Collation);
                }
                if !changes.is_empty() {
                    d.columns_modified.push(ColumnChange {
                        table: name.clone(),
                        from: old.clone(),
                        to: column.clone(),
                        changes,
                    });
                }
            }
        }
    }
    for column in have.columns.iter().filter(|_| !inherited) {
        if want.column(&column.name).is_none() {
            d.columns_removed.push(ColumnRef {
                table: name.clone(),
                column: column.clone(),
            });
        }
    }

    for (index_name, index) in &want.indexes {
        match have.indexes.get(index_name) {
            None => d.indexes_added.push(IndexRef {
                table: name.clone(),
                index: index.clone(),
            }),
            Some(old) if !loose::same_index(old, index) => d.indexes_modified.push(IndexChange {
                table: name.clone(),
                from: old.clone(),
                to: index.clone(),
            }),
            Some(_) => {}
        }
    }
    for (index_name, index) in &have.indexes {
        if !want.indexes.contains_key(index_name) {
            d.indexes_removed.push(IndexRef {
                table: name.clone(),
                index: index.clone(),
            });
        }
    }

    for (index_name, comment) in &want.index_comments {
        // A new or rebuilt index starts without a comment.
        let kept = match (have.indexes.get(index_name), want.indexes.get(index_name)) {
            (Some(h), Some(w)) => loose::same_index(h, w),
            (h, w) => h == w,
        };
        let had = have.index_comments.get(index_name).filter(|_| kept);
        if had != Some(comment) {
            d.index_comments_modified.push(IndexCommentChange {
                table: name.clone(),
                index: index_name.clone(),
                comment: Some(comment.clone()),
            });
        }
    }
    for index_name in have.index_comments.keys() {
        let kept = want.indexes.get(index_name).is_some_and(|i| {
            have.indexes
                .get(index_name)
                .is_some_and(|h| loose::same_index(h, i))
        });
        if kept && !want.index_comments.contains_key(index_name) {
            d.index_comments_modified.push(IndexCommentChange {
                table: name.clone(),
                index: index_name.clone(),
                comment: None,
            });
        }
    }

    let wanted = constraints(want);
    let mut had = constraints(have);
    // A helper check an interrupted lock-safe SET NOT NULL left is the plan's, not the schema's.
    had.retain(|(kind, name), _| *kind != 2 || !crate::names::is_not_null_check(name));
    for (key, constraint) in &wanted {
        match had.get(key) {
            None => d.constraints_added.push(ConstraintRef {
                table: name.clone(),
                constraint: constraint.owned(),
            }),
            Some(old) if !old.same(*constraint) => d.constraints_modified.push(ConstraintChange {
                table: name.clone(),
                from: old.owned(),
                to: constraint.owned(),
            }),
            // The server enforces it on new rows only: validated in place, never rebuilt.
            Some(_) if have.not_valid.contains(key.1) && !want.not_valid.contains(key.1) => {
                d.constraints_validated.push(ConstraintRef {
                    table: name.clone(),
                    constraint: constraint.owned(),
                });
            }
            Some(_) => {}
        }
    }
    for (key, constraint) in &had {
        if !wanted.contains_key(key) {
            d.constraints_removed.push(ConstraintRef {
                table: name.clone(),
                constraint: constraint.owned(),
            });
        }
    }
    super::security::diff_security(want, have, d);
}

/// The aspects in which two versions of a column differ.
pub(super) fn column_changes(old: &Column, new: &Column) -> Vec<ColumnAspect> {
    let mut changes = Vec::new();
    if old.data_type != new.data_type {
        changes.push(ColumnAspect::Type);
    }
    if old.nullable != new.nullable {
        changes.push(ColumnAspect::Nullability);
    }
    if !loose::same_default(&old.default, &new.default) {
        changes.push(ColumnAspect::Default);
    }
    if old.identity != new.identity || old.identity_options != new.identity_options {
        changes.push(ColumnAspect::Identity);
    }
    if old.auto_increment != new.auto_increment {
        changes.push(ColumnAspect::AutoIncrement);
    }
    if old.comment != new.comment {
        changes.push(ColumnAspect::Comment);
    }
    if !loose::same_generated(old, new) {
        changes.push(ColumnAspect::Generation);
    }
    changes
}

/// A text column's collation is its own when it names one, else its table's (PostgreSQL tables
/// have none, so there it is the column's, `None` being the type's default): compared in effect,
/// so a column that follows its table follows a change of the table's default too (`ALTER TABLE …
/// COLLATE=` alone leaves existing columns as they were). The live side names a column's
/// collation only where it differs from its table's. A declared character set is compared with
/// the one in effect.
fn collation_differs(want_table: &Table, have_table: &Table, old: &Column, new: &Column) -> bool {
    if !new.data_type.is_collatable() {
        return false;
    }
    let have = old.collation.as_ref().or(have_table.collation.as_ref());
    let want = new
        .collation
        .as_ref()
        .or(want_table.collation.as_ref())
        .or(have_table.collation.as_ref());
    let charset_in_effect = old.charset.as_ref().or(have_table.charset.as_ref());
    let charset_differs = new.charset.as_ref().is_some_and(|c| Some(c) != charset_in_effect);
    want != have || charset_differs
}

/// Kind rank then name: the primary key first, then uniques, checks and foreign keys.
type ConstraintKey<'a> = (u8, &'a str);

/// A table's constraint, borrowed: comparing two tables copies only the constraints that differ
/// (at thousands of unchanged tables, copying every foreign key cost more than comparing them).
#[derive(Clone, Copy, PartialEq)]
enum Held<'a> {
    PrimaryKey(&'a PrimaryKey),
    Unique(&'a UniqueConstraint),
    Check(&'a CheckConstraint),
    ForeignKey(&'a ForeignKey),
}

impl Held<'_> {
    fn owned(self) -> Constraint {
        match self {
            Held::PrimaryKey(c) => Constraint::PrimaryKey(c.clone()),
            Held::Unique(c) => Constraint::Unique(c.clone()),
            Held::Check(c) => Constraint::Check(c.clone()),
            Held::ForeignKey(c) => Constraint::ForeignKey(c.clone()),
        }
    }

    /// Equal, a check's body compared loosely.
    fn same(self, other: Held<'_>) -> bool {
        match (self, other) {
            (Held::Check(x), Held::Check(y)) => {
                x.name == y.name && loose::same_expression(&x.expression, &y.expression)
            }
            _ => self == other,
        }
    }
}

fn constraints(table: &Table) -> BTreeMap<ConstraintKey<'_>, Held<'_>> {
    let mut out = BTreeMap::new();
    if let Some(pk) = &table.primary_key {
        // A table has one primary key whatever its name: a renamed key is a modified key.
        out.insert((0, ""), Held::PrimaryKey(pk));
    }
    for (n, c) in &table.uniques {
        out.insert((1, n.as_str()), Held::Unique(c));
    }
    for (n, c) in &table.checks {
        out.insert((2, n.as_str()), Held::Check(c));
    }
    for (n, c) in &table.foreign_keys {
        out.insert((3, n.as_str()), Held::ForeignKey(c));
    }
    out
}
