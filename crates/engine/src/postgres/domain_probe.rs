//! Hand-written domain CHECK bodies brought to the catalog's text.
//!
//! `CHECK (VALUE IN ('p', 'q'))` is stored as `VALUE = ANY (ARRAY['p'::text, 'q'::text])`. Each
//! desired check whose text is not its live check's is added to a temporary domain over the
//! desired base type, in a transaction that is always rolled back, and read back as the inspector
//! reads a live domain's checks; one the server prints as the live check takes the live text.

use ptah_schema::normalize::{domain_check, without_column_text_casts};
use ptah_schema::{QualifiedName, Schema};
use tokio_postgres::Client;

use super::cache::{Key, Kind, Verdicts};
use super::savepoints::{self, Differing as _, judge, rollback_to, savepoint};
use super::{DIALECT, get};
use crate::Error;

/// The temporary domain's name; `pg_temp` is private to the session, so no other run sees it.
const PROBE: &str = "ptah_probe_domain";

/// A desired domain check whose text differs from its live check's.
struct Differing {
    domain: QualifiedName,
    check: String,
    base: String,
    expression: String,
    live: String,
}

impl savepoints::Differing for Differing {
    fn live(&self) -> &str {
        &self.live
    }

    fn key(&self) -> Key {
        (
            Kind::DomainCheck,
            format!("{}\n{}", self.base, self.expression),
            self.live.clone(),
        )
    }
}

/// Whether a desired domain check differs by text from its live check.
pub(crate) fn pending(desired: &Schema, live: &Schema) -> bool {
    desired.domains.iter().any(|(name, want)| {
        live.domains.get(name).is_some_and(|have| {
            want.checks
                .iter()
                .any(|(n, e)| have.checks.get(n).is_some_and(|h| h != e))
        })
    })
}

/// Rewrites the checks of `desired`'s domains that the server stores exactly as their live
/// counterparts to the live text.
pub(crate) async fn canonicalise(
    client: &Client,
    desired: &mut Schema,
    live: &Schema,
    verdicts: Verdicts,
) -> Result<(), Error> {
    let mut pending = Vec::new();
    for (name, want) in &desired.domains {
        let Some(have) = live.domains.get(name) else {
            continue;
        };
        for (check, expression) in &want.checks {
            let Some(had) = have.checks.get(check).filter(|h| *h != expression) else {
                continue;
            };
            pending.push(Differing {
                domain: name.clone(),
                check: check.clone(),
                base: want.base.clone(),
                expression: expression.clone(),
                live: had.clone(),
            });
        }
    }
    let mut equal = Vec::new();
    let mut unknown = Vec::new();
    for d in pending {
        // Texts that differ only in casts of `VALUE` to text need no server.
        if without_column_text_casts(DIALECT, &d.expression) == without_column_text_casts(DIALECT, &d.live) {
            equal.push(d);
            continue;
        }
        match verdicts.get(&d.key()) {
            Some(true) => equal.push(d),
            Some(false) => {}
            None => unknown.push(d),
        }
    }
    equal.extend(judge(client, verdicts, unknown, probe_all).await?);
    for d in equal {
        if let Some(domain) = desired.domains.get_mut(&d.domain) {
            domain.checks.insert(d.check, d.live);
        }
    }
    Ok(())
}

async fn probe_all(client: &Client, pending: &[Differing]) -> Result<Vec<Option<String>>, Error> {
    let mut out = Vec::with_capacity(pending.len());
    for d in pending {
        savepoint(client, "ptah_probe_domain").await?;
        let text = probe(client, d).await;
        rollback_to(client, "ptah_probe_domain").await?;
        out.push(text?);
    }
    Ok(out)
}

/// The check as the inspector reads it, or `None` when the server refuses it (it calls a
/// function the plan has yet to create).
async fn probe(client: &Client, d: &Differing) -> Result<Option<String>, Error> {
    // One statement each through the extended protocol: a text cannot smuggle in a `COMMIT`.
    let steps = [
        format!("CREATE DOMAIN pg_temp.{PROBE} AS {}", d.base),
        format!(
            "ALTER DOMAIN pg_temp.{PROBE} ADD CONSTRAINT ptah_probe CHECK ({})",
            d.expression
        ),
    ];
    for step in &steps {
        if let Err(err) = client.execute(step.as_str(), &[]).await {
            tracing::debug!(domain = %d.domain, check = %d.check, error = %err, "the check is kept as written");
            return Ok(None);
        }
    }
    let row = client
        .query_one(
            "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c \
             WHERE c.contypid = format('pg_temp.%I', $1::text)::regtype AND c.conname = 'ptah_probe'",
            &[&PROBE],
        )
        .await
        .map_err(Error::postgres)?;
    Ok(Some(domain_check(&get::<String>(&row, 0)?)))
}
