//! A plan's statements that cannot run in a transaction (PostgreSQL `CONCURRENTLY`, issue 37),
//! run one by one after the plan's transaction: a lock wait that times out is tried again a
//! bounded number of times, and before each build the invalid index an interrupted
//! `CREATE INDEX CONCURRENTLY` leaves behind (which inspection never reads as the index) is
//! dropped, so a retried build, in this Apply or the next, never fails on its own leftover.

use std::time::Duration;

use tokio_postgres::{Client, error::SqlState};

/// How many times one statement is run when its lock wait times out.
pub(crate) const ATTEMPTS: u32 = 3;

/// The pause before the second attempt; it grows with each attempt.
const PAUSE: Duration = Duration::from_millis(500);

/// Runs one non-transactional statement.
pub(crate) async fn run(client: &Client, sql: &str) -> Result<(), tokio_postgres::Error> {
    let index = built_index(sql);
    let mut attempt = 1;
    loop {
        if let Some(index) = &index {
            drop_invalid(client, index).await?;
        }
        match client.batch_execute(sql).await {
            Ok(()) => return Ok(()),
            Err(e) if attempt < ATTEMPTS && e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => {
                tokio::time::sleep(PAUSE * attempt).await;
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Drops `index` (`"schema"."name"` as the statement wrote it) when it exists and is invalid.
/// Returns whether it did.
pub(crate) async fn drop_invalid(client: &Client, index: &str) -> Result<bool, tokio_postgres::Error> {
    let row = client
        .query_opt(
            "SELECT 1 FROM pg_index WHERE indexrelid = to_regclass($1) AND NOT indisvalid",
            &[&index],
        )
        .await?;
    if row.is_none() {
        return Ok(false);
    }
    client
        .batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {index}"))
        .await?;
    Ok(true)
}

/// The index a `CREATE [UNIQUE] INDEX CONCURRENTLY "name" ON "schema"."table"` statement builds,
/// as `"schema"."name"`; `None` for any other statement, or names not written quoted (a plan
/// edited by hand), whose leftovers are then not looked for.
pub(crate) fn built_index(sql: &str) -> Option<String> {
    let rest = sql
        .strip_prefix("CREATE INDEX CONCURRENTLY ")
        .or_else(|| sql.strip_prefix("CREATE UNIQUE INDEX CONCURRENTLY "))?;
    let (name, rest) = quoted(rest)?;
    let rest = rest.strip_prefix(" ON ")?;
    let rest = rest.strip_prefix("ONLY ").unwrap_or(rest);
    let (first, rest) = quoted(rest)?;
    match rest.strip_prefix('.').and_then(quoted) {
        // The index lives in its table's schema.
        Some(_) => Some(format!("{first}.{name}")),
        None => Some(name.to_owned()),
    }
}

/// A leading double-quoted identifier (with `""` inside) and what follows it.
fn quoted(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix('"')?;
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '"' {
            if chars.peek().is_some_and(|(_, next)| *next == '"') {
                chars.next();
                continue;
            }
            let end = i + 2;
            return Some((&text[..end], &text[end..]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_index_is_named_as_the_statement_quotes_it() {
        assert_eq!(
            built_index(r#"CREATE INDEX CONCURRENTLY "ix" ON "app"."orders" ("sku")"#).as_deref(),
            Some(r#""app"."ix""#)
        );
        assert_eq!(
            built_index(r#"CREATE UNIQUE INDEX CONCURRENTLY "a""b" ON "s.x"."t" ("c")"#).as_deref(),
            Some(r#""s.x"."a""b""#)
        );
        assert_eq!(
            built_index(r#"CREATE INDEX CONCURRENTLY "ix" ON "orders" ("sku")"#).as_deref(),
            Some(r#""ix""#)
        );
        for other in [
            r#"CREATE INDEX "ix" ON "app"."orders" ("sku")"#,
            "CREATE INDEX CONCURRENTLY ix ON app.orders (sku)",
            r#"CREATE INDEX CONCURRENTLY "unterminated ON "app"."orders""#,
            r#"DROP INDEX CONCURRENTLY "app"."ix""#,
        ] {
            assert_eq!(built_index(other), None, "{other}");
        }
    }
}
