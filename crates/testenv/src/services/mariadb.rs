//! MariaDB 10.11 from Debian's `mariadb-server`, run as root with `--no-defaults`.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use anyhow::Context;

use super::{Service, process, secret};
use crate::step::output;

pub(crate) const MARIADBD: &str = "/usr/sbin/mariadbd";
const APP: &str = "app";
/// The superuser tests use to create a database per test (root itself only logs in by socket).
const ADMIN: &str = "ptah_admin";

/// A MariaDB server on 127.0.0.1 with database and user `app`, plus an admin user.
pub struct MariaDb {
    dir: PathBuf,
    port: u16,
}

impl MariaDb {
    /// The server kept under `state_dir/mariadb`.
    pub fn new(state_dir: &Path, port: u16) -> Self {
        Self {
            dir: state_dir.join("mariadb"),
            port,
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("mysqld.sock")
    }

    fn log(&self) -> PathBuf {
        self.dir.join("error.log")
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

    /// `mariadb-admin ping` over the server's own socket.
    fn ping(&self) -> bool {
        Command::new("mariadb-admin")
            .arg("--no-defaults")
            .arg(format!("--socket={}", self.socket().display()))
            .arg("ping")
            .output()
            .is_ok_and(|out| out.status.success())
    }

    /// The `mariadb` client as root over the socket (unix_socket authentication).
    fn root_client(&self) -> Command {
        let mut cmd = Command::new("mariadb");
        cmd.arg("--no-defaults")
            .arg(format!("--socket={}", self.socket().display()))
            .args(["-u", "root"]);
        cmd
    }
}

impl Service for MariaDb {
    fn name(&self) -> &'static str {
        "mariadb"
    }

    fn dir(&self) -> &Path {
        &self.dir
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn program(&self) -> &'static str {
        "mariadbd"
    }

    fn cmdline_marker(&self) -> PathBuf {
        self.data()
    }

    fn start(&self) -> anyhow::Result<()> {
        let app_password = secret::password()?;
        let admin_password = secret::password()?;
        secret::write(&self.app_password(), &app_password)?;
        secret::write(&self.admin_password(), &admin_password)?;

        // Root authenticates by unix socket only, so TCP has no password-less account.
        let install = output(
            Command::new("mariadb-install-db")
                .arg("--no-defaults")
                .arg(format!("--datadir={}", self.data().display()))
                .args(["--user=root", "--skip-test-db", "--skip-name-resolve"])
                .current_dir(&self.dir),
        )?;
        std::fs::write(self.dir.join("install-db.log"), install)?;

        // TLS on, with a certificate for `localhost` only (tests dial 127.0.0.1 as a wrong host).
        super::tls::write_database_pki(&self.dir, "ptah-operator test MariaDB CA")?;
        let mut server = Command::new(MARIADBD);
        server
            .arg("--no-defaults")
            .arg(format!("--datadir={}", self.data().display()))
            .arg(format!("--socket={}", self.socket().display()))
            .arg(format!("--pid-file={}", self.dir.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", self.log().display()))
            .arg(format!("--port={}", self.port))
            .args(["--bind-address=127.0.0.1", "--user=root", "--skip-name-resolve"])
            .arg(format!("--ssl-ca={}", self.ca().display()))
            .arg(format!("--ssl-cert={}", self.dir.join("server.pem").display()))
            .arg(format!("--ssl-key={}", self.dir.join("server.key").display()))
            .args([
                "--innodb-buffer-pool-size=64M",
                "--innodb-flush-log-at-trx-commit=0",
            ])
            .current_dir(&self.dir);
        let pid = process::spawn_detached(&server, &self.dir.join("stdout.log"), &self.dir)?;
        process::wait_ready("mariadb", pid, Duration::from_secs(30), &self.log(), || {
            self.ping()
        })?;

        let sql = format!(
            "CREATE DATABASE {APP};\n\
             CREATE USER '{APP}'@'%' IDENTIFIED BY '{app_password}';\n\
             GRANT ALL ON {APP}.* TO '{APP}'@'%';\n\
             CREATE USER '{ADMIN}'@'%' IDENTIFIED BY '{admin_password}';\n\
             GRANT ALL ON *.* TO '{ADMIN}'@'%' WITH GRANT OPTION;\n"
        );
        process::output_with_stdin(&mut self.root_client(), sql.as_bytes())
            .context("cannot create the app and admin users")?;
        Ok(())
    }

    fn healthy(&self) -> bool {
        let Ok(password) = secret::read(&self.app_password()) else {
            return false;
        };
        // A server started before TLS was on has no CA file, and is restarted.
        self.ca().is_file()
            && self.ping()
            && process::probe(
                Command::new("mariadb")
                    .arg("--no-defaults")
                    .args(["-h", "127.0.0.1", "-P", &self.port.to_string()])
                    .args(["-u", APP, "-D", APP, "-N", "-B", "--connect-timeout=5", "--ssl"])
                    .env("MYSQL_PWD", password),
                b"select current_user(), variable_value <> '' from information_schema.session_status where variable_name = 'Ssl_version';",
                &format!("{APP}@%\t1"),
            )
    }

    fn env(&self) -> anyhow::Result<Vec<(&'static str, String)>> {
        let app = secret::read(&self.app_password())?;
        let admin = secret::read(&self.admin_password())?;
        let port = self.port;
        Ok(vec![
            (
                "PTAH_TEST_MYSQL_URL",
                format!("mysql://{APP}:{app}@127.0.0.1:{port}/{APP}"),
            ),
            (
                "PTAH_TEST_MYSQL_ADMIN_URL",
                format!("mysql://{ADMIN}:{admin}@127.0.0.1:{port}/mysql"),
            ),
            ("PTAH_TEST_MYSQL_CA", self.ca().to_string_lossy().into_owned()),
        ])
    }
}
