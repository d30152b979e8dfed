//! MySQL/MariaDB statements planned with an online algorithm (issue 37): a column added
//! `ALGORITHM=INSTANT`, an index built or dropped `ALGORITHM=INPLACE, LOCK=NONE`. The server
//! says up front when it cannot keep that promise (for instance a table with a FULLTEXT index),
//! before it does any work. Then the statement is tried in the next form that keeps writes going
//! (`INSTANT` → `INPLACE, LOCK=NONE`), and in the server's default form, which may copy the table
//! and block writes, only when the Apply allows it (`--allow-table-copy`); otherwise it fails
//! saying so.

use ptah_schema::render::{ONLINE_INDEX, ONLINE_INPLACE, ONLINE_INSTANT};

/// ER_ALTER_OPERATION_NOT_SUPPORTED and ER_ALTER_OPERATION_NOT_SUPPORTED_REASON: the requested
/// algorithm or lock level is not possible for this change.
const REFUSED: [u16; 2] = [1845, 1846];

/// What to run after the server refused `sql`'s online form.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fallback {
    /// The next form to try.
    Next(String),
    /// Only a form that may block writes is left, and the Apply does not allow it.
    CopyNotAllowed,
    /// The statement has no online form to fall back from.
    None,
}

/// The form to try after the server refused `sql` with `code`.
pub(crate) fn fallback(sql: &str, code: u16, allow_copy: bool) -> Fallback {
    if !REFUSED.contains(&code) {
        return Fallback::None;
    }
    if let Some(base) = sql.strip_suffix(ONLINE_INSTANT) {
        return Fallback::Next(format!("{base}{ONLINE_INPLACE}"));
    }
    let base = sql
        .strip_suffix(ONLINE_INPLACE)
        .or_else(|| sql.strip_suffix(ONLINE_INDEX));
    match (base, allow_copy) {
        (Some(base), true) => Fallback::Next(base.to_owned()),
        (Some(_), false) => Fallback::CopyNotAllowed,
        (None, _) => Fallback::None,
    }
}

/// Runs one statement, falling back as [`fallback`] says; the error is the server's message.
pub(crate) async fn run(conn: &mut mysql_async::Conn, sql: &str, allow_copy: bool) -> Result<(), String> {
    use mysql_async::prelude::Queryable;
    let mut sql = sql.to_owned();
    loop {
        let err = match conn.query_drop(sql.as_str()).await {
            Ok(()) => return Ok(()),
            Err(err) => err,
        };
        let code = match &err {
            mysql_async::Error::Server(e) => e.code,
            _ => 0,
        };
        match fallback(&sql, code, allow_copy) {
            Fallback::Next(next) => sql = next,
            Fallback::CopyNotAllowed => {
                return Err(format!(
                    "{err}; the server cannot make this change without blocking writes \
                     (ALGORITHM=COPY or a lock), which this Apply does not allow (--allow-table-copy)"
                ));
            }
            Fallback::None => return Err(err.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instant_falls_back_in_place_then_to_a_copy_only_when_allowed() {
        let instant = "ALTER TABLE `t` ADD COLUMN `a` int NULL, ALGORITHM=INSTANT";
        let inplace = "ALTER TABLE `t` ADD COLUMN `a` int NULL, ALGORITHM=INPLACE, LOCK=NONE";
        assert_eq!(fallback(instant, 1845, false), Fallback::Next(inplace.to_owned()));
        assert_eq!(fallback(inplace, 1846, false), Fallback::CopyNotAllowed);
        assert_eq!(
            fallback(inplace, 1846, true),
            Fallback::Next("ALTER TABLE `t` ADD COLUMN `a` int NULL".to_owned())
        );
        let index = "CREATE INDEX `i` ON `t` (`a`) ALGORITHM=INPLACE LOCK=NONE";
        assert_eq!(
            fallback(index, 1846, true),
            Fallback::Next("CREATE INDEX `i` ON `t` (`a`)".to_owned())
        );
        // Another error, or a statement without an online form, is the error.
        assert_eq!(fallback(instant, 1062, true), Fallback::None);
        assert_eq!(
            fallback("ALTER TABLE `t` MODIFY COLUMN `a` bigint", 1846, true),
            Fallback::None
        );
    }
}
