//! The table lock a PostgreSQL statement takes, named as the server names it (`pg_locks.mode`),
//! so a plan or a lint report can say what each statement does to the writers of a live table.
//!
//! The classification reads the statement as the linter does (the parser's form, each `ALTER
//! TABLE` operation by the text the parser writes back); an `ALTER TABLE` takes the strongest
//! lock any of its operations needs. The server is the reference: `tests/server_locks.rs` runs
//! each form in a transaction and reads `pg_locks`.

use ptah_engine::Dialect;
use serde::Serialize;
use sqlparser::ast::Statement;

use crate::statement;

/// A PostgreSQL table lock mode, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Lock {
    /// Reads only.
    AccessShareLock,
    /// `INSERT`, `UPDATE`, `DELETE`.
    RowExclusiveLock,
    /// `VALIDATE CONSTRAINT`, `CREATE INDEX CONCURRENTLY`: writes go on.
    ShareUpdateExclusiveLock,
    /// `CREATE INDEX`: reads go on, writes wait.
    ShareLock,
    /// `CREATE TRIGGER`, adding a foreign key (on both tables): writes wait.
    ShareRowExclusiveLock,
    /// Most of `ALTER TABLE`, `DROP`, `TRUNCATE`: reads and writes wait.
    AccessExclusiveLock,
}

impl Lock {
    /// Whether writers of the table wait for it.
    pub fn blocks_writes(self) -> bool {
        self >= Lock::ShareLock
    }
}

/// The lock `sql` takes on the table it changes, on PostgreSQL; `None` when the statement is not
/// one the classification knows (or the dialect is MySQL/MariaDB, whose DDL is judged by its
/// algorithm instead, `MY101`).
pub fn taken(sql: &str, dialect: Dialect) -> Option<Lock> {
    if dialect != Dialect::Postgres {
        return None;
    }
    let upper = sql.to_uppercase();
    let words: Vec<&str> = upper.split_whitespace().collect();
    match statement::parse(sql, dialect).as_deref() {
        Some([stmt]) => of_statement(stmt, &words),
        _ => of_words(&words),
    }
}

/// The table `sql` locks, as `(schema, table)` with quotes removed (`schema` empty when the
/// statement does not name one): the table an index, `ALTER TABLE`, trigger, `DROP TABLE` or
/// `TRUNCATE` is on. `None` for other statements.
pub fn table(sql: &str, dialect: Dialect) -> Option<(String, String)> {
    let name = match statement::parse(sql, dialect).as_deref() {
        Some([Statement::CreateIndex(create)]) => create.table_name.to_string(),
        Some([Statement::AlterTable(alter)]) => alter.name.to_string(),
        Some(
            [
                Statement::Drop {
                    object_type, names, ..
                },
            ],
        ) if object_type.to_string().eq_ignore_ascii_case("TABLE") && names.len() == 1 => {
            names[0].to_string()
        }
        _ => {
            let words: Vec<&str> = sql.split_whitespace().collect();
            let upper: Vec<String> = words.iter().map(|w| w.to_uppercase()).collect();
            match upper.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                ["TRUNCATE", "TABLE", ..] | ["ALTER", "TABLE", ..] => words.get(2)?.to_string(),
                ["TRUNCATE", ..] => words.get(1)?.to_string(),
                // A trigger's table, or an index's where the parser does not read the statement
                // (MySQL's `ALGORITHM=… LOCK=…` after the column list, `DROP INDEX i ON t`).
                ["CREATE", ..] | ["DROP", "INDEX", ..]
                    if upper.iter().any(|w| w == "TRIGGER" || w == "INDEX") =>
                {
                    let on = upper.iter().position(|w| w == "ON")?;
                    let word = words.get(on + 1)?;
                    word.split('(').next().unwrap_or(word).to_string()
                }
                _ => return None,
            }
        }
    };
    let name = name.trim_end_matches(';').replace(['"', '`'], "");
    Some(match name.rsplit_once('.') {
        Some((schema, table)) => (schema.to_owned(), table.to_owned()),
        None => (String::new(), name),
    })
}

