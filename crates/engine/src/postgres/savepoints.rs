//! The savepoints and temporary schema every probe of a hand-written text runs in: each probe in
//! a transaction that is always rolled back, a savepoint per probe so one refusal (the server
//! rejecting a text) does not abort the others.

use tokio_postgres::Client;

use super::cache::{Key, Verdicts};
use super::get;
use crate::Error;

/// The name of this session's temporary schema (created by the first temporary object).
pub(crate) async fn temp_namespace(client: &Client) -> Result<String, Error> {
    client
        .execute("CREATE TEMPORARY TABLE ptah_probe_namespace ()", &[])
        .await
        .map_err(Error::postgres)?;
    let row = client
        .query_one("SELECT pg_my_temp_schema()::regnamespace::text", &[])
        .await
        .map_err(Error::postgres)?;
    client
        .execute("DROP TABLE pg_temp.ptah_probe_namespace", &[])
        .await
        .map_err(Error::postgres)?;
    get(&row, 0)
}

/// Opens a savepoint, so one probe's failure does not abort the others.
pub(crate) async fn savepoint(client: &Client, name: &str) -> Result<(), Error> {
    client
        .batch_execute(&format!("SAVEPOINT {name}"))
        .await
        .map_err(Error::postgres)
}

/// Undoes everything since the savepoint: the probe's objects and settings.
pub(crate) async fn rollback_to(client: &Client, name: &str) -> Result<(), Error> {
    client
        .batch_execute(&format!("ROLLBACK TO SAVEPOINT {name}"))
        .await
        .map_err(Error::postgres)
}

/// Keeps a part that the server accepted.
pub(crate) async fn release(client: &Client, name: &str) -> Result<(), Error> {
    client
        .batch_execute(&format!("RELEASE SAVEPOINT {name}"))
        .await
        .map_err(Error::postgres)
}

/// A hand-written part whose text differs from its live counterpart's.
pub(crate) trait Differing {
    /// The verdict's key.
    fn key(&self) -> Key;
    /// The live text the server's print must equal.
    fn live(&self) -> &str;
}

/// Probes `unknown` with `probe_all` in one transaction that is always rolled back (`public` on
/// the path), records each verdict the server gave (a part it refused gets none), and returns the
/// parts it prints exactly as their live text.
pub(crate) async fn judge<T: Differing>(
    client: &Client,
    verdicts: Verdicts,
    unknown: Vec<T>,
    probe_all: impl AsyncFnOnce(&Client, &[T]) -> Result<Vec<Option<String>>, Error>,
) -> Result<Vec<T>, Error> {
    if unknown.is_empty() {
        return Ok(unknown);
    }
    client
        .batch_execute("BEGIN; SET LOCAL search_path = public")
        .await
        .map_err(Error::postgres)?;
    let result = probe_all(client, &unknown).await;
    client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
    let mut equal = Vec::new();
    for (d, text) in unknown.into_iter().zip(result?) {
        let same = text.as_deref() == Some(d.live());
        if text.is_some() {
            verdicts.put(d.key(), same);
        }
        if same {
            equal.push(d);
        }
    }
    Ok(equal)
}
