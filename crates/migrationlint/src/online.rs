//! What a MySQL/MariaDB DDL statement does to the writers of its table. InnoDB names no table
//! lock the way PostgreSQL does: the cost is the algorithm and the lock the statement asks for
//! (`ALGORITHM=INSTANT|INPLACE|COPY`, `LOCK=NONE|SHARED|EXCLUSIVE`), and without them the server
//! picks, which for many changes is a copy of the table during which writes wait. So the
//! classification reads those clauses, and a statement without them counts as blocking.

use serde::Serialize;

/// How a MySQL/MariaDB statement changes a live table, for its writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum OnlineDdl {
    /// `ALGORITHM=INSTANT`: a metadata change; writes wait only for the brief metadata lock.
    Instant,
    /// `ALGORITHM=INPLACE, LOCK=NONE` (or `LOCK=NONE` alone): writes go on while it works.
    InplaceLockNone,
    /// No algorithm or lock asked for: the server picks, and may copy the table while writes
    /// wait (adding a foreign key, changing a column's type).
    ServerDefault,
    /// `ALGORITHM=COPY`, `LOCK=SHARED` or `LOCK=EXCLUSIVE`: writes wait for the whole statement.
    Blocking,
    /// `DROP TABLE`, `TRUNCATE`: an exclusive metadata lock.
    Exclusive,
}

impl OnlineDdl {
    /// Whether the table's writers wait while the statement runs.
    pub fn blocks_writes(self) -> bool {
        !matches!(self, OnlineDdl::Instant | OnlineDdl::InplaceLockNone)
    }
}

/// How `sql` changes its table on MySQL/MariaDB: `ALTER TABLE`, `CREATE … INDEX`, `DROP INDEX`,
/// `DROP TABLE` and `TRUNCATE`; `None` for any other statement.
pub fn taken(sql: &str) -> Option<OnlineDdl> {
    let upper = unquoted(sql).to_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    let changes_table = match words.as_slice() {
        ["DROP", "TABLE", ..] | ["TRUNCATE", ..] => return Some(OnlineDdl::Exclusive),
        ["ALTER", "TABLE", ..] | ["DROP", "INDEX", ..] => true,
        ["CREATE", rest @ ..] => rest.iter().take(3).any(|w| *w == "INDEX"),
        _ => false,
    };
    if !changes_table {
        return None;
    }
    let (algorithm, lock) = (clause(&words, "ALGORITHM"), clause(&words, "LOCK"));
    Some(match (algorithm, lock) {
        (Some("COPY"), _) | (_, Some("SHARED" | "EXCLUSIVE")) => OnlineDdl::Blocking,
        (Some("INSTANT"), _) => OnlineDdl::Instant,
        (_, Some("NONE")) => OnlineDdl::InplaceLockNone,
        _ => OnlineDdl::ServerDefault,
    })
}

/// The value of `NAME=value` or `NAME = value` among `words`.
fn clause<'a>(words: &[&'a str], name: &str) -> Option<&'a str> {
    words.iter().enumerate().find_map(|(i, w)| {
        let rest = w.strip_prefix(name)?;
        match rest.strip_prefix('=') {
            Some("") => words.get(i + 1).copied(),
            Some(value) => Some(value),
            None if rest.is_empty() => match words.get(i + 1) {
                Some(&"=") => words.get(i + 2).copied(),
                Some(next) => next.strip_prefix('='),
                None => None,
            },
            None => None,
        }
    })
}

/// `sql` with its string literals and quoted identifiers blanked, so a default value or a name
/// that spells `LOCK=NONE` is not read as the clause.
fn unquoted(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == '\\' && q != '`' => {
                chars.next();
            }
            Some(q) if c == q => {
                if chars.peek() == Some(&q) {
                    chars.next();
                } else {
                    quote = None;
                    out.push(' ');
                }
            }
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => {
                quote = Some(c);
                out.push(' ');
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clauses_decide_and_a_statement_without_them_blocks() {
        assert_eq!(
            taken("ALTER TABLE `t` ADD COLUMN `x` int, ALGORITHM=INSTANT"),
            Some(OnlineDdl::Instant)
        );
        assert_eq!(
            taken("CREATE INDEX `i` ON `t` (`a`) ALGORITHM=INPLACE LOCK=NONE"),
            Some(OnlineDdl::InplaceLockNone)
        );
        assert_eq!(
            taken("ALTER TABLE `t` DROP INDEX `i`, ALGORITHM = INPLACE, LOCK = NONE"),
            Some(OnlineDdl::InplaceLockNone)
        );
        assert_eq!(
            taken("ALTER TABLE `t` ADD CONSTRAINT `f` FOREIGN KEY (`a`) REFERENCES `p` (`id`)"),
            Some(OnlineDdl::ServerDefault)
        );
        assert_eq!(
            taken("CREATE FULLTEXT INDEX `i` ON `t` (`a`)"),
            Some(OnlineDdl::ServerDefault)
        );
        assert_eq!(
            taken("ALTER TABLE t MODIFY a bigint, ALGORITHM=INPLACE, LOCK=SHARED"),
            Some(OnlineDdl::Blocking)
        );
        assert_eq!(
            taken("ALTER TABLE t FORCE, ALGORITHM=COPY"),
            Some(OnlineDdl::Blocking)
        );
        assert_eq!(taken("DROP TABLE `t`"), Some(OnlineDdl::Exclusive));
        assert_eq!(taken("TRUNCATE TABLE t"), Some(OnlineDdl::Exclusive));
        assert_eq!(taken("CREATE TABLE t (a int)"), None);
        assert_eq!(taken("INSERT INTO t VALUES ('ALGORITHM=INSTANT')"), None);
        assert!(OnlineDdl::ServerDefault.blocks_writes() && !OnlineDdl::Instant.blocks_writes());
    }

    #[test]
    fn a_quoted_default_or_name_is_not_a_clause() {
        assert_eq!(
            taken("ALTER TABLE t ADD COLUMN note varchar(20) DEFAULT 'LOCK=NONE'"),
            Some(OnlineDdl::ServerDefault)
        );
        assert_eq!(
            taken("ALTER TABLE `ALGORITHM=INSTANT` ADD COLUMN c int DEFAULT 'it''s'"),
            Some(OnlineDdl::ServerDefault)
        );
        assert_eq!(
            taken("ALTER TABLE t ADD COLUMN c varchar(9) DEFAULT 'a\\'b', ALGORITHM=INSTANT"),
            Some(OnlineDdl::Instant)
        );
    }
}
