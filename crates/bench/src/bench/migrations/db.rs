//! Scratch databases on the local services, and the checks that a tool really applied the corpus.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use ptah_engine::{DatabaseUrl, Dialect, Session};
use ptah_testservices::{SecretUrl, TestServices, UP_COMMAND, unique_name};

use super::{
    Tool,
    corpus::{Expect, Migration},
};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The engines measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Engine {
    /// PostgreSQL 15 of `cargo xtask services`.
    Postgres,
    /// MariaDB 10.11 of `cargo xtask services`, standing in for MySQL.
    Mariadb,
}

impl Engine {
    /// The engine's dialect in ptah's terms.
    pub(super) fn dialect(self) -> Dialect {
        match self {
            Engine::Postgres => Dialect::Postgres,
            Engine::Mariadb => Dialect::Mysql,
        }
    }

    /// The server as reported in the table and the JSON.
    pub(super) fn label(self) -> &'static str {
        match self {
            Engine::Postgres => "postgresql 15",
            Engine::Mariadb => "mariadb 10.11",
        }
    }

    fn short(self) -> &'static str {
        match self {
            Engine::Postgres => "pg",
            Engine::Mariadb => "my",
        }
    }
}

/// A fresh database on one server, for one run of one tool.
pub(super) struct Scratch {
    /// Its name.
    pub(super) name: String,
    /// The `app` account's URL for it, as a user hands it to ptah.
    pub(super) url: SecretUrl,
    /// Host, port, user and password of the `app` account, decoded, for the peers' own formats.
    pub(super) host: String,
    /// The server's port.
    pub(super) port: u16,
    /// The `app` user.
    pub(super) user: String,
    /// Its password; never printed.
    pub(super) password: String,
    admin: DatabaseUrl,
    engine: Engine,
}

impl Scratch {
    /// Creates an empty database the `app` account owns (PostgreSQL) or may use fully (MariaDB).
    pub(super) async fn create(
        services: &TestServices,
        engine: Engine,
        tool: Tool,
    ) -> anyhow::Result<Scratch> {
        let name = unique_name(&format!("bench_mig_{}_{}", engine.short(), tool.short()));
        let server = match engine {
            Engine::Postgres => &services.postgres,
            Engine::Mariadb => &services.mysql,
        };
        let admin = DatabaseUrl::parse(server.admin_url.expose())?;
        let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await.with_context(|| {
            format!(
                "cannot reach {}; start the services with `{UP_COMMAND}`",
                engine.label()
            )
        })?;
        let sql = match engine {
            Engine::Postgres => vec![format!("CREATE DATABASE {name} OWNER app")],
            Engine::Mariadb => vec![
                format!("CREATE DATABASE {name} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"),
                format!("GRANT ALL ON {name}.* TO 'app'@'%'"),
            ],
        };
        for statement in sql {
            session.batch(&statement).await?;
        }
        session.close().await?;
        let url = server.url_for_database(&name);
        let parsed = url::Url::parse(url.expose()).context("the services' URL does not parse")?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        Ok(Scratch {
            host: parsed.host_str().unwrap_or("127.0.0.1").to_owned(),
            port: parsed.port().context("the services' URL has no port")?,
            user: decode(parsed.username()),
            password: decode(parsed.password().unwrap_or_default()),
            admin: DatabaseUrl::parse(server.admin_url_for_database(&name).expose())?,
            name,
            url,
            engine,
        })
    }

    /// Drops the database.
    pub(super) async fn drop(self) -> anyhow::Result<()> {
        let admin = match self.engine {
            Engine::Postgres => self.admin.with_database("postgres"),
            Engine::Mariadb => self.admin.with_database("mysql"),
        };
        let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
        let sql = match self.engine {
            Engine::Postgres => format!("DROP DATABASE {} WITH (FORCE)", self.name),
            Engine::Mariadb => format!("DROP DATABASE {}", self.name),
        };
        session.batch(&sql).await?;
        session.close().await?;
        Ok(())
    }

