//! Shared helpers for the database tests: a fresh database per test, a scratch migration directory.

#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use ptah_engine::{DatabaseUrl, Dialect, Session};
use ptah_migrate::{Directory, Target};
use ptah_testservices::{TestServices, unique_name};

/// MariaDB's `GET_LOCK` is server-wide: the MariaDB scenarios of one test binary take turns.
pub static MYSQL_TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A database created for one test, dropped by [`Db::drop_database`].
pub struct Db {
    /// The dialect.
    pub dialect: Dialect,
    /// The `app` user's URL for the fresh database.
    pub url: DatabaseUrl,
    name: String,
    admin: DatabaseUrl,
}

impl Db {
    /// Creates a fresh database owned by (or granted to) the `app` user.
    pub async fn fresh(dialect: Dialect) -> Db {
        let services = TestServices::require();
        let server = match dialect {
            Dialect::Postgres => &services.postgres,
            Dialect::Mysql => &services.mysql,
        };
        let name = unique_name("mig");
        let admin = DatabaseUrl::parse(server.admin_url.expose()).expect("admin url");
        let mut session = Session::connect(&admin, Duration::from_secs(10))
            .await
            .expect("admin connect");
        let create = match dialect {
            Dialect::Postgres => format!("CREATE DATABASE {name} OWNER app"),
            Dialect::Mysql => format!("CREATE DATABASE {name}; GRANT ALL ON {name}.* TO 'app'@'%'"),
        };
        for statement in create.split("; ") {
            session.batch(statement).await.expect("create database");
        }
        session.close().await.expect("close admin");
        let url = DatabaseUrl::parse(server.url_for_database(&name).expose()).expect("app url");
        Db {
            dialect,
            url,
            name,
            admin,
        }
    }

    /// The target for the library calls.
    pub fn target(&self) -> Target {
        Target {
            url: self.url.clone(),
            connect_timeout: Duration::from_secs(10),
        }
    }

    /// A session as the `app` user.
    pub async fn session(&self) -> Session {
        Session::connect(&self.url, Duration::from_secs(10))
            .await
            .expect("connect")
    }

    /// Runs statements as the `app` user.
    pub async fn exec(&self, sql: &str) {
        let mut s = self.session().await;
        s.batch(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
        s.close().await.expect("close");
    }

    /// The first column of the first row, as an integer.
    pub async fn count(&self, sql: &str) -> i64 {
        match self.session().await {
            Session::Postgres { client, .. } => {
                let row = client
                    .query_one(sql, &[])
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                row.try_get::<_, i64>(0).expect("bigint")
            }
            Session::MySql(mut conn) => {
                use mysql_async::prelude::Queryable;
                let n: Option<i64> = conn
                    .query_first(sql)
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                conn.disconnect().await.expect("disconnect");
                n.expect("one row")
            }
        }
    }

    /// True when the table exists.
    pub async fn has_table(&self, table: &str) -> bool {
        let sql = match self.dialect {
            Dialect::Postgres => {
                format!(
                    "SELECT count(*) FROM information_schema.tables WHERE table_catalog = current_database() AND table_name = '{table}'"
                )
            }
            Dialect::Mysql => format!(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{table}'"
            ),
        };
        self.count(&sql).await > 0
    }

    /// Drops the database (best effort at the end of a passing test).
    pub async fn drop_database(self) {
        let mut session = Session::connect(&self.admin, Duration::from_secs(10))
            .await
            .expect("admin connect");
        let sql = match self.dialect {
            Dialect::Postgres => format!("DROP DATABASE {} WITH (FORCE)", self.name),
            Dialect::Mysql => format!("DROP DATABASE {}", self.name),
        };
        session.batch(&sql).await.expect("drop database");
        session.close().await.expect("close");
    }
}

/// A scratch migration directory under the system temp dir, removed on drop.
pub struct Dir {
    /// Its path.
    pub path: PathBuf,
}

impl Dir {
    /// An empty directory.
    pub fn new() -> Dir {
        let path = std::env::temp_dir().join(unique_name("ptah-migrations"));
        std::fs::create_dir_all(&path).expect("mkdir");
        Dir { path }
    }

    /// Writes the up and down files of one migration.
    pub fn add(&self, version: i64, description: &str, up: &str) -> &Dir {
        self.write(&format!("{version:010}_{description}.up.sql"), up);
        self.write(
            &format!("{version:010}_{description}.down.sql"),
            "-- no rollback\n",
        );
        self
    }

    /// Writes one file (relative path).
    pub fn write(&self, relative: &str, content: &str) {
        let path = self.path.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    /// Removes both files of a migration.
    pub fn remove(&self, version: i64, description: &str) {
        for dir in ["up", "down"] {
            std::fs::remove_file(self.path.join(format!("{version:010}_{description}.{dir}.sql")))
                .expect("rm");
        }
    }

    /// Reads it.
    pub fn read(&self) -> Directory {
        Directory::read(&self.path).expect("read directory")
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
