//! Reference rows: matched by the desired table's key columns.

use std::collections::BTreeMap;

use super::{RowChange, SchemaDiff};
use crate::model::{Literal, QualifiedName, ReferenceRows, Schema};

type Row = BTreeMap<String, Literal>;

/// Adds row inserts, updates and deletes for every desired table that declares rows.
///
/// A desired table without declared rows does not manage its rows; a dropped table's rows go with
/// it. Inserts and updates follow `desired_order` (parents first), deletes the reverse of
/// `actual_order` (children first).
pub(super) fn diff_rows(
    desired: &Schema,
    actual: &Schema,
    desired_order: &[QualifiedName],
    actual_order: &[QualifiedName],
    d: &mut SchemaDiff,
) {
    for name in desired_order {
        let Some(want) = desired.tables.get(name).and_then(|t| t.rows.as_ref()) else {
            continue;
        };
        let have = actual.tables.get(name).and_then(|t| t.rows.as_ref());
        let have_by_key = index_by_key(&want.key, have);
        for row in &want.rows {
            let key = key_of(&want.key, row);
            match have_by_key.get(&key) {
                None => d.rows_inserted.push(RowChange {
                    table: name.clone(),
                    key: key.clone(),
                    values: row.iter().map(|(c, v)| (c.clone(), v.clone())).collect(),
                }),
                Some(old) => {
                    let values: Vec<(String, Literal)> = row
                        .iter()
                        .filter(|(c, v)| !want.key.contains(c) && old.get(*c) != Some(*v))
                        .map(|(c, v)| (c.clone(), v.clone()))
                        .collect();
                    if !values.is_empty() {
                        d.rows_updated.push(RowChange {
                            table: name.clone(),
                            key,
                            values,
                        });
                    }
                }
            }
        }
    }
    for name in actual_order.iter().rev() {
        let Some(want) = desired.tables.get(name).and_then(|t| t.rows.as_ref()) else {
            continue;
        };
        let Some(have) = actual.tables.get(name).and_then(|t| t.rows.as_ref()) else {
            continue;
        };
        let wanted = index_by_key(&want.key, Some(want));
        for (key, _) in index_by_key(&want.key, Some(have)) {
            if !wanted.contains_key(&key) {
                d.rows_deleted.push(RowChange {
                    table: name.clone(),
                    key,
                    values: Vec::new(),
                });
            }
        }
    }
    for list in [&mut d.rows_inserted, &mut d.rows_updated] {
        sort_within_tables(list, desired_order);
    }
}

fn key_of(key: &[String], row: &Row) -> Vec<(String, Literal)> {
    key.iter()
        .map(|k| (k.clone(), row.get(k).cloned().unwrap_or(Literal::Null)))
        .collect()
}

fn index_by_key<'a>(
    key: &[String],
    rows: Option<&'a ReferenceRows>,
) -> BTreeMap<Vec<(String, Literal)>, &'a Row> {
    rows.into_iter()
        .flat_map(|r| &r.rows)
        .map(|row| (key_of(key, row), row))
        .collect()
}

/// Keeps the table order and sorts each table's rows by key, whatever order they were declared in.
fn sort_within_tables(list: &mut [RowChange], order: &[QualifiedName]) {
    let rank: BTreeMap<&QualifiedName, usize> = order.iter().enumerate().map(|(i, n)| (n, i)).collect();
    list.sort_by(|a, b| {
        let ra = rank.get(&a.table);
        let rb = rank.get(&b.table);
        ra.cmp(&rb).then_with(|| a.key.cmp(&b.key))
    });
}
