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
        assert_eq!(taken("CREATE INDEX i ON t (a)", Dialect::Mysql), None);
        assert!(Lock::ShareLock.blocks_writes() && !Lock::ShareUpdateExclusiveLock.blocks_writes());
    }
}
