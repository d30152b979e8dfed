//! Shared by the inspect and apply tests: a fresh database per test on the real servers.

#![allow(dead_code)]

use std::time::Duration;

use ptah_engine::{DatabaseUrl, Dialect, Session};
use ptah_testservices::{TestServices, unique_name};

/// Connection timeout for tests.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A database created for one test, owned by the `app` user.
pub struct Fresh {
    /// The `app` URL of the new database.
    pub url: DatabaseUrl,
    /// The database's name.
    pub name: String,
    dialect: Dialect,
}

impl Fresh {
    /// Creates an empty database on the `dialect` server.
    pub async fn new(dialect: Dialect, prefix: &str) -> Fresh {
        let services = TestServices::require();
        let name = unique_name(prefix);
        let mut admin = admin(dialect).await;
        let server = match dialect {
            Dialect::Postgres => {
                admin
                    .batch(&format!("CREATE DATABASE {name} OWNER app"))
                    .await
                    .expect("create database");
                &services.postgres
            }
            Dialect::Mysql => {
                admin
                    .batch(&format!(
                        "CREATE DATABASE {name} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
                    ))
                    .await
                    .expect("create database");
                admin
                    .batch(&format!("GRANT ALL ON {name}.* TO 'app'@'%'"))
                    .await
                    .expect("grant");
                &services.mysql
            }
        };
        admin.close().await.expect("close admin");
        let url = DatabaseUrl::parse(server.url_for_database(&name).expose()).expect("valid URL");
        Fresh { url, name, dialect }
    }

    /// A new `app` session on the database.
    pub async fn session(&self) -> Session {
        Session::connect(&self.url, TIMEOUT).await.expect("connect")
    }

    /// Runs SQL (one or several statements) as `app`.
    pub async fn run(&self, sql: &str) {
        let mut session = self.session().await;
        for statement in split(sql) {
            if let Err(err) = session.batch(&statement).await {
                panic!("{statement}: {err}");
            }
        }
        session.close().await.expect("close");
    }

    /// Drops the database.
    pub async fn drop(self) {
        let mut admin = admin(self.dialect).await;
        let sql = match self.dialect {
            Dialect::Postgres => format!("DROP DATABASE {} WITH (FORCE)", self.name),
            Dialect::Mysql => format!("DROP DATABASE {}", self.name),
        };
        admin.batch(&sql).await.expect("drop database");
        admin.close().await.expect("close admin");
    }
}

/// A superuser session on the server's maintenance database.
pub async fn admin(dialect: Dialect) -> Session {
    let services = TestServices::require();
    let url = match dialect {
        Dialect::Postgres => services.postgres.admin_url,
        Dialect::Mysql => services.mysql.admin_url,
    };
    let url = DatabaseUrl::parse(url.expose()).expect("valid admin URL");
    Session::connect(&url, TIMEOUT).await.expect("admin connect")
}

/// Splits a script on `;` at line ends (the fixtures never put one inside a literal there).
pub fn split(sql: &str) -> Vec<String> {
    sql.split(";\n")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches(';').to_owned())
        .collect()
}

/// A hand-written plan from `from` with `(sql, transactional)` statements.
pub fn plan(
    dialect: Dialect,
    from: ptah_fingerprint::Fingerprint,
    statements: &[(&str, bool)],
) -> ptah_schema::Plan {
    ptah_schema::Plan {
        format_version: ptah_schema::PLAN_FORMAT_VERSION,
        dialect,
        from_fingerprint: from,
        to_fingerprint: from,
        exclude: Vec::new(),
        destructive: false,
        statements: statements
            .iter()
            .map(|(sql, transactional)| ptah_schema::PlannedStatement {
                sql: (*sql).to_owned(),
                severity: ptah_schema::Severity::Safe,
                reason: "test".to_owned(),
                transactional: *transactional,
            })
            .collect(),
        locks: Vec::new(),
    }
}

/// The live fingerprint of the whole database, as apply computes it with the default options.
pub async fn fingerprint(session: &mut Session) -> ptah_fingerprint::Fingerprint {
    let live = ptah_engine::inspect(session, &ptah_engine::InspectScope::all())
        .await
        .expect("inspect");
    ptah_engine::live_fingerprint(&live, &[])
}

/// The table names of the database (PostgreSQL: `schema.name`), sorted.
pub async fn table_names(session: &mut Session) -> Vec<String> {
    let live = ptah_engine::inspect(session, &ptah_engine::InspectScope::all())
        .await
        .expect("inspect");
    live.tables.keys().map(ToString::to_string).collect()
}

/// The proptest configuration of a property test against the real servers: `default` cases
/// unless the `<prefix>_CASES` variable says otherwise, `<prefix>_SEED` (a u64) to replay a run,
/// and short shrinking, since every shrink step creates databases.
pub fn property_config(prefix: &str, default: u32, max_shrink_iters: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, RngSeed};
    let var = format!("{prefix}_CASES");
    let cases = match std::env::var(&var) {
        Err(_) => default,
        // Zero cases, or a value that does not parse, would pass without testing anything.
        Ok(v) => match v.parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => panic!("{var}={v:?}: give a positive number of cases"),
        },
    };
    let rng_seed = std::env::var(format!("{prefix}_SEED"))
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(RngSeed::Random, RngSeed::Fixed);
    Config {
        cases,
        rng_seed,
        max_shrink_iters,
        ..Config::default()
    }
}
