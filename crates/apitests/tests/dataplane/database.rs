//! The database as its own client sees it: the tables of the application database, and an
//! outside session holding the advisory lock the executor's Apply takes (name and key from
//! `ptah_engine`, the executor's own contract).

use mysql_async::prelude::Queryable;
use ptah_engine::{LOCK_NAME, postgres_lock_key};

use crate::lifecycle::app::Engine;

/// The base tables of the database `url` names, sorted.
pub async fn tables(engine: Engine, url: &str) -> Vec<String> {
    let mut out: Vec<String> = match engine {
        Engine::Postgres => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .expect("connect to PostgreSQL");
            tokio::spawn(conn);
            client
                .query(
                    "SELECT table_name::text FROM information_schema.tables \
                     WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
                    &[],
                )
                .await
                .expect("list tables")
                .iter()
                .map(|r| r.get(0))
                .collect()
        }
        Engine::Mariadb => {
            let mut conn = mysql_async::Conn::from_url(url)
                .await
                .expect("connect to MariaDB");
            conn.query(
                "SELECT table_name FROM information_schema.tables \
                 WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
            )
            .await
            .expect("list tables")
        }
    };
    out.sort();
    out
}

/// `Ok` when the database holds exactly `want` tables, else why not.
pub async fn expect_tables(engine: Engine, url: &str, want: &[&str]) -> Result<(), String> {
    let have = tables(engine, url).await;
    if have.iter().map(String::as_str).eq(want.iter().copied()) {
        Ok(())
    } else {
        Err(format!("tables {have:?}, want {want:?}"))
    }
}

/// An outside session holding the Apply's advisory lock until dropped or released.
pub enum LockHolder {
    /// A PostgreSQL session (advisory locks are per database: it connects to the app database).
    Postgres(tokio_postgres::Client),
    /// A MariaDB session (`GET_LOCK` names are server-wide).
    Mariadb(mysql_async::Conn),
}

impl LockHolder {
    /// Takes the lock in a session of its own on the database `url` names.
    pub async fn take(engine: Engine, url: &str) -> LockHolder {
        match engine {
            Engine::Postgres => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .expect("connect to PostgreSQL");
                tokio::spawn(conn);
                let got: bool = client
                    .query_one("SELECT pg_try_advisory_lock($1)", &[&postgres_lock_key()])
                    .await
                    .expect("pg_try_advisory_lock")
                    .get(0);
                assert!(got, "the advisory lock is free when the scenario takes it");
                LockHolder::Postgres(client)
            }
            Engine::Mariadb => {
                let mut conn = mysql_async::Conn::from_url(url)
                    .await
                    .expect("connect to MariaDB");
                let got: Option<i64> = conn
                    .exec_first("SELECT GET_LOCK(?, 10)", (LOCK_NAME,))
                    .await
                    .expect("GET_LOCK")
                    .flatten();
                assert_eq!(got, Some(1), "the named lock is free when the scenario takes it");
                LockHolder::Mariadb(conn)
            }
        }
    }

    /// This session's server id (backend pid / connection id).
    pub async fn session_id(&mut self) -> i64 {
        match self {
            LockHolder::Postgres(c) => i64::from(
                c.query_one("SELECT pg_backend_pid()", &[])
                    .await
                    .expect("pg_backend_pid")
                    .get::<_, i32>(0),
            ),
            LockHolder::Mariadb(c) => c
                .query_first::<i64, _>("SELECT CONNECTION_ID()")
                .await
                .expect("CONNECTION_ID")
                .expect("a connection id"),
        }
    }

    /// The server's own answer to "who holds the lock": the granted advisory lock's backend in
    /// `pg_locks`, or `IS_USED_LOCK`'s connection id.
    pub async fn owner(&mut self) -> Option<i64> {
        match self {
            LockHolder::Postgres(c) => {
                // A bigint key is stored as (classid, objid) = (high, low) 32 bits, objsubid 1.
                let key = postgres_lock_key();
                let rows = c
                    .query(
                        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted \
                         AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1 \
                         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                        &[&(key >> 32), &(key & 0xffff_ffff)],
                    )
                    .await
                    .expect("read pg_locks");
                rows.first().map(|r| i64::from(r.get::<_, i32>(0)))
            }
            LockHolder::Mariadb(c) => c
                .exec_first::<Option<i64>, _, _>("SELECT IS_USED_LOCK(?)", (LOCK_NAME,))
                .await
                .expect("IS_USED_LOCK")
                .flatten(),
        }
    }

    /// How many other sessions are connected to this session's database (PostgreSQL) or server
    /// (MariaDB, where the lock is server-wide): the Apply's session, once it waits on the lock.
    pub async fn other_sessions(&mut self) -> i64 {
        match self {
            LockHolder::Postgres(c) => c
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity \
                     WHERE datname = current_database() AND pid <> pg_backend_pid()",
                    &[],
                )
                .await
                .expect("read pg_stat_activity")
                .get(0),
            LockHolder::Mariadb(c) => c
                .query_first::<i64, _>(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                     WHERE db = DATABASE() AND id <> CONNECTION_ID()",
                )
                .await
                .expect("read the process list")
                .unwrap_or(0),
        }
    }

    /// Releases the lock and closes the session.
    pub async fn release(self) {
        match self {
            LockHolder::Postgres(c) => {
                c.query_one("SELECT pg_advisory_unlock($1)", &[&postgres_lock_key()])
                    .await
                    .expect("pg_advisory_unlock");
            }
            LockHolder::Mariadb(mut c) => {
                c.exec_drop("SELECT RELEASE_LOCK(?)", (LOCK_NAME,))
                    .await
                    .expect("RELEASE_LOCK");
                c.disconnect().await.expect("disconnect");
            }
        }
    }
}

