//! Indexes from `pg_index`: parts (columns by attribute number, expressions deparsed one by
//! one), method, predicate, comment, and the options the model holds (`INCLUDE` columns,
//! `NULLS NOT DISTINCT`, storage parameters, operator classes and nulls order).

use std::collections::{BTreeMap, HashMap};

use ptah_schema::{Index, IndexPart, IndexTarget, Table};

use super::{DIALECT, get, pipeline::Pipeline, queries};
use crate::{Error, canon};

/// Reads the indexes of `tables` (by oid), naming columns through `attnames`.
pub(super) async fn read(
    rows: &mut Pipeline<'_>,
    tables: &mut HashMap<u32, Table>,
    attnames: &HashMap<u32, BTreeMap<i16, String>>,
) -> Result<(), Error> {
    for row in rows.next(queries::INDEXES).await? {
        let oid: u32 = get(&row, 0)?;
        let Some(table) = tables.get_mut(&oid) else {
            continue;
        };
        let name: String = get(&row, 1)?;
        let method: String = get(&row, 2)?;
        let key_count = usize::try_from(get::<i16>(&row, 4)?).unwrap_or(0);
        let keys: Vec<i16> = get(&row, 5)?;
        let options: Vec<i16> = get(&row, 6)?;
        let exprs: Vec<Option<String>> = get(&row, 7)?;
        let opclasses: Vec<Option<String>> = get(&row, 10)?;
        let column_name = |attnum: &i16| {
            attnames
                .get(&oid)
                .and_then(|m| m.get(attnum))
                .cloned()
                .ok_or_else(|| Error::Unsupported {
                    object: format!("index {name} on {}", table.name),
                    reason: format!("key part {attnum} names no column"),
                })
        };
        let include = keys
            .iter()
            .skip(key_count)
            .map(&column_name)
            .collect::<Result<Vec<_>, _>>()?;
        let mut parts = Vec::with_capacity(key_count);
        for (position, attnum) in keys.iter().enumerate().take(key_count) {
            let target = match exprs.get(position).cloned().flatten() {
                Some(text) if *attnum == 0 => IndexTarget::Expression(canon::expression(DIALECT, &text)),
                _ => IndexTarget::Column(column_name(attnum)?),
            };
            // indoption bit 0 is DESC, bit 1 NULLS FIRST.
            let option = options.get(position).copied().unwrap_or(0);
            let descending = option & 1 == 1;
            parts.push(IndexPart {
                target,
                descending,
                prefix_length: None,
                opclass: opclasses.get(position).cloned().flatten(),
                nulls_first: IndexPart::nulls_order(descending, Some(option & 2 == 2)),
            });
        }
        let predicate: Option<String> = get(&row, 8)?;
        let index = Index {
            name: name.clone(),
            unique: get(&row, 3)?,
            parts,
            predicate: predicate.map(|p| canon::expression(DIALECT, &p)),
            method: (method != "btree").then_some(method),
            include,
            nulls_not_distinct: get(&row, 12)?,
            storage: {
                let mut storage: Vec<String> = get(&row, 11)?;
                storage.sort();
                storage
            },
        };
        if let Some(comment) = get::<Option<String>>(&row, 9)? {
            table.index_comments.insert(name.clone(), comment);
        }
        table.indexes.insert(name, index);
    }
    Ok(())
}
