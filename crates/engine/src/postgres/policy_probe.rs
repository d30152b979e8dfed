//! Hand-written policy expressions brought to the catalog's text.
//!
//! The differ compares a policy's `USING` and `WITH CHECK` in the canonical form of
//! [`ptah_schema::normalize::expression`], which removes the catalog's extra parentheses and
//! literal casts but cannot know that `x::int` prints as `(x)::integer` or that `FROM doc` reads
//! `public.doc`. So each desired policy whose expressions differ from its live policy's is
//! created once on a temporary copy of its table (`CREATE TEMP TABLE … (LIKE …)`, which takes
//! no lock on the real table stronger than reading its definition), in a transaction that is always
//! rolled back, under the session's own `search_path`, and its expressions are read back with an
//! empty one, as the inspector reads them. Only when both come back as the live policy's does the
//! desired policy take the live text.

use ptah_schema::{Policy, QualifiedName, Schema, render};
use tokio_postgres::Client;

use super::{DIALECT, get, search_path};
use crate::{Error, canon};

/// A desired policy that reads the same as its live policy: its table and name.
pub(crate) type Same = (QualifiedName, String);

/// The desired policies whose expressions differ from the live policy's only in spelling.
pub(crate) async fn equivalent_to_live(
    client: &Client,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<Same>, Error> {
    let mut differing: Vec<(QualifiedName, &Policy, &Policy)> = Vec::new();
    for (name, table) in &desired.tables {
        let Some(have) = live.tables.get(name) else {
            continue;
        };
        for (policy_name, want) in &table.security.policies {
            let Some(old) = have.security.policies.get(policy_name) else {
                continue;
            };
            // ALTER POLICY cannot drop an expression, so only texts on both sides are probed.
            let same_shape =
                old.using.is_some() == want.using.is_some() && old.check.is_some() == want.check.is_some();
            if same_shape && (old.using != want.using || old.check != want.check) {
                differing.push((name.clone(), want, old));
            }
        }
    }
    if differing.is_empty() {
        return Ok(Vec::new());
    }
    client.batch_execute("BEGIN").await.map_err(Error::postgres)?;
    let result = probe_all(client, &differing).await;
    client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
    result
}

async fn probe_all(
    client: &Client,
    differing: &[(QualifiedName, &Policy, &Policy)],
) -> Result<Vec<Same>, Error> {
    let mut out = Vec::new();
    for (table, want, old) in differing {
        client
            .batch_execute("SAVEPOINT ptah_policy_probe")
            .await
            .map_err(Error::postgres)?;
        let read = probe(client, table, want).await;
        client
            .batch_execute("ROLLBACK TO SAVEPOINT ptah_policy_probe")
            .await
            .map_err(Error::postgres)?;
        if read? == Some((old.using.clone(), old.check.clone())) {
            out.push((table.clone(), want.name.clone()));
        }
    }
    Ok(out)
}

/// The expressions the server makes of `want` on a copy of `table`; `None` when it refuses them
/// (a column the plan has yet to add, say): then the policy is not equivalent.
async fn probe(
    client: &Client,
    table: &QualifiedName,
    want: &Policy,
) -> Result<Option<(Option<String>, Option<String>)>, Error> {
    // Roles do not change how an expression reads, and need not exist for the probe.
    let probe_policy = Policy {
        roles: Default::default(),
        ..want.clone()
    };
    // The copy has the table's own name (in `pg_temp`, private to the session), because the
    // deparser renames a subquery's reference to a table of the policy's name (`doc doc_1`);
    // `pg_temp` goes last on the path, so the expression's names still mean the real tables.
    let copy = render::create_policy_statement(&QualifiedName::new("pg_temp", &table.name), &probe_policy);
    let like = format!(
        "CREATE TEMP TABLE {} (LIKE {}.{})",
        quote(&table.name),
        quote(&table.schema),
        quote(&table.name)
    );
    let temp_last = "SELECT set_config('search_path', current_setting('search_path') || ', pg_temp', true)";
    // One statement each through the extended protocol: an expression cannot smuggle in a
    // second statement (a `COMMIT`, say) that would outlive the rollback.
    for statement in [like.as_str(), temp_last, copy.as_str()] {
        if let Err(err) = client.execute(statement, &[]).await {
            tracing::debug!(policy = %want.name, error = %err, "the policy is kept as written");
            return Ok(None);
        }
    }
    search_path(client, "").await?;
    let row = client
        .query_one(
            "SELECT pg_get_expr(polqual, polrelid), pg_get_expr(polwithcheck, polrelid) FROM pg_policy \
             WHERE polrelid = format('pg_temp.%I', $1::text)::regclass",
            &[&table.name],
        )
        .await
        .map_err(Error::postgres)?;
    let canonical = |i: usize| -> Result<Option<String>, Error> {
        Ok(get::<Option<String>>(&row, i)?.map(|e| canon::expression(DIALECT, &e)))
    };
    Ok(Some((canonical(0)?, canonical(1)?)))
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