/// An outside session holding a table against DDL: a long statement for the Apply to wait in.
pub enum TableLock {
    /// `LOCK TABLE items IN ACCESS SHARE MODE` in an open transaction: the weakest lock, which
    /// still holds off the `ACCESS EXCLUSIVE` an `ALTER TABLE` needs, while the executor's
    /// catalog reads (which take `ACCESS SHARE` on the table) go through.
    Postgres(tokio_postgres::Client),
    /// `LOCK TABLES items WRITE`.
    Mariadb(mysql_async::Conn),
}

impl TableLock {
    /// Locks `table` in a session of its own on the database `url` names.
    pub async fn take(engine: Engine, url: &str, table: &str) -> TableLock {
        match engine {
            Engine::Postgres => {
                let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .expect("connect to PostgreSQL");
                tokio::spawn(conn);
                client
                    .batch_execute(&format!("BEGIN; LOCK TABLE {table} IN ACCESS SHARE MODE"))
                    .await
                    .expect("lock the table");
                TableLock::Postgres(client)
            }
            Engine::Mariadb => {
                let mut conn = mysql_async::Conn::from_url(url)
                    .await
                    .expect("connect to MariaDB");
                conn.query_drop(format!("LOCK TABLES {table} WRITE"))
                    .await
                    .expect("lock the table");
                TableLock::Mariadb(conn)
            }
        }
    }

    /// Sessions of the database waiting for a table lock in an `ALTER TABLE` (on PostgreSQL: for
    /// the `ACCESS EXCLUSIVE` lock one needs): the Apply's DDL.
    pub async fn ddl_waiting(&mut self) -> i64 {
        match self {
            // `pg_locks`, not `pg_stat_activity`: this session is inside the transaction that
            // holds the lock, and PostgreSQL serves `pg_stat_activity` from a snapshot taken once
            // per transaction, so the Apply's wait never showed there (the DDL then ran into its
            // lock timeout while the test waited). `pg_locks` is read afresh on every call.
            TableLock::Postgres(c) => c
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'relation' AND NOT granted \
                     AND mode = 'AccessExclusiveLock' \
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                    &[],
                )
                .await
                .expect("read pg_locks")
                .get(0),
            TableLock::Mariadb(c) => c
                .query_first::<i64, _>(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE db = DATABASE() \
                     AND state LIKE '%metadata lock%' AND info LIKE '%ALTER TABLE%'",
                )
                .await
                .expect("read the process list")
                .unwrap_or(0),
        }
    }

    /// Ends the lock (rolls the transaction back / unlocks).
    pub async fn release(self) {
        match self {
            TableLock::Postgres(c) => c.batch_execute("ROLLBACK").await.expect("unlock"),
            TableLock::Mariadb(mut c) => {
                c.query_drop("UNLOCK TABLES").await.expect("unlock");
                c.disconnect().await.expect("disconnect");
            }
        }
    }
}

/// The columns of `table`, sorted.
pub async fn columns(engine: Engine, url: &str, table: &str) -> Vec<String> {
    let mut out: Vec<String> = match engine {
        Engine::Postgres => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .expect("connect to PostgreSQL");
            tokio::spawn(conn);
            client
                .query(
                    "SELECT column_name::text FROM information_schema.columns \
                     WHERE table_schema = 'public' AND table_name = $1",
                    &[&table],
                )
                .await
                .expect("list columns")
                .iter()
                .map(|r| r.get(0))
                .collect()
        }
        Engine::Mariadb => {
            let mut conn = mysql_async::Conn::from_url(url)
                .await
                .expect("connect to MariaDB");
            conn.exec(
                "SELECT column_name FROM information_schema.columns \
                 WHERE table_schema = DATABASE() AND table_name = ?",
                (table,),
            )
            .await
            .expect("list columns")
        }
    };
    out.sort();
    out
}
