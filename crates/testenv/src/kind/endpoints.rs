//! Where tests find a kind cluster's services: `pod-endpoints.env` (the `PTAH_POD_*` variables of
//! cluster/relay.rs, as Pods reach the containers: by name on the kind network) and
//! `services.env` (the `PTAH_TEST_*` variables of `cargo xtask services`, as the host reaches
//! them: on their published 127.0.0.1 ports). Both are mode 0600: the URLs carry passwords.

use std::{
    fs,
    net::Ipv4Addr,
    path::{Path, PathBuf},
};

use ptah_testservices::vars;

use super::{
    containers::{APP, MYSQL_PORT, Names, POSTGRES_PORT, REGISTRY_PORT, REGISTRY_USER},
    secrets::Credentials,
};
use crate::services::envfile;

/// The first line of every env file this provider writes (how it recognises its own).
pub const HEADER: &str = "# Written by the kind provider of ptah-testenv";

/// Host ports Docker published, per container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPorts {
    /// The TLS registry's.
    pub registry: u16,
    /// The plain registry's.
    pub registry_plain: u16,
    /// PostgreSQL's.
    pub postgres: u16,
    /// MySQL's.
    pub mysql: u16,
}

/// Everything the env files are made of; `Debug` redacts the credentials.
#[derive(Clone, Debug)]
pub struct Endpoints {
    /// The containers' names.
    pub names: Names,
    /// The kind network's IPv4 gateway (the host, as Pods see it).
    pub gateway: Ipv4Addr,
    /// The published ports.
    pub ports: HostPorts,
    /// The TLS registry's CA certificate on the host.
    pub registry_ca: PathBuf,
    /// The passwords.
    pub credentials: Credentials,
}

impl Endpoints {
    fn postgres_url(&self, user: &str, password: &str, host: &str, database: &str) -> String {
        format!("postgres://{user}:{password}@{host}/{database}")
    }

    fn mysql_url(&self, user: &str, password: &str, host: &str, database: &str) -> String {
        format!("mysql://{user}:{password}@{host}/{database}")
    }

    /// The `PTAH_POD_*` variables: the containers by name on the kind network.
    pub fn pod_vars(&self) -> Vec<(&'static str, String)> {
        let c = &self.credentials;
        let pg = format!("{}:{POSTGRES_PORT}", self.names.postgres);
        let my = format!("{}:{MYSQL_PORT}", self.names.mysql);
        vec![
            ("PTAH_POD_GATEWAY", self.gateway.to_string()),
            (
                "PTAH_POD_PG_URL",
                self.postgres_url(APP, c.postgres_app.expose(), &pg, APP),
            ),
            (
                "PTAH_POD_PG_ADMIN_URL",
                self.postgres_url("postgres", c.postgres_admin.expose(), &pg, "postgres"),
            ),
            (
                "PTAH_POD_MARIADB_URL",
                self.mysql_url(APP, c.mysql_app.expose(), &my, APP),
            ),
            (
                "PTAH_POD_MARIADB_ADMIN_URL",
                self.mysql_url("root", c.mysql_root.expose(), &my, "mysql"),
            ),
            ("PTAH_POD_REGISTRY", self.registry_in_network()),
            ("PTAH_POD_PLAIN_REGISTRY", self.registry_plain_in_network()),
        ]
    }

    /// The `PTAH_TEST_*` variables: the published ports on 127.0.0.1.
    pub fn host_vars(&self) -> Vec<(&'static str, String)> {
        let c = &self.credentials;
        let pg = format!("127.0.0.1:{}", self.ports.postgres);
        let my = format!("127.0.0.1:{}", self.ports.mysql);
        vec![
            (
                vars::PG_URL,
                self.postgres_url(APP, c.postgres_app.expose(), &pg, APP),
            ),
            (
                vars::PG_ADMIN_URL,
                self.postgres_url("postgres", c.postgres_admin.expose(), &pg, "postgres"),
            ),
            (
                vars::MYSQL_URL,
                self.mysql_url(APP, c.mysql_app.expose(), &my, APP),
            ),
            (
                vars::MYSQL_ADMIN_URL,
                self.mysql_url("root", c.mysql_root.expose(), &my, "mysql"),
            ),
            (vars::REGISTRY, self.registry_host()),
            (vars::REGISTRY_CA, self.registry_ca.display().to_string()),
            (vars::REGISTRY_USERNAME, REGISTRY_USER.to_owned()),
            (vars::REGISTRY_PASSWORD, c.registry.expose().to_owned()),
            (vars::REGISTRY_PLAIN, self.registry_plain_host()),
        ]
    }

    /// `127.0.0.1:<port>` of the TLS registry: the name images are built and pulled under.
    pub fn registry_host(&self) -> String {
        format!("127.0.0.1:{}", self.ports.registry)
    }

