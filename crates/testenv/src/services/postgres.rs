//! PostgreSQL 15 from Debian's `postgresql-15`: initdb + pg_ctl as the `postgres` user.

use std::{
    fs,
    os::unix::fs::DirBuilderExt,
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::{Context, bail};

use super::{Service, process, secret};
use crate::step::{output, run};

pub(crate) const BIN: &str = "/usr/lib/postgresql/15/bin";
const OS_USER: &str = "postgres";
const APP: &str = "app";

/// A PostgreSQL cluster on 127.0.0.1 with scram-sha-256 over TCP, role and database `app`.
pub struct Postgres {
    dir: PathBuf,
    port: u16,
}

impl Postgres {
    /// The cluster kept under `state_dir/postgres`.
    pub fn new(state_dir: &Path, port: u16) -> Self {
        Self {
            dir: state_dir.join("postgres"),
            port,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn socket_dir(&self) -> PathBuf {
        self.dir.join("run")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    fn app_password(&self) -> PathBuf {
        self.dir.join("app.password")
    }

    fn admin_password(&self) -> PathBuf {
        self.dir.join("admin.password")
    }

    /// The CA the server certificate chains to (TLS is on; plaintext stays allowed).
    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// `psql` over TCP as `user`, reading the password from `PGPASSWORD`.
    fn psql(&self, user: &str, database: &str, password: &str) -> Command {
        let mut cmd = Command::new(format!("{BIN}/psql"));
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", user, "-d", database, "-f", "-"])
            .env("PGPASSWORD", password)
            .env("PGCONNECT_TIMEOUT", "5");
        cmd
    }

    /// A command run as the `postgres` user from a directory it can enter.
    fn as_postgres(&self, program: &str) -> Command {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", OS_USER, "--", &format!("{BIN}/{program}")])
            .current_dir(&self.dir);
        cmd
    }

    /// `pg_isready` over TCP.
    fn is_ready(&self) -> bool {
        Command::new(format!("{BIN}/pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .status()
            .is_ok_and(|s| s.success())
    }

    fn chown(&self, path: &Path) -> anyhow::Result<()> {
        run(Command::new("chown")
            .args(["-R", &format!("{OS_USER}:{OS_USER}")])
            .arg(path))
    }
}

impl Service for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn program(&self) -> &'static str {
        "postgres"
    }

    fn cmdline_marker(&self) -> PathBuf {
        self.data()
    }

    /// SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for clients to disconnect.
    fn stop_signal(&self) -> &'static str {
        "INT"
    }

    fn start(&self) -> anyhow::Result<()> {
        let admin_password = secret::password()?;
        let app_password = secret::password()?;
        secret::write(&self.admin_password(), &admin_password)?;
        secret::write(&self.app_password(), &app_password)?;

        // The postgres user owns its data and socket dirs; the parent stays root's.
        let socket_dir = self.socket_dir();
        for dir in [self.data(), socket_dir.clone()] {
            fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            self.chown(&dir)?;
        }
        fs::write(self.log(), "")?;
        self.chown(&self.log())?;
        let reachable = Command::new("runuser")
            .args(["-u", OS_USER, "--", "test", "-w"])
            .arg(&socket_dir)
            .status()
            .is_ok_and(|s| s.success());
        if !reachable {
            bail!(
                "the `{OS_USER}` user cannot reach {}; set PTAH_SERVICES_DIR to a directory every \
                 user can traverse (the default is under /var/tmp)",
                self.dir.display()
            );
        }

        // initdb reads the superuser password from a file the postgres user can read.
        let pwfile = self.dir.join("initdb.pw");
        secret::write(&pwfile, &admin_password)?;
        self.chown(&pwfile)?;
        let initdb = output(
            self.as_postgres("initdb")
                .arg("-D")
                .arg(self.data())
                .args(["-U", "postgres", "--auth-local=peer", "--auth-host=scram-sha-256"])
                .args(["-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
                .arg(format!("--pwfile={}", pwfile.display())),
        );
        fs::remove_file(&pwfile).with_context(|| format!("cannot remove {}", pwfile.display()))?;
        fs::write(self.dir.join("initdb.log"), initdb?)?;

        // TLS on, with a certificate for `localhost` only (tests dial 127.0.0.1 as a wrong host).
        super::tls::write_database_pki(&self.dir, "ptah-operator test PostgreSQL CA")?;
        self.chown(&self.dir.join("server.key"))?;
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
            self.port,
            socket_dir.display(),
            self.dir.join("server.pem").display(),
            self.dir.join("server.key").display()
        );
        output(
            self.as_postgres("pg_ctl")
                .arg("-D")
                .arg(self.data())
                .arg("-l")
                .arg(self.log())
                .args(["-w", "-t", "30", "-o", &options, "start"]),
        )
        .map_err(|err| anyhow::anyhow!("{err:#}\n{}", process::tail(&self.log())))?;
        let pid_text = fs::read_to_string(self.data().join("postmaster.pid"))
            .context("pg_ctl started no postmaster.pid")?;
        let pid: u32 = pid_text
            .lines()
            .next()
            .and_then(|line| line.trim().parse().ok())
            .context("postmaster.pid has no PID on its first line")?;
        process::record(&self.dir, pid)?;

        process::wait_ready("postgres", pid, Duration::from_secs(30), &self.log(), || {
            self.is_ready()
        })?;

        let sql = format!(
            "CREATE ROLE {APP} LOGIN CREATEDB PASSWORD '{app_password}';\n\
             CREATE DATABASE {APP} OWNER {APP};\n"
        );
        process::output_with_stdin(
            &mut self.psql("postgres", "postgres", &admin_password),
            sql.as_bytes(),
        )?;
        Ok(())
    }

    fn healthy(&self) -> bool {
        let Ok(password) = secret::read(&self.app_password()) else {
            return false;
        };
        // A server started before TLS was on has no CA file, and is restarted.
        self.ca().is_file()
            && self.is_ready()
            && process::probe(
                self.psql(APP, APP, &password).env("PGSSLMODE", "require"),
                b"select ssl from pg_stat_ssl where pid = pg_backend_pid();",
                "t",
            )
    }

    fn env(&self) -> anyhow::Result<Vec<(&'static str, String)>> {
        let app = secret::read(&self.app_password())?;
        let admin = secret::read(&self.admin_password())?;
        let port = self.port;
        Ok(vec![
            (
                "PTAH_TEST_PG_URL",
                format!("postgres://{APP}:{app}@127.0.0.1:{port}/{APP}"),
            ),
            (
                "PTAH_TEST_PG_ADMIN_URL",
                format!("postgres://postgres:{admin}@127.0.0.1:{port}/postgres"),
            ),
            ("PTAH_TEST_PG_CA", self.ca().to_string_lossy().into_owned()),
        ])
    }
}
