//! The scratch databases `bench executor` measures on, and what its peers need besides them.

use ptah_engine::{DatabaseUrl, Dialect, Session};
use ptah_testservices::{SecretUrl, TestServices, unique_name};

use super::{CONNECT_TIMEOUT, Engine, peers};

/// What the peers need besides the measured database: their programs and a dev database.
pub(super) struct Peers<'a> {
    pub(super) tools: &'a peers::Tools,
    pub(super) dev: &'a mut Scratch,
    pub(super) services: &'a TestServices,
    pub(super) engine: Engine,
}

/// A scratch database on one server, dropped by [`Scratch::drop`].
pub(super) struct Scratch {
    pub(super) name: String,
    /// The URL as text, for the peers' processes.
    pub(super) secret: SecretUrl,
    pub(super) url: DatabaseUrl,
    pub(super) admin: DatabaseUrl,
    pub(super) dialect: Dialect,
}

impl Scratch {
    pub(super) async fn create(
        services: &TestServices,
        engine: Engine,
        label: &str,
    ) -> anyhow::Result<Scratch> {
        let name = unique_name(&format!("bench_{}_{label}", engine.short()));
        Self::create_named(services, engine, name).await
    }

    pub(super) async fn create_named(
        services: &TestServices,
        engine: Engine,
        name: String,
    ) -> anyhow::Result<Scratch> {
        let server = match engine {
            Engine::Postgres => &services.postgres,
            Engine::Mariadb => &services.mysql,
        };
        let admin = DatabaseUrl::parse(server.admin_url.expose())?;
        let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
        match engine {
            Engine::Postgres => {
                session
                    .batch(&format!("CREATE DATABASE {name} OWNER app"))
                    .await?
            }
            Engine::Mariadb => {
                session
                    .batch(&format!(
                        "CREATE DATABASE {name} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
                    ))
                    .await?;
                session
                    .batch(&format!("GRANT ALL ON {name}.* TO 'app'@'%'"))
                    .await?;
            }
        }
        session.close().await?;
        let secret = server.url_for_database(&name);
        let url = DatabaseUrl::parse(secret.expose())?;
        let admin = DatabaseUrl::parse(server.admin_url_for_database(&name).expose())?;
        Ok(Scratch {
            name,
            secret,
            url,
            admin,
            dialect: engine.dialect(),
        })
    }

    /// Drops the database and creates it again, empty: cheaper than dropping what is in it on a
    /// server whose lock table one `DROP SCHEMA … CASCADE` of 1,000 tables exceeds.
    pub(super) async fn reset(&mut self, services: &TestServices, engine: Engine) -> anyhow::Result<()> {
        let name = self.name.clone();
        self.drop_database().await?;
        *self = Self::create_named(services, engine, name).await?;
        Ok(())
    }

    pub(super) async fn drop(self) -> anyhow::Result<()> {
        self.drop_database().await
    }

    pub(super) async fn drop_database(&self) -> anyhow::Result<()> {
        let admin = match self.dialect {
            Dialect::Postgres => self.admin.with_database("postgres"),
            Dialect::Mysql => self.admin.with_database("mysql"),
        };
        let mut session = Session::connect(&admin, CONNECT_TIMEOUT).await?;
        let sql = match self.dialect {
            Dialect::Postgres => format!("DROP DATABASE {} WITH (FORCE)", self.name),
            Dialect::Mysql => format!("DROP DATABASE {}", self.name),
        };
        session.batch(&sql).await?;
        session.close().await?;
        Ok(())
    }
}
