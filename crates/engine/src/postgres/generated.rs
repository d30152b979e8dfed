//! Hand-written generation expressions brought to the catalog's text.
//!
//! The server stores `qty * price` over an integer and a numeric column as
//! `(qty)::numeric * price`, and the planner refuses to change a generation expression in place,
//! so a hand-written expression that only differs in the casts the server adds would block every
//! plan. Each desired expression whose text is not the live one's is added once to a temporary
//! copy of the live table, in a transaction that is always rolled back, and read back as the
//! inspector reads it.

use ptah_schema::{QualifiedName, Schema};
use tokio_postgres::Client;

use super::{DIALECT, get};
use crate::{Error, canon};

/// The temporary table's name; `pg_temp` is private to the session, so no other run sees it.
const PROBE: &str = "ptah_probe_generated";

/// A desired generated column whose expression text differs from its live counterpart's.
struct Differing {
    table: QualifiedName,
    column: String,
    expression: String,
    live: String,
}

fn differing(desired: &Schema, live: &Schema) -> Vec<Differing> {
    let mut out = Vec::new();
    for (name, table) in &desired.tables {
        let Some(have) = live.tables.get(name) else {
            continue;
        };
        for (position, column) in table.columns.iter().enumerate() {
            let Some(want) = column.generated.as_ref() else {
                continue;
            };
            let Some(had) = have
                .column_near(position, &column.name)
                .and_then(|c| c.generated.as_ref())
            else {
                continue;
            };
            if want.expression != had.expression {
                out.push(Differing {
                    table: name.clone(),
                    column: column.name.clone(),
                    expression: want.expression.clone(),
                    live: had.expression.clone(),
                });
            }
        }
    }
    out
}

/// The desired generated columns (table, column, live text) whose expression text differs from
/// the live column's but that the server prints exactly as the live one. An expression the server
/// refuses (it reads a column the plan has yet to add) is not equivalent: it is a real change.
pub(crate) async fn equivalent_to_live(
    client: &Client,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<(QualifiedName, String, String)>, Error> {
    let pending = differing(desired, live);
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    // Unqualified names mean `public`, as the readers and the inspector take them.
    client
        .batch_execute("BEGIN; SET LOCAL search_path = public")
        .await
        .map_err(Error::postgres)?;
    let result = probe_all(client, &pending).await;
    client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
    Ok(pending
        .into_iter()
        .zip(result?)
        .filter_map(|(d, text)| {
            let text = text?;
            (text == d.live).then_some((d.table, d.column, text))
        })
        .collect())
}

async fn probe_all(client: &Client, pending: &[Differing]) -> Result<Vec<Option<String>>, Error> {
    let mut out = Vec::with_capacity(pending.len());
    for d in pending {
        client
            .batch_execute("SAVEPOINT ptah_generated")
            .await
            .map_err(Error::postgres)?;
        let text = probe(client, d).await;
        client
            .batch_execute("ROLLBACK TO SAVEPOINT ptah_generated")
            .await
            .map_err(Error::postgres)?;
        out.push(text?);
    }
    Ok(out)
}

/// The expression as the catalog prints it, or `None` when the server refuses it.
async fn probe(client: &Client, d: &Differing) -> Result<Option<String>, Error> {
    let table = format!("{}.{}", quote(&d.table.schema), quote(&d.table.name));
    let column = quote(&d.column);
    // LIKE copies every column as a plain one, so the expression sees the live table's columns.
    let steps = [
        format!("CREATE TEMPORARY TABLE {PROBE} (LIKE {table})"),
        format!("ALTER TABLE pg_temp.{PROBE} RENAME COLUMN {column} TO ptah_probe_original"),
    ];
    for step in &steps {
        if client.execute(step.as_str(), &[]).await.is_err() {
            return Ok(None);
        }
    }
    let type_row = client
        .query_one(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute \
             WHERE attrelid = format('pg_temp.%I', $1::text)::regclass AND attname = 'ptah_probe_original'",
            &[&PROBE],
        )
        .await
        .map_err(Error::postgres)?;
    let data_type: String = get(&type_row, 0)?;
    // One statement through the extended protocol: an expression cannot smuggle in a second
    // statement (a `COMMIT`, say) that would outlive the rollback.
    let add = format!(
        "ALTER TABLE pg_temp.{PROBE} ADD COLUMN {column} {data_type} GENERATED ALWAYS AS ({}) STORED",
        d.expression
    );
    if let Err(err) = client.execute(add.as_str(), &[]).await {
        tracing::debug!(table = %d.table, column = %d.column, error = %err, "the expression is kept as written");
        return Ok(None);
    }
    let row = client
        .query_one(
            "SELECT pg_get_expr(ad.adbin, ad.adrelid, true) FROM pg_attrdef ad \
             JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum \
             WHERE ad.adrelid = format('pg_temp.%I', $1::text)::regclass AND a.attname = $2",
            &[&PROBE, &d.column],
        )
        .await
        .map_err(Error::postgres)?;
    Ok(Some(canon::expression(DIALECT, &get::<String>(&row, 0)?)))
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}