fn of_words(words: &[&str]) -> Option<Lock> {
    match words {
        ["CREATE", "INDEX", "CONCURRENTLY", ..]
        | ["CREATE", "UNIQUE", "INDEX", "CONCURRENTLY", ..]
        | ["DROP", "INDEX", "CONCURRENTLY", ..] => Some(Lock::ShareUpdateExclusiveLock),
        ["CREATE", "INDEX", ..] | ["CREATE", "UNIQUE", "INDEX", ..] => Some(Lock::ShareLock),
        ["CREATE", "TRIGGER", ..] | ["CREATE", "OR", "REPLACE", "TRIGGER", ..] => {
            Some(Lock::ShareRowExclusiveLock)
        }
        ["DROP", "INDEX", ..] | ["DROP", "TABLE", ..] | ["TRUNCATE", ..] => Some(Lock::AccessExclusiveLock),
        ["INSERT", ..] | ["UPDATE", ..] | ["DELETE", ..] => Some(Lock::RowExclusiveLock),
        _ => None,
    }
}

fn of_statement(stmt: &Statement, words: &[&str]) -> Option<Lock> {
    match stmt {
        Statement::CreateIndex(create) if create.concurrently => Some(Lock::ShareUpdateExclusiveLock),
        Statement::CreateIndex(_) => Some(Lock::ShareLock),
        Statement::AlterTable(alter) => alter
            .operations
            .iter()
            .map(|op| of_operation(&op.to_string().to_uppercase()))
            .max(),
        _ => of_words(words),
    }
}

fn of_operation(op: &str) -> Lock {
    let starts = |p: &str| op.starts_with(p);
    if starts("VALIDATE CONSTRAINT") {
        Lock::ShareUpdateExclusiveLock
    } else if (starts("ADD CONSTRAINT") && (op.contains("FOREIGN KEY") || op.contains(" REFERENCES ")))
        || starts("ENABLE TRIGGER")
        || starts("DISABLE TRIGGER")
    {
        Lock::ShareRowExclusiveLock
    } else {
        // ADD/DROP COLUMN, ALTER COLUMN … TYPE/SET NOT NULL/SET DEFAULT, ADD CHECK/UNIQUE/PRIMARY
        // KEY, RENAME, SET LOGGED: PostgreSQL takes ACCESS EXCLUSIVE.
        Lock::AccessExclusiveLock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strongest_operation_decides_and_mysql_is_not_classified() {
        let pg = |sql| taken(sql, Dialect::Postgres);
        assert_eq!(pg("CREATE INDEX i ON t (a)"), Some(Lock::ShareLock));
        assert_eq!(
            pg("CREATE INDEX CONCURRENTLY i ON t (a)"),
            Some(Lock::ShareUpdateExclusiveLock)
        );
        assert_eq!(
            pg("DROP INDEX CONCURRENTLY i"),
            Some(Lock::ShareUpdateExclusiveLock)
        );
        assert_eq!(
            pg("ALTER TABLE t VALIDATE CONSTRAINT c, ADD COLUMN x int"),
            Some(Lock::AccessExclusiveLock)
        );
        assert_eq!(pg("SELECT 1"), None);
        let on = |sql| table(sql, Dialect::Postgres);
        let named = |s: &str, t: &str| Some((s.to_owned(), t.to_owned()));
        assert_eq!(
            on(r#"CREATE INDEX "i" ON "public"."orders" ("sku")"#),
            named("public", "orders")
        );
        assert_eq!(
            on(r#"ALTER TABLE "public"."orders" ADD COLUMN "x" int"#),
            named("public", "orders")
        );
        assert_eq!(on("DROP TABLE orders"), named("", "orders"));
        assert_eq!(on("TRUNCATE TABLE s.t"), named("s", "t"));
        assert_eq!(
            on("CREATE TRIGGER tr BEFORE INSERT ON s.t FOR EACH ROW EXECUTE FUNCTION f()"),
            named("s", "t")
        );
        assert_eq!(on("CREATE TABLE t (id int)"), None);
        assert_eq!(
            table("ALTER TABLE `shop`.`t` ADD COLUMN x int", Dialect::Mysql),
            named("shop", "t")
        );
        assert_eq!(taken("CREATE INDEX i ON t (a)", Dialect::Mysql), None);
        assert!(Lock::ShareLock.blocks_writes() && !Lock::ShareUpdateExclusiveLock.blocks_writes());
    }
}
