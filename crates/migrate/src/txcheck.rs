//! Statements PostgreSQL refuses inside a transaction block.
//!
//! A file that runs in one transaction and holds such a statement can only fail, and on
//! PostgreSQL it fails after the statements before it ran and were rolled back, leaving a dirty
//! row. Finding it from the text before any SQL runs turns that into a refusal that names the line
//! and the header to add. MySQL/MariaDB have no such rule (DDL commits implicitly there), so the
//! check applies to PostgreSQL only.

/// A statement that cannot run in a transaction block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonTransactional {
    /// What it is, e.g. `CREATE INDEX CONCURRENTLY`.
    pub what: &'static str,
    /// True when only PostgreSQL has the statement (so a directory of unknown dialect can be judged).
    pub postgres_only: bool,
}

/// The first words of a statement, uppercased, skipping comments and punctuation.
fn words(sql: &str, n: usize) -> Vec<String> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() && out.len() < n {
        if b[i..].starts_with(b"--") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += b[i..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| p + 2);
        } else if b[i].is_ascii_alphanumeric() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(sql[start..i].to_ascii_uppercase());
        } else if b[i] == b'\'' || b[i] == b'"' || b[i] == b'$' {
            // A literal or name ends the head that matters.
            break;
        } else {
            i += 1;
        }
    }
    out
}

/// The reason `sql` cannot run in a PostgreSQL transaction block, if it cannot.
pub fn non_transactional(sql: &str) -> Option<NonTransactional> {
    let w = words(sql, 6);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    let pg = |what| {
        Some(NonTransactional {
            what,
            postgres_only: true,
        })
    };
    let shared = |what| {
        Some(NonTransactional {
            what,
            postgres_only: false,
        })
    };
    match w.as_slice() {
        ["CREATE", "INDEX", "CONCURRENTLY", ..] | ["CREATE", "UNIQUE", "INDEX", "CONCURRENTLY", ..] => {
            pg("CREATE INDEX CONCURRENTLY")
        }
        ["DROP", "INDEX", "CONCURRENTLY", ..] => pg("DROP INDEX CONCURRENTLY"),
        ["REINDEX", rest @ ..] if rest.contains(&"CONCURRENTLY") => pg("REINDEX CONCURRENTLY"),
        ["REINDEX", rest @ ..]
            if rest
                .iter()
                .any(|w| matches!(*w, "SCHEMA" | "DATABASE" | "SYSTEM")) =>
        {
            pg("REINDEX SCHEMA, DATABASE or SYSTEM")
        }
        ["VACUUM", ..] => pg("VACUUM"),
        ["ALTER", "SYSTEM", ..] => pg("ALTER SYSTEM"),
        ["CREATE", "DATABASE", ..] => shared("CREATE DATABASE"),
        ["DROP", "DATABASE", ..] => shared("DROP DATABASE"),
        ["CREATE", "TABLESPACE", ..] => shared("CREATE TABLESPACE"),
        ["DROP", "TABLESPACE", ..] => shared("DROP TABLESPACE"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_postgres_refuses_in_a_transaction() {
        for (sql, what) in [
            (
                "CREATE INDEX CONCURRENTLY i ON t (a)",
                "CREATE INDEX CONCURRENTLY",
            ),
            (
                "create unique index concurrently if not exists i on t (a)",
                "CREATE INDEX CONCURRENTLY",
            ),
            ("DROP INDEX /* x */ CONCURRENTLY i", "DROP INDEX CONCURRENTLY"),
            ("REINDEX (VERBOSE) TABLE CONCURRENTLY t", "REINDEX CONCURRENTLY"),
            ("REINDEX DATABASE app", "REINDEX SCHEMA, DATABASE or SYSTEM"),
            ("VACUUM (ANALYZE) t", "VACUUM"),
            ("ALTER SYSTEM SET work_mem = '8MB'", "ALTER SYSTEM"),
            ("CREATE DATABASE other", "CREATE DATABASE"),
        ] {
            assert_eq!(non_transactional(sql).map(|n| n.what), Some(what), "{sql}");
        }
        for sql in [
            "CREATE INDEX i ON t (a)",
            "REINDEX TABLE t",
            "CREATE TABLE concurrently (a int)",
            "SELECT 'VACUUM'",
            "COMMENT ON TABLE t IS 'CREATE INDEX CONCURRENTLY'",
            "ALTER TABLE system ADD COLUMN a int",
        ] {
            assert_eq!(non_transactional(sql), None, "{sql}");
        }
    }
}
