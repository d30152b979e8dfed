//! Reference rows: for each table whose desired schema declares rows, the live rows' declared key
//! and columns, ordered by key. Values are read as text and typed by the live column's type.

use std::collections::BTreeMap;

use ptah_schema::{Literal, QualifiedName, ReferenceRows, Schema, Table};

use crate::{Error, InspectScope, RowSelection, Session, canon};

/// Reads the rows `scope` asks for into the tables of `schema` that exist.
pub(crate) async fn read(
    session: &mut Session,
    scope: &InspectScope,
    schema: &mut Schema,
) -> Result<(), Error> {
    for (name, selection) in &scope.rows {
        let Some(table) = schema.tables.get_mut(name) else {
            continue;
        };
        let columns: Vec<String> = selection
            .key
            .iter()
            .chain(&selection.columns)
            .filter(|c| table.column(c).is_some())
            .cloned()
            .collect();
        let key_present = selection.key.iter().all(|c| table.column(c).is_some());
        let texts = if key_present && !columns.is_empty() {
            select(session, name, selection, &columns).await?
        } else {
            Vec::new()
        };
        table.rows = Some(ReferenceRows {
            key: selection.key.clone(),
            rows: texts
                .into_iter()
                .map(|values| typed(table, &columns, values))
                .collect(),
        });
    }
    Ok(())
}

fn typed(table: &Table, columns: &[String], values: Vec<Option<String>>) -> BTreeMap<String, Literal> {
    columns
        .iter()
        .zip(values)
        .map(|(column, text)| {
            let data_type = table.column(column).map(|c| &c.data_type);
            (column.clone(), canon::value(data_type, text))
        })
        .collect()
}

async fn select(
    session: &mut Session,
    table: &QualifiedName,
    selection: &RowSelection,
    columns: &[String],
) -> Result<Vec<Vec<Option<String>>>, Error> {
    match session {
        Session::Postgres { client, .. } => {
            let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
            let list: Vec<String> = columns.iter().map(|c| format!("{}::text", quote(c))).collect();
            let order: Vec<String> = selection.key.iter().map(|c| quote(c)).collect();
            let sql = format!(
                "SELECT {} FROM {}.{} ORDER BY {}",
                list.join(", "),
                quote(&table.schema),
                quote(&table.name),
                order.join(", ")
            );
            let rows = client.query(&sql, &[]).await.map_err(Error::postgres)?;
            rows.iter()
                .map(|row| {
                    (0..columns.len())
                        .map(|i| row.try_get::<_, Option<String>>(i).map_err(Error::postgres))
                        .collect()
                })
                .collect()
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let quote = |s: &str| format!("`{}`", s.replace('`', "``"));
            let list: Vec<String> = columns.iter().map(|c| quote(c)).collect();
            let order: Vec<String> = selection.key.iter().map(|c| quote(c)).collect();
            let sql = format!(
                "SELECT {} FROM {} ORDER BY {}",
                list.join(", "),
                quote(&table.name),
                order.join(", ")
            );
            // The text protocol delivers every value as its text form.
            let rows: Vec<mysql_async::Row> = conn.query(sql).await.map_err(Error::mysql)?;
            Ok(rows
                .iter()
                .map(|row| {
                    (0..columns.len())
                        .map(|i| match row.as_ref(i) {
                            Some(mysql_async::Value::Bytes(b)) => {
                                Some(String::from_utf8_lossy(b).into_owned())
                            }
                            Some(mysql_async::Value::NULL) | None => None,
                            Some(other) => Some(other.as_sql(true)),
                        })
                        .collect()
                })
                .collect())
        }
    }
}
