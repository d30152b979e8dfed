//! How MariaDB/MySQL prints a hand-written view, learned by creating it once under a probe name.
//!
//! The server keeps a view's query in its own spelling (every column qualified and aliased,
//! keywords lowercased, `JOIN … ON` parenthesised), which the dump reader takes as it is, but a
//! hand-written `CREATE VIEW v AS SELECT a FROM t` never reads back as written: it would be
//! re-created on every plan. MySQL has no transactional DDL, so there is no rolled-back scratch
//! space as on PostgreSQL: each declared view whose text differs from the live view's is created
//! under a name of its own (`ptah_probe_<n>_<pid>`, in the URL's database), read back from
//! `information_schema.VIEWS`, and dropped at once, whatever happened. A declared text that prints
//! as the live one takes the live text. A probe the server refuses (a table the plan has yet to
//! create, no `CREATE VIEW` privilege) leaves the declared text as it is: a change, as before.

use std::collections::BTreeMap;

use mysql_async::Conn;
use mysql_async::prelude::Queryable;
use ptah_schema::normalize::{mysql_quote, mysql_view_definition};
use ptah_schema::{QualifiedName, Schema};

use crate::Error;

/// The views of `desired` (by name) that the server prints exactly as their live counterparts.
pub(crate) async fn views_equivalent_to_live(
    conn: &mut Conn,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<QualifiedName>, Error> {
    let differing: Vec<(&QualifiedName, &str, &str)> = desired
        .views
        .iter()
        .filter_map(|(name, want)| {
            let have = live.views.get(name)?;
            (have.definition != want.definition).then_some((
                name,
                want.definition.as_str(),
                have.definition.as_str(),
            ))
        })
        .collect();
    if differing.is_empty() {
        return Ok(Vec::new());
    }
    let database: Option<String> = conn
        .query_first("SELECT DATABASE()")
        .await
        .map_err(Error::mysql)?
        .flatten();
    let Some(database) = database else {
        return Ok(Vec::new());
    };
    let mut printed: BTreeMap<&QualifiedName, String> = BTreeMap::new();
    for (n, (name, text, _)) in differing.iter().enumerate() {
        let probe = format!("ptah_probe_{n}_{}", std::process::id());
        let created = conn
            .query_drop(format!("CREATE VIEW {} AS {text}", mysql_quote(&probe)))
            .await
            .is_ok();
        let read = if created {
            conn.exec_first::<String, _, _>(
                "SELECT VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
                (&database, &probe),
            )
            .await
        } else {
            Ok(None)
        };
        // Dropped before anything else can fail: a probe never outlives its plan.
        conn.query_drop(format!("DROP VIEW IF EXISTS {}", mysql_quote(&probe)))
            .await
            .map_err(Error::mysql)?;
        if let Some(definition) = read.map_err(Error::mysql)? {
            printed.insert(name, mysql_view_definition(&definition, &database));
        }
    }
    Ok(differing
        .into_iter()
        .filter(|(name, _, have)| printed.get(name).is_some_and(|p| p == have))
        .map(|(name, _, _)| name.clone())
        .collect())
}
