//! The service containers of a kind cluster: a TLS + htpasswd registry, a plain registry,
//! PostgreSQL and MySQL, run with `docker run -d --network kind` and published on 127.0.0.1 at
//! ports Docker picks. Passwords reach a container only through `--env-file` (mode 0600) or
//! stdin, never its command line, and every value holding one redacts itself in `Debug`.

use std::{
    net::Ipv4Addr,
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{Context, bail};
use ptah_testservices::Password;
use serde_json::Value;

use super::secrets::Credentials;

/// The distribution registry image both registries run.
pub const REGISTRY_IMAGE: &str = "registry:3";
/// The Docker network kind puts its nodes on.
pub const NETWORK: &str = "kind";
/// The label that marks a container as belonging to a kind cluster of this provider.
pub const CLUSTER_LABEL: &str = "run.ptah.testenv/kind-cluster";
/// The application role and database of both engines.
pub const APP: &str = "app";
/// The registry's basic-auth user.
pub const REGISTRY_USER: &str = "ptah";
/// The port both registries listen on inside the network.
pub const REGISTRY_PORT: u16 = 5000;
/// PostgreSQL's port inside the network.
pub const POSTGRES_PORT: u16 = 5432;
/// MySQL's port inside the network.
pub const MYSQL_PORT: u16 = 3306;
/// Where the registry container sees its certificate, key and htpasswd file.
const REGISTRY_MOUNT: &str = "/ptah";

/// The container names of a cluster's services.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The TLS + basic-auth registry.
    pub registry: String,
    /// The plain-HTTP registry without auth.
    pub registry_plain: String,
    /// PostgreSQL.
    pub postgres: String,
    /// MySQL.
    pub mysql: String,
}

impl Names {
    /// `<cluster>-registry`, `<cluster>-registry-plain`, `<cluster>-postgres`, `<cluster>-mysql`.
    pub fn of(cluster: &str) -> Self {
        Self {
            registry: format!("{cluster}-registry"),
            registry_plain: format!("{cluster}-registry-plain"),
            postgres: format!("{cluster}-postgres"),
            mysql: format!("{cluster}-mysql"),
        }
    }

    /// Every name, in start order.
    pub fn all(&self) -> [&str; 4] {
        [&self.registry, &self.registry_plain, &self.postgres, &self.mysql]
    }
}

