//! The server's estimate of how many rows each table holds: what a lock on the table costs its
//! writers. An estimate, never a count (a count would scan the tables it is about to warn of).

use std::collections::BTreeMap;

use ptah_schema::QualifiedName;

use crate::{Error, Session};

/// Estimated rows of every table the session can see, by name. PostgreSQL's `reltuples` is
/// negative for a table never analyzed or vacuumed: such a table is left out (no estimate).
/// MySQL names tables with an empty schema, as the model does.
pub async fn estimated_rows(session: &mut Session) -> Result<BTreeMap<QualifiedName, u64>, Error> {
    match session {
        Session::Postgres { client, .. } => {
            let rows = client
                .query(
                    "SELECT n.nspname::text, c.relname::text, c.reltuples::float8 \
                     FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
                     WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                     AND c.reltuples >= 0",
                    &[],
                )
                .await
                .map_err(Error::postgres)?;
            Ok(rows
                .iter()
                .map(|r| {
                    let estimate: f64 = r.get(2);
                    // reltuples is a non-negative float here; a row count fits in u64.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let rows = estimate.round() as u64;
                    (
                        QualifiedName::new(r.get::<_, String>(0), r.get::<_, String>(1)),
                        rows,
                    )
                })
                .collect())
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let rows: Vec<(String, Option<u64>)> = conn
                .query(
                    "SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES \
                     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'",
                )
                .await
                .map_err(Error::mysql)?;
            Ok(rows
                .into_iter()
                .filter_map(|(name, rows)| Some((QualifiedName::new("", name), rows?)))
                .collect())
        }
    }
}