    /// `<container>:5000` of the TLS registry, where nodes and Pods reach it.
    pub fn registry_in_network(&self) -> String {
        format!("{}:{REGISTRY_PORT}", self.names.registry)
    }

    /// `<container>:5000` of the plain registry.
    pub fn registry_plain_in_network(&self) -> String {
        format!("{}:{REGISTRY_PORT}", self.names.registry_plain)
    }

    /// `127.0.0.1:<port>` of the plain registry.
    pub fn registry_plain_host(&self) -> String {
        format!("127.0.0.1:{}", self.ports.registry_plain)
    }
}

/// `export NAME='value'` lines under [`HEADER`].
pub fn render(what: &str, vars: &[(&str, String)]) -> String {
    envfile::render_exports(&format!("{HEADER}: {what}."), vars)
}

/// Writes the rendered file atomically with mode 0600.
pub fn write(path: &Path, what: &str, vars: &[(&str, String)]) -> anyhow::Result<()> {
    envfile::write_exports(path, &format!("{HEADER}: {what}."), vars)
}

/// May this provider (re)write `path`? Yes when it does not exist or this provider wrote it;
/// a file of `cargo xtask services up` is left alone.
pub fn ours_or_absent(path: &Path) -> bool {
    match fs::read_to_string(path) {
        Ok(text) => text.starts_with(HEADER),
        Err(err) => err.kind() == std::io::ErrorKind::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ptah_testservices::{Password, TestServices};

    use super::*;

    fn endpoints() -> Endpoints {
        let pw = |s: &str| Password::new(s);
        Endpoints {
            names: Names::of("ptah-1-35"),
            gateway: Ipv4Addr::new(172, 18, 0, 1),
            ports: HostPorts {
                registry: 40001,
                registry_plain: 40002,
                postgres: 40003,
                mysql: 40004,
            },
            registry_ca: PathBuf::from("/proc/self/status"),
            credentials: Credentials {
                postgres_admin: pw("pa"),
                postgres_app: pw("pp"),
                mysql_root: pw("mr"),
                mysql_app: pw("ma"),
                registry: pw("rp"),
                registry_http_secret: pw("rh"),
            },
        }
    }

    #[test]
    fn pods_get_the_relay_variables_pointing_at_the_containers() {
        let vars: HashMap<&str, String> = endpoints().pod_vars().into_iter().collect();
        let mut names: Vec<&str> = vars.keys().copied().collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "PTAH_POD_GATEWAY",
                "PTAH_POD_MARIADB_ADMIN_URL",
                "PTAH_POD_MARIADB_URL",
                "PTAH_POD_PG_ADMIN_URL",
                "PTAH_POD_PG_URL",
                "PTAH_POD_PLAIN_REGISTRY",
                "PTAH_POD_REGISTRY"
            ]
        );
        assert_eq!(
            vars["PTAH_POD_PG_URL"],
            "postgres://app:pp@ptah-1-35-postgres:5432/app"
        );
        assert_eq!(
            vars["PTAH_POD_MARIADB_ADMIN_URL"],
            "mysql://root:mr@ptah-1-35-mysql:3306/mysql"
        );
        assert_eq!(vars["PTAH_POD_REGISTRY"], "ptah-1-35-registry:5000");
        assert_eq!(vars["PTAH_POD_GATEWAY"], "172.18.0.1");
    }

    #[test]
    fn the_host_side_parses_as_test_services() {
        let e = endpoints();
        let vars: HashMap<&str, String> = e.host_vars().into_iter().collect();
        let services =
            TestServices::load_from(Path::new("/nonexistent/services.env"), |k| vars.get(k).cloned())
                .expect("services");
        assert_eq!(services.registry.host, "127.0.0.1:40001");
        assert_eq!(services.plain_registry, "127.0.0.1:40002");
        assert_eq!(
            services.postgres.url.expose(),
            "postgres://app:pp@127.0.0.1:40003/app"
        );
        assert_eq!(
            services.mysql.admin_url.expose(),
            "mysql://root:mr@127.0.0.1:40004/mysql"
        );
        let debug = format!("{e:?}");
        assert!(!debug.contains("\"pp\"") && debug.contains("***"), "{debug}");
    }

    #[test]
    fn files_are_private_quoted_and_recognised_as_ours() {
        let dir = std::env::temp_dir().join(format!("ptah-kind-env-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("pod-endpoints.env");
        assert!(ours_or_absent(&path));
        write(&path, "test", &[("A", "x'y".to_owned())]).expect("write");
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.ends_with("export A='x'\\''y'\n"), "{text}");
        assert!(ours_or_absent(&path));
        let mode = std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&path).expect("meta").permissions());
        assert_eq!(mode & 0o777, 0o600);
        let theirs = dir.join("services.env");
        fs::write(&theirs, "# Written by `cargo xtask services up`\n").expect("theirs");
        assert!(!ours_or_absent(&theirs));
        fs::remove_dir_all(&dir).expect("clean");
    }
}
