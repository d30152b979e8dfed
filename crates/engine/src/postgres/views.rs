//! Views and materialized views: read from the catalog with every name qualified, and desired
//! definitions brought to the server's own text before they are compared.

use std::collections::BTreeMap;

use ptah_schema::{QualifiedName, Schema, View};
use tokio_postgres::Client;

use super::{get, pipeline::Pipeline, queries, search_path};
use crate::Error;

/// Reads the views in scope into `schema`; the caller has emptied `search_path`.
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in rows.next(queries::VIEWS).await? {
        let name = QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?);
        if let Some(options) = get::<Option<String>>(&row, 5)? {
            return Err(Error::Unsupported {
                object: format!("view {name}"),
                reason: format!("its options ({options}) are not modelled"),
            });
        }
        let view = View {
            name: name.clone(),
            materialized: get(&row, 2)?,
            definition: View::canonical_definition(&get::<String>(&row, 3)?),
            comment: get(&row, 4)?,
        };
        schema.views.insert(name, view);
    }
    Ok(())
}

/// The desired views whose text differs from the live view of that name but that the server
/// prints exactly as the live one: a hand-written `SELECT id FROM users` and the catalog's
/// ` SELECT users.id FROM public.users` are one view.
///
/// Each such definition is created once as a temporary view, in a transaction that is always
/// rolled back, under the session's own `search_path` (the one an apply runs with), and read back
/// with an empty one. A definition the server refuses (it reads a column a plan has yet to add) is
/// not equivalent: the plan recreates the view.
pub(crate) async fn equivalent_to_live(
    client: &Client,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<QualifiedName>, Error> {
    let differing: BTreeMap<QualifiedName, String> = desired
        .views
        .values()
        .filter(|v| {
            live.views
                .get(&v.name)
                .is_some_and(|l| l.definition != v.definition)
        })
        .map(|v| (v.name.clone(), v.definition.clone()))
        .collect();
    if differing.is_empty() {
        return Ok(Vec::new());
    }
    client.batch_execute("BEGIN").await.map_err(Error::postgres)?;
    let result = probe_all(client, &differing).await;
    client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
    Ok(result?
        .into_iter()
        .filter(|(name, text)| live.views.get(name).is_some_and(|l| &l.definition == text))
        .map(|(name, _)| name)
        .collect())
}

async fn probe_all(
    client: &Client,
    differing: &BTreeMap<QualifiedName, String>,
) -> Result<Vec<(QualifiedName, String)>, Error> {
    let mut out = Vec::new();
    for (n, (name, definition)) in differing.iter().enumerate() {
        let probe = format!("ptah_probe_{n}");
        client
            .batch_execute(&format!("SAVEPOINT {probe}"))
            .await
            .map_err(Error::postgres)?;
        let create = format!("CREATE VIEW pg_temp.{probe} AS\n{definition}");
        // One statement through the extended protocol: a definition cannot smuggle in a second
        // statement (a `COMMIT`, say) that would outlive the rollback.
        if client.execute(create.as_str(), &[]).await.is_err() {
            client
                .batch_execute(&format!("ROLLBACK TO SAVEPOINT {probe}"))
                .await
                .map_err(Error::postgres)?;
            continue;
        }
        search_path(client, "").await?;
        let row = client
            .query_one(
                "SELECT pg_get_viewdef(format('pg_temp.%I', $1::text)::regclass)",
                &[&probe],
            )
            .await
            .map_err(Error::postgres)?;
        client
            .batch_execute(&format!("ROLLBACK TO SAVEPOINT {probe}"))
            .await
            .map_err(Error::postgres)?;
        out.push((name.clone(), View::canonical_definition(&get::<String>(&row, 0)?)));
    }
    Ok(out)
}
