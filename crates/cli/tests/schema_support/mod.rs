//! Shared by the schema tests: a fresh database per case on the real servers, and `ptah` runs.

#![allow(dead_code)]

use std::{path::Path, process::Command, time::Duration};

use ptah_engine::{ApplyOptions, DatabaseUrl, Dialect, InspectScope, Session, apply, inspect};
use ptah_schema::{Plan, PlanOptions, Schema};
use ptah_testservices::{TestServices, unique_name};
use serde_json::Value;

/// Connection timeout for tests.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// A database created for one test, owned by the `app` user.
pub struct Fresh {
    /// The `app` URL of the new database.
    pub url: DatabaseUrl,
    /// The same URL as text, with the password (for `PTAH_DB_URL`).
    pub url_text: String,
    /// The password, to check it never shows.
    pub password: String,
    name: String,
    dialect: Dialect,
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

impl Fresh {
    /// Creates an empty database on the `dialect` server.
    pub async fn new(dialect: Dialect, prefix: &str) -> Fresh {
        let services = TestServices::require();
        let name = unique_name(prefix);
        let mut admin = admin(dialect).await;
        let server = match dialect {
            Dialect::Postgres => {
                let sql = format!("CREATE DATABASE {name} OWNER app");
                admin.batch(&sql).await.expect("create database");
                &services.postgres
            }
            Dialect::Mysql => {
                let sql = format!(
                    "CREATE DATABASE {name} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
                );
                admin.batch(&sql).await.expect("create database");
                let grant = format!("GRANT ALL ON {name}.* TO 'app'@'%'");
                admin.batch(&grant).await.expect("grant");
                &services.mysql
            }
        };
        admin.close().await.expect("close admin");
        let url_text = server.url_for_database(&name).expose().to_owned();
        let url = DatabaseUrl::parse(&url_text).expect("valid URL");
        let password = url_text
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('@').next())
            .and_then(|creds| creds.split(':').nth(1))
            .unwrap_or_default()
            .to_owned();
        Fresh {
            url,
            url_text,
            password,
            name,
            dialect,
        }
    }

    /// A new `app` session on the database.
    pub async fn session(&self) -> Session {
        Session::connect(&self.url, TIMEOUT).await.expect("connect")
    }

    /// Runs statements separated by `;` at line ends as `app`.
    pub async fn run(&self, sql: &str) -> Result<(), String> {
        let mut session = self.session().await;
        for statement in sql.split(";\n").map(str::trim).filter(|s| !s.is_empty()) {
            let statement = statement.trim_end_matches(';');
            session
                .batch(statement)
                .await
                .map_err(|e| format!("{statement}: {e}"))?;
        }
        session.close().await.map_err(|e| e.to_string())
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

/// What one `ptah` run produced.
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Stdout parsed as JSON (`Null` when it is not JSON).
    pub json: Value,
    /// Stdout as text.
    pub stdout: String,
    /// Stderr as text.
    pub stderr: String,
}

/// Runs `ptah <args>` with `PTAH_DB_URL=url`; asserts `secret` (when not empty) shows nowhere.
pub fn ptah(url: &str, secret: &str, cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_ptah"))
        .args(args)
        .current_dir(cwd)
        .env("PTAH_DB_URL", url)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !secret.is_empty() {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "the password leaked from ptah {args:?}:\n{stdout}\n{stderr}"
        );
    }
    Run {
        code: out.status.code().expect("exit code"),
        json: serde_json::from_str(&stdout).unwrap_or(Value::Null),
        stdout,
        stderr,
    }
}

/// A plan's statements, one per line with their severity, for failure messages.
pub fn listing(plan: &Plan) -> String {
    plan.statements
        .iter()
        .map(|s| format!("\n    [{:?}] {}", s.severity, s.sql))
        .collect()
}

/// The plan from `live` to `desired` as `ptah schema plan` computes it: hand-written parts are
/// first brought to the server's spelling ([`ptah_engine::comparable`]).
pub async fn plan_against(
    session: &mut Session,
    desired: &Schema,
    live: &Schema,
    dialect: Dialect,
    opts: &PlanOptions,
) -> Result<Plan, String> {
    let desired = ptah_engine::comparable(session, desired, live)
        .await
        .map_err(|e| format!("comparable: {e}"))?;
    ptah_schema::plan(&desired, live, dialect, opts).map_err(|e| e.to_string())
}

/// Plans from the live database to `desired`, applies, and requires a fresh plan to be empty.
pub async fn converge(
    session: &mut Session,
    desired: &Schema,
    dialect: Dialect,
    opts: &PlanOptions,
    stage: &str,
) -> Result<Plan, String> {
    let scope = InspectScope::of(desired);
    let live = inspect(session, &scope)
        .await
        .map_err(|e| format!("{stage}: inspect: {e}"))?;
    let plan = plan_against(session, desired, &live, dialect, opts)
        .await
        .map_err(|e| format!("{stage}: {e}"))?;
    let apply_opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    apply(session, &plan, &apply_opts)
        .await
        .map_err(|e| format!("{stage}: apply: {e}{}", listing(&plan)))?;
    let again = inspect(session, &scope)
        .await
        .map_err(|e| format!("{stage}: re-inspect: {e}"))?;
    let fresh = plan_against(session, desired, &again, dialect, opts)
        .await
        .map_err(|e| format!("{stage}: {e}"))?;
    if !fresh.is_empty() {
        return Err(format!(
            "{stage}: perpetual drift, a fresh plan after apply is not empty:{}",
            listing(&fresh)
        ));
    }
    Ok(plan)
}

/// The server's dump tool on the fresh database; the password goes through the environment.
pub fn dump(db: &Fresh, dialect: Dialect) -> Result<String, String> {
    let url = &db.url;
    let port = url.port().to_string();
    let mut cmd = match dialect {
        Dialect::Postgres => {
            let mut c = Command::new("pg_dump");
            c.args([
                "--schema-only",
                "--host",
                url.host(),
                "--port",
                &port,
                "--username",
                url.user(),
            ])
            .arg(url.database())
            .env("PGPASSWORD", &db.password);
            c
        }
        Dialect::Mysql => {
            let mut c = Command::new("mariadb-dump");
            c.args([
                "--no-data",
                "--routines",
                "--events",
                "--skip-ssl",
                "--protocol=tcp",
                "--host",
                url.host(),
                "--port",
                &port,
            ])
            .arg(format!("--user={}", url.user()))
            .arg(url.database())
            .env("MYSQL_PWD", &db.password);
            c
        }
    };
    let tool = format!("{:?}", cmd.get_program());
    let out = cmd.output().map_err(|e| {
        format!(
            "{tool} cannot run ({e}); it comes with the database packages `cargo xtask services up` installs"
        )
    })?;
    if !out.status.success() {
        return Err(format!("{tool} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("{tool}: {e}"))
}
