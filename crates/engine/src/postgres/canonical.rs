//! Hand-written routine signatures brought to the catalog's text.
//!
//! A routine declared as `f(a int) RETURNS int` is stored by the server as `a integer` and
//! `integer`, and the differ compares text, so such a declaration would differ from the live
//! routine forever. Each desired routine whose signature text is not the live one's is created
//! under `pg_temp` in a transaction that is always rolled back, and its arguments and result are
//! read back as `pg_get_function_*` print them, names qualified as pg_dump prints them.

use ptah_schema::{QualifiedName, Routine, Schema};
use tokio_postgres::Client;

use crate::Error;

/// The temporary routine's name; `pg_temp` is private to the session, so no other run sees it.
const TEMP_NAME: &str = "ptah_canonical_signature";

/// Reads back what the catalog made of the temporary routine's signature.
const READ_BACK: &str = r"
SELECT pg_get_function_arguments(p.oid), pg_get_function_identity_arguments(p.oid),
       pg_get_function_result(p.oid)
FROM pg_proc p
WHERE p.pronamespace = pg_my_temp_schema() AND p.proname = $1";

/// Whether a routine of `desired` has a signature text that is not its live routine's.
pub(crate) fn pending(desired: &Schema, live: &Schema) -> bool {
    desired.routines.iter().any(|(key, r)| differs(live, key, r))
}

fn differs(live: &Schema, key: &QualifiedName, r: &Routine) -> bool {
    !live
        .routines
        .get(key)
        .is_some_and(|l| l.arguments == r.arguments && l.returns == r.returns)
}

/// Rewrites the arguments, identity arguments and result of every routine in `desired` whose
/// signature text differs from the live routine's (or that is not live), as the server prints them.
/// A signature the server cannot create now (a type the plan has yet to create) stays as written.
pub(crate) async fn routines(client: &Client, desired: &mut Schema, live: &Schema) -> Result<(), Error> {
    let pending: Vec<QualifiedName> = desired
        .routines
        .iter()
        .filter(|(key, r)| differs(live, key, r))
        .map(|(key, _)| key.clone())
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    // Unqualified names in a declaration mean `public`, as the readers take them; bodies are not
    // checked, since what they read may be created by the same plan.
    client
        .batch_execute("BEGIN; SET LOCAL check_function_bodies = off; SET LOCAL search_path = public")
        .await
        .map_err(Error::postgres)?;
    let result = canonicalise(client, desired, &pending).await;
    let rolled_back = client.batch_execute("ROLLBACK").await.map_err(Error::postgres);
    result?;
    rolled_back
}

async fn canonicalise(client: &Client, desired: &mut Schema, pending: &[QualifiedName]) -> Result<(), Error> {
    for key in pending {
        let Some(routine) = desired.routines.get(key) else {
            continue;
        };
        let Some(canonical) = read_back(client, routine).await? else {
            continue;
        };
        if canonical != *routine {
            desired.routines.remove(key);
            desired.routines.insert(canonical.key(), canonical);
        }
    }
    Ok(())
}

/// The routine with the catalog's signature texts, or `None` when the server refuses to create it.
async fn read_back(client: &Client, r: &Routine) -> Result<Option<Routine>, Error> {
    client
        .batch_execute("SAVEPOINT ptah_canonical")
        .await
        .map_err(Error::postgres)?;
    let probe = Routine {
        name: QualifiedName::new("pg_temp", TEMP_NAME),
        ..r.clone()
    };
    let create = ptah_schema::render::create_routine_statement(&probe);
    // One statement through the extended protocol: a declaration's text cannot smuggle in a
    // second statement (a `COMMIT`, say) that would outlive the rollback.
    if let Err(err) = client.execute(create.as_str(), &[]).await {
        tracing::debug!(routine = %r.key(), error = %err, "the signature is kept as written");
        client
            .batch_execute("ROLLBACK TO SAVEPOINT ptah_canonical")
            .await
            .map_err(Error::postgres)?;
        return Ok(None);
    }
    super::search_path(client, "").await?;
    let row = client
        .query_one(READ_BACK, &[&TEMP_NAME])
        .await
        .map_err(Error::postgres)?;
    let canonical = Routine {
        arguments: row.try_get(0).map_err(Error::postgres)?,
        identity_arguments: row.try_get(1).map_err(Error::postgres)?,
        returns: row.try_get(2).map_err(Error::postgres)?,
        ..r.clone()
    };
    // Dropping the savepoint's work removes the temporary routine and restores `search_path`.
    client
        .batch_execute("ROLLBACK TO SAVEPOINT ptah_canonical")
        .await
        .map_err(Error::postgres)?;
    Ok(Some(canonical))
}
