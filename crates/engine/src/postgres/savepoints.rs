//! The savepoints and temporary schema every probe of a hand-written text runs in: each probe in
//! a transaction that is always rolled back, a savepoint per probe so one refusal (the server
//! rejecting a text) does not abort the others.

use tokio_postgres::Client;

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