/// One service container.
#[derive(Clone, Debug)]
pub struct Container {
    /// The container's name, which other containers on the network resolve.
    pub name: String,
    /// The image reference.
    pub image: String,
    /// The port it listens on inside the network (published on a random 127.0.0.1 port).
    pub port: u16,
    /// Settings passed with `-e` (no secret among them).
    pub env: Vec<(&'static str, String)>,
    /// Secrets, passed through the `--env-file`.
    pub secret_env: Vec<(&'static str, Password)>,
    /// Read-only bind mounts: host directory, container path.
    pub mounts: Vec<(PathBuf, &'static str)>,
}

impl Container {
    /// PostgreSQL with the `postgres` superuser's password (the `app` role is made afterwards,
    /// see [`postgres_app_sql`]).
    pub fn postgres(names: &Names, image: &str, credentials: &Credentials) -> Self {
        Self {
            name: names.postgres.clone(),
            image: image.to_owned(),
            port: POSTGRES_PORT,
            env: Vec::new(),
            secret_env: vec![("POSTGRES_PASSWORD", credentials.postgres_admin.clone())],
            mounts: Vec::new(),
        }
    }

    /// MySQL with a `root` password and the `app` user owning the `app` database.
    pub fn mysql(names: &Names, image: &str, credentials: &Credentials) -> Self {
        Self {
            name: names.mysql.clone(),
            image: image.to_owned(),
            port: MYSQL_PORT,
            env: vec![("MYSQL_DATABASE", APP.to_owned()), ("MYSQL_USER", APP.to_owned())],
            secret_env: vec![
                ("MYSQL_ROOT_PASSWORD", credentials.mysql_root.clone()),
                ("MYSQL_PASSWORD", credentials.mysql_app.clone()),
            ],
            mounts: Vec::new(),
        }
    }

    /// The TLS + htpasswd registry serving `server.pem`, `server.key` and `htpasswd` of `dir`.
    pub fn registry(names: &Names, dir: &Path, credentials: &Credentials) -> Self {
        let at = |file: &str| format!("{REGISTRY_MOUNT}/{file}");
        Self {
            name: names.registry.clone(),
            image: REGISTRY_IMAGE.to_owned(),
            port: REGISTRY_PORT,
            env: vec![
                ("REGISTRY_HTTP_TLS_CERTIFICATE", at("server.pem")),
                ("REGISTRY_HTTP_TLS_KEY", at("server.key")),
                ("REGISTRY_AUTH", "htpasswd".to_owned()),
                ("REGISTRY_AUTH_HTPASSWD_REALM", "ptah-test-registry".to_owned()),
                ("REGISTRY_AUTH_HTPASSWD_PATH", at("htpasswd")),
                ("REGISTRY_STORAGE_DELETE_ENABLED", "true".to_owned()),
            ],
            secret_env: vec![("REGISTRY_HTTP_SECRET", credentials.registry_http_secret.clone())],
            mounts: vec![(dir.to_owned(), REGISTRY_MOUNT)],
        }
    }

    /// The plain-HTTP registry without auth.
    pub fn registry_plain(names: &Names, credentials: &Credentials) -> Self {
        Self {
            name: names.registry_plain.clone(),
            image: REGISTRY_IMAGE.to_owned(),
            port: REGISTRY_PORT,
            env: vec![("REGISTRY_STORAGE_DELETE_ENABLED", "true".to_owned())],
            secret_env: vec![("REGISTRY_HTTP_SECRET", credentials.registry_http_secret.clone())],
            mounts: Vec::new(),
        }
    }

    /// The `--env-file` text: `NAME=value` lines (Docker takes values literally).
    pub fn env_file_text(&self) -> String {
        self.secret_env
            .iter()
            .map(|(name, value)| format!("{name}={}\n", value.expose()))
            .collect()
    }

    /// `docker run -d --name … --network kind -p 127.0.0.1::<port> … --env-file <file> <image>`.
    pub fn run_command(&self, cluster: &str, env_file: &Path) -> Command {
        let mut cmd = Command::new("docker");
        cmd.args(["run", "-d", "--name", &self.name, "--network", NETWORK])
            .args(["--label", &format!("{CLUSTER_LABEL}={cluster}")])
            .args(["-p", &format!("127.0.0.1::{}", self.port)]);
        for (name, value) in &self.env {
            cmd.args(["-e", &format!("{name}={value}")]);
        }
        for (host, at) in &self.mounts {
            cmd.arg("-v").arg(format!("{}:{at}:ro", host.display()));
        }
        cmd.arg("--env-file").arg(env_file).arg(&self.image);
        cmd
    }
}

/// `docker port <name> <port>/tcp`: where the host reaches a container's port.
pub fn port_command(name: &str, port: u16) -> Command {
    docker(&["port", name, &format!("{port}/tcp")])
}

/// The SQL that makes PostgreSQL's `app` role and database (sent on psql's stdin).
pub fn postgres_app_sql(app_password: &Password) -> String {
    format!(
        "CREATE ROLE {APP} LOGIN CREATEDB PASSWORD '{}';\nCREATE DATABASE {APP} OWNER {APP};\n",
        app_password.expose()
    )
}

/// `docker exec -i <postgres> psql …` as the superuser over the container's socket.
pub fn psql_command(names: &Names) -> Command {
    docker(&[
        "exec",
        "-i",
        &names.postgres,
        "psql",
        "-v",
        "ON_ERROR_STOP=1",
        "-U",
        "postgres",
        "-d",
        "postgres",
    ])
}

/// Ready once the final server accepts TCP (the init phase listens on the socket only).
pub fn postgres_ready_command(names: &Names) -> Command {
    docker(&[
        "exec",
        &names.postgres,
        "pg_isready",
        "-h",
        "127.0.0.1",
        "-U",
        "postgres",
    ])
}

/// Ready once the final server answers on TCP (the init phase runs with `--skip-networking`);
/// `mysqladmin ping` succeeds even when access is denied.
pub fn mysql_ready_command(names: &Names) -> Command {
    docker(&[
        "exec",
        &names.mysql,
        "mysqladmin",
        "ping",
        "-h",
        "127.0.0.1",
        "--protocol=tcp",
        "--silent",
    ])
}

/// `docker rm -f <names…>`.
pub fn remove_command(names: &[&str]) -> Command {
    let mut cmd = docker(&["rm", "-f"]);
    cmd.args(names);
    cmd
}

/// `docker inspect -f {{.State.Running}} <name>`: `true` while it runs.
pub fn running_command(name: &str) -> Command {
    docker(&["inspect", "-f", "{{.State.Running}}", name])
}

/// `docker network inspect kind`: its IPAM configuration as JSON.
pub fn network_command() -> Command {
    docker(&["network", "inspect", NETWORK, "--format", "{{json .IPAM.Config}}"])
}

/// `docker version`: fails without a reachable engine.
pub fn engine_command() -> Command {
    docker(&["version", "--format", "{{.Server.Version}}"])
}

fn docker(args: &[&str]) -> Command {
    let mut cmd = Command::new("docker");
    cmd.args(args);
    cmd
}

/// The host port of `docker port` output (`127.0.0.1:49153`, one line per binding).
pub fn parse_host_port(text: &str) -> anyhow::Result<u16> {
    text.lines()
        .filter_map(|line| line.trim().rsplit_once(':'))
        .find_map(|(_, port)| port.parse().ok())
        .with_context(|| format!("no host port in `docker port` output {text:?}"))
}

/// The IPv4 gateway of the kind network, from `docker network inspect` (`[{"Subnet":…,
/// "Gateway":"172.18.0.1"}, {"Subnet":"fc00:…"}]`).
pub fn parse_gateway(text: &str) -> anyhow::Result<Ipv4Addr> {
    let config: Value =
        serde_json::from_str(text.trim()).context("`docker network inspect` printed no JSON")?;
    let found = config
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry["Gateway"].as_str())
        .find_map(|gateway| gateway.parse::<Ipv4Addr>().ok());
    match found {
        Some(gateway) => Ok(gateway),
        None => bail!("the {NETWORK} network has no IPv4 gateway: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::describe;

    fn credentials() -> Credentials {
        Credentials::generate().expect("credentials")
    }

    #[test]
    fn the_app_role_sql_carries_the_password_for_stdin() {
        let sql = postgres_app_sql(&Password::new("pw"));
        assert!(
            sql.contains("CREATE ROLE app LOGIN CREATEDB PASSWORD 'pw';"),
            "{sql}"
        );
        assert!(sql.contains("CREATE DATABASE app OWNER app;"), "{sql}");
    }

    #[test]
    fn passwords_go_through_the_env_file_never_the_command_line() {
        let names = Names::of("ptah-1-35");
        let creds = credentials();
        let containers = [
            Container::postgres(&names, "postgres:17-alpine", &creds),
            Container::mysql(&names, "mysql:8.4", &creds),
            Container::registry(&names, Path::new("/d/registry"), &creds),
            Container::registry_plain(&names, &creds),
        ];
        for container in &containers {
            let line = describe(&container.run_command("ptah-1-35", Path::new("/d/x.env")));
            assert!(
                line.starts_with(&format!(
                    "docker run -d --name {} --network kind --label {CLUSTER_LABEL}=ptah-1-35 -p 127.0.0.1::{}",
                    container.name, container.port
                )),
                "{line}"
            );
            assert!(
                line.ends_with(&format!("--env-file /d/x.env {}", container.image)),
                "{line}"
            );
            for secret in creds.fields() {
                assert!(!line.contains(secret.expose()), "a secret in {line}");
                assert!(
                    !format!("{container:?}").contains(secret.expose()),
                    "a secret in Debug"
                );
            }
            for (name, value) in &container.secret_env {
                assert!(
                    container
                        .env_file_text()
                        .contains(&format!("{name}={}\n", value.expose()))
                );
            }
        }
        assert!(describe(&containers[0].run_command("c", Path::new("/e"))).contains("postgres:17-alpine"));
        let mysql = describe(&containers[1].run_command("c", Path::new("/e")));
        assert!(
            mysql.contains("-e MYSQL_USER=app") && mysql.contains("-e MYSQL_DATABASE=app"),
            "{mysql}"
        );
        let registry = describe(&containers[2].run_command("c", Path::new("/e")));
        assert!(registry.contains("-v /d/registry:/ptah:ro"), "{registry}");
        assert!(
            registry.contains("-e REGISTRY_AUTH_HTPASSWD_PATH=/ptah/htpasswd"),
            "{registry}"
        );
        assert!(registry.contains(" registry:3"), "{registry}");
    }

    #[test]
    fn docker_helpers_and_parsers() {
        let names = Names::of("ptah-1-36");
        assert_eq!(
            names.all(),
            [
                "ptah-1-36-registry",
                "ptah-1-36-registry-plain",
                "ptah-1-36-postgres",
                "ptah-1-36-mysql"
            ]
        );
        assert_eq!(
            describe(&psql_command(&names)),
            "docker exec -i ptah-1-36-postgres psql -v ON_ERROR_STOP=1 -U postgres -d postgres"
        );
        assert!(
            describe(&mysql_ready_command(&names)).contains("mysqladmin ping -h 127.0.0.1 --protocol=tcp")
        );
        assert!(describe(&postgres_ready_command(&names)).ends_with("pg_isready -h 127.0.0.1 -U postgres"));
        assert_eq!(
            describe(&remove_command(&names.all()))
                .matches("ptah-1-36-")
                .count(),
            4
        );
        assert_eq!(describe(&port_command("x", 5432)), "docker port x 5432/tcp");
        assert_eq!(parse_host_port("127.0.0.1:49153\n").expect("port"), 49153);
        assert_eq!(
            parse_host_port("").err().map(|e| e.to_string()),
            Some("no host port in `docker port` output \"\"".to_owned())
        );
        let ipam = r#"[{"Subnet":"fc00:f853:ccd:e793::/64","Gateway":"fc00:f853:ccd:e793::1"},{"Subnet":"172.18.0.0/16","Gateway":"172.18.0.1"}]"#;
        assert_eq!(
            parse_gateway(ipam).expect("gateway"),
            Ipv4Addr::new(172, 18, 0, 1)
        );
        assert_eq!(
            parse_gateway("[]").err().map(|e| e.to_string()),
            Some(format!("the {NETWORK} network has no IPv4 gateway: []"))
        );
    }
}