    /// Runs every statement of `migrations` on its own (autocommit) over one `app` connection;
    /// returns the seconds from connect to close.
    pub(super) async fn floor(&self, migrations: &[Migration]) -> anyhow::Result<f64> {
        let url = DatabaseUrl::parse(self.url.expose())?;
        let started = Instant::now();
        let mut session = Session::connect(&url, CONNECT_TIMEOUT).await?;
        for m in migrations {
            for statement in &m.statements {
                session
                    .batch(statement)
                    .await
                    .with_context(|| format!("floor: version {}: {statement}", m.version))?;
            }
        }
        session.close().await?;
        Ok(started.elapsed().as_secs_f64())
    }

    /// Fails unless `tool`'s history records all `migrations` as applied and the corpus's tables
    /// hold exactly what the generator expects.
    pub(super) async fn verify(
        &self,
        tool: Tool,
        migrations: usize,
        expect: Expect,
        tables: &[String],
    ) -> anyhow::Result<()> {
        let pg = self.engine == Engine::Postgres;
        let mut session = Session::connect(&self.admin, CONNECT_TIMEOUT).await?;
        let history = match tool {
            Tool::Floor => None,
            Tool::Ptah => Some("SELECT COUNT(*) FROM schema_migrations WHERE state = 'applied'"),
            // golang-migrate keeps one row: the version reached, and whether it is dirty.
            Tool::GolangMigrate => {
                Some("SELECT MAX(version) FROM schema_migrations WHERE NOT dirty HAVING COUNT(*) = 1")
            }
            Tool::Flyway => Some("SELECT COUNT(*) FROM flyway_schema_history WHERE success AND type = 'SQL'"),
        };
        let schema = if pg { "current_schema()" } else { "DATABASE()" };
        let like = "table_name LIKE 't\\_%'";
        let rows: Vec<String> = tables
            .iter()
            .map(|t| format!("SELECT COUNT(*) AS n, COALESCE(SUM(qty), 0) AS q FROM {t}"))
            .collect();
        let int = if pg { "BIGINT" } else { "SIGNED" };
        let queries = [
            // The floor keeps no history: its count is the corpus's own.
            (
                "history",
                history.map_or_else(|| format!("SELECT {migrations}"), str::to_owned),
            ),
            (
                "tables",
                format!(
                    "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = {schema} AND {like}"
                ),
            ),
            (
                "columns",
                format!(
                    "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = {schema} AND {like}"
                ),
            ),
            (
                "rows",
                format!(
                    "SELECT CAST(COALESCE(SUM(n), 0) AS {int}) FROM ({}) s",
                    rows.join(" UNION ALL ")
                ),
            ),
            (
                "qty sum",
                format!(
                    "SELECT CAST(COALESCE(SUM(q), 0) AS {int}) FROM ({}) s",
                    rows.join(" UNION ALL ")
                ),
            ),
        ];
        let want = [
            migrations as i64,
            expect.tables,
            expect.columns,
            expect.rows,
            expect.qty_sum,
        ];
        let mut problems = Vec::new();
        for ((what, sql), want) in queries.iter().zip(want) {
            let got = scalar(&mut session, sql)
                .await
                .with_context(|| format!("{}: cannot count the {what}", tool.label()))?;
            if got != Some(want) {
                problems.push(format!("{what}: {got:?}, expected {want}"));
            }
        }
        session.close().await?;
        if !problems.is_empty() {
            bail!(
                "{} on {} did not apply the corpus: {}",
                tool.label(),
                self.engine.label(),
                problems.join("; ")
            );
        }
        Ok(())
    }
}

/// The first column of the first row as an integer; `None` for no row or NULL.
async fn scalar(session: &mut Session, sql: &str) -> anyhow::Result<Option<i64>> {
    match session {
        Session::Postgres { client, .. } => {
            let row = client
                .query_opt(&format!("SELECT CAST(x AS BIGINT) FROM ({sql}) v(x)"), &[])
                .await?;
            Ok(row.map(|r| r.try_get::<_, Option<i64>>(0)).transpose()?.flatten())
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let value: Option<Option<i64>> = conn.query_first(sql).await?;
            Ok(value.flatten())
        }
    }
}
