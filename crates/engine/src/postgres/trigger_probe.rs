//! Hand-written trigger statements brought to the catalog's text.
//!
//! The model keeps a trigger as the statement `pg_get_triggerdef` prints, with every name
//! qualified and its `WHEN` condition in the server's form, which people rarely write. Each
//! desired trigger whose text is not its live trigger's is created on a temporary copy of the
//! live table, in a transaction that is always rolled back, and read back with the table's own
//! name put back; one the server prints as the live trigger takes the live text.

use ptah_schema::{QualifiedName, Schema, Trigger};
use tokio_postgres::Client;

use super::cache::{Key, Kind, Verdicts};
use super::savepoints::{self, Differing as _, judge, rollback_to, savepoint};
use super::{get, search_path};
use crate::Error;

/// The temporary table's name; `pg_temp` is private to the session, so no other run sees it.
const PROBE: &str = "ptah_probe_trigger";

/// A desired trigger whose text differs from its live trigger's.
struct Differing {
    key: QualifiedName,
    table: QualifiedName,
    definition: String,
    live: String,
}

impl savepoints::Differing for Differing {
    fn live(&self) -> &str {
        &self.live
    }

    fn key(&self) -> Key {
        (Kind::Trigger, self.definition.clone(), self.live.clone())
    }
}

/// Whether a desired trigger differs by text from its live trigger.
pub(crate) fn pending(desired: &Schema, live: &Schema) -> bool {
    desired.triggers.iter().any(|(key, want)| {
        live.triggers
            .get(key)
            .is_some_and(|h| h.definition != want.definition)
    })
}

/// Rewrites the triggers of `desired` that the server prints exactly as their live counterparts
/// to the live text.
pub(crate) async fn canonicalise(
    client: &Client,
    desired: &mut Schema,
    live: &Schema,
    verdicts: Verdicts,
) -> Result<(), Error> {
    let mut equal = Vec::new();
    let mut unknown = Vec::new();
    for (key, want) in &desired.triggers {
        let Some(have) = live.triggers.get(key).filter(|h| h.definition != want.definition) else {
            continue;
        };
        let d = Differing {
            key: key.clone(),
            table: want.table.clone(),
            definition: want.definition.clone(),
            live: have.definition.clone(),
        };
        match verdicts.get(&d.key()) {
            Some(true) => equal.push(d),
            Some(false) => {}
            None => unknown.push(d),
        }
    }
    equal.extend(judge(client, verdicts, unknown, probe_all).await?);
    for d in equal {
        if let Some(trigger) = desired.triggers.get_mut(&d.key) {
            trigger.definition = d.live;
        }
    }
    Ok(())
}

async fn probe_all(client: &Client, pending: &[Differing]) -> Result<Vec<Option<String>>, Error> {
    let mut out = Vec::with_capacity(pending.len());
    for d in pending {
        savepoint(client, "ptah_probe_trigger").await?;
        let text = probe(client, d).await;
        search_path(client, "public").await?;
        rollback_to(client, "ptah_probe_trigger").await?;
        out.push(text?);
    }
    Ok(out)
}

/// The trigger as the inspector reads it, or `None` when its text cannot be retargeted or the
/// server refuses it (its function is yet to be created).
async fn probe(client: &Client, d: &Differing) -> Result<Option<String>, Error> {
    let Some((start, end)) = table_span(&d.definition) else {
        return Ok(None);
    };
    let table = format!("{}.{}", quote(&d.table.schema), quote(&d.table.name));
    let create = format!(
        "{}pg_temp.{PROBE}{}",
        &d.definition[..start],
        &d.definition[end..]
    );
    // One statement each through the extended protocol: a text cannot smuggle in a `COMMIT`.
    let steps = [format!("CREATE TEMPORARY TABLE {PROBE} (LIKE {table})"), create];
    for step in &steps {
        if let Err(err) = client.execute(step.as_str(), &[]).await {
            tracing::debug!(trigger = %d.key, error = %err, "the trigger is kept as written");
            return Ok(None);
        }
    }
    search_path(client, "").await?;
    let row = client
        .query_one(
            "SELECT pg_get_triggerdef(t.oid), pg_my_temp_schema()::regnamespace::text, \
                    quote_ident($2) || '.' || quote_ident($3) \
             FROM pg_trigger t WHERE t.tgrelid = format('pg_temp.%I', $1::text)::regclass \
             AND NOT t.tgisinternal",
            &[&PROBE, &d.table.schema, &d.table.name],
        )
        .await
        .map_err(Error::postgres)?;
    let text: String = get(&row, 0)?;
    let temp: String = get(&row, 1)?;
    let live_name: String = get(&row, 2)?;
    // The server prints its own temporary schema as `pg_temp` (older servers by its real name).
    let on = format!(" ON {live_name} ");
    let printed = text.replacen(&format!(" ON pg_temp.{PROBE} "), &on, 1).replacen(
        &format!(" ON {temp}.{PROBE} "),
        &on,
        1,
    );
    Ok(Some(Trigger::canonical_definition(&printed)))
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// The byte range of the table name after the statement's first top-level `ON`: a word of its
/// own, outside quotes, followed by a name of one or two parts (each bare or double-quoted).
fn table_span(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            q @ (b'\'' | b'"') => i = quoted_end(bytes, i, q),
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
                {
                    i += 1;
                }
                if text[start..i].eq_ignore_ascii_case("ON") {
                    return name_span(bytes, i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The span of a (possibly qualified) name starting after whitespace at `i`.
fn name_span(bytes: &[u8], mut i: usize) -> Option<(usize, usize)> {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    loop {
        match bytes.get(i)? {
            b'"' => i = quoted_end(bytes, i, b'"'),
            b if b.is_ascii_alphabetic() || *b == b'_' => {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
                {
                    i += 1;
                }
            }
            _ => return None,
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
        } else {
            return Some((start, i));
        }
    }
}

/// The end of a quoted run opened at `p`; a doubled quote is an escape.
fn quoted_end(bytes: &[u8], p: usize, quote: u8) -> usize {
    let mut i = p + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_after_on_is_found_outside_quotes() {
        let text = "CREATE TRIGGER \"on\" BEFORE UPDATE OF \"ON x\" ON public.\"my t\" FOR EACH ROW EXECUTE FUNCTION f()";
        let (s, e) = table_span(text).expect("a table");
        assert_eq!(&text[s..e], "public.\"my t\"");
        let text = "CREATE TRIGGER t AFTER INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION f()";
        let (s, e) = table_span(text).expect("a table");
        assert_eq!(&text[s..e], "jobs");
    }
}
