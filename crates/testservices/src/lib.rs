//! The real test services (PostgreSQL, MariaDB, OCI registries) started by
//! `cargo xtask services up`, as tests see them.
//!
//! [`TestServices::load`] reads `target/services.env` of the workspace; a variable already set
//! in the environment wins over the file, so CI may `eval "$(cargo xtask services env)"` or set
//! the variables itself. When something is missing the error says to run
//! `cargo xtask services up`; [`TestServices::require`] turns that into a panic for tests.
//!
//! Passwords never appear in `Debug` output.

mod envfile;
mod faultproxy;
mod secret;

use std::{
    collections::HashMap,
    fmt,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU32, Ordering},
    time::{SystemTime, UNIX_EPOCH},
};

pub use faultproxy::{FaultProxy, proxies};
pub use secret::{Password, SecretUrl};

/// The command that starts the services; every error message names it.
pub const UP_COMMAND: &str = "cargo xtask services up";

/// The env file, relative to the workspace root.
pub const ENV_FILE: &str = "target/services.env";

/// Names of the variables `cargo xtask services up` writes.
pub mod vars {
    /// `postgres://app:…@127.0.0.1:PORT/app`
    pub const PG_URL: &str = "PTAH_TEST_PG_URL";
    /// `postgres://postgres:…@127.0.0.1:PORT/postgres` (superuser)
    pub const PG_ADMIN_URL: &str = "PTAH_TEST_PG_ADMIN_URL";
    /// `mysql://app:…@127.0.0.1:PORT/app`
    pub const MYSQL_URL: &str = "PTAH_TEST_MYSQL_URL";
    /// `mysql://ptah_admin:…@127.0.0.1:PORT/mysql` (all privileges, with grant option)
    pub const MYSQL_ADMIN_URL: &str = "PTAH_TEST_MYSQL_ADMIN_URL";
    /// Absolute path of the PEM CA certificate PostgreSQL's TLS certificate (for `localhost`) chains to
    pub const PG_CA: &str = "PTAH_TEST_PG_CA";
    /// Absolute path of the PEM CA certificate MariaDB's TLS certificate (for `localhost`) chains to
    pub const MYSQL_CA: &str = "PTAH_TEST_MYSQL_CA";
    /// `127.0.0.1:PORT` of the TLS + basic-auth registry
    pub const REGISTRY: &str = "PTAH_TEST_REGISTRY";
    /// Absolute path of the PEM CA certificate the TLS registry's certificate chains to
    pub const REGISTRY_CA: &str = "PTAH_TEST_REGISTRY_CA";
    /// Basic-auth user of the TLS registry
    pub const REGISTRY_USERNAME: &str = "PTAH_TEST_REGISTRY_USERNAME";
    /// Basic-auth password of the TLS registry
    pub const REGISTRY_PASSWORD: &str = "PTAH_TEST_REGISTRY_PASSWORD";
    /// `127.0.0.1:PORT` of the plain-HTTP registry without auth
    pub const REGISTRY_PLAIN: &str = "PTAH_TEST_REGISTRY_PLAIN";
    /// The state directory of the services (data, logs, certificates)
    pub const SERVICES_DIR: &str = "PTAH_SERVICES_DIR";
    /// `http://127.0.0.1:PORT`: Toxiproxy's HTTP API (the fault proxy)
    pub const TOXIPROXY_URL: &str = "PTAH_TEST_TOXIPROXY_URL";
    /// `127.0.0.1:PORT`: PostgreSQL through Toxiproxy (proxy `postgres`)
    pub const PG_PROXY: &str = "PTAH_TEST_PG_PROXY";
    /// `127.0.0.1:PORT`: MariaDB through Toxiproxy (proxy `mariadb`)
    pub const MYSQL_PROXY: &str = "PTAH_TEST_MYSQL_PROXY";
    /// `127.0.0.1:PORT`: the TLS registry through Toxiproxy (proxy `registry`)
    pub const REGISTRY_PROXY: &str = "PTAH_TEST_REGISTRY_PROXY";
    /// `127.0.0.1:PORT`: the plain registry through Toxiproxy (proxy `registry-plain`)
    pub const REGISTRY_PLAIN_PROXY: &str = "PTAH_TEST_REGISTRY_PLAIN_PROXY";
}

/// Why the services cannot be used. Every message contains `cargo xtask services up`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No directory holding `Cargo.lock` above the start directory.
    #[error(
        "cannot find the workspace root (no Cargo.lock in {start} or above); run the tests inside \
         the workspace after `cargo xtask services up`"
    )]
    WorkspaceNotFound {
        /// Where the search started.
        start: PathBuf,
    },
    /// The env file does not exist and the environment does not supply the variable.
    #[error(
        "the test services are not up: {name} is not set and {path} does not exist; run \
         `cargo xtask services up`"
    )]
    NotUp {
        /// The first variable found missing.
        name: &'static str,
        /// The env file looked for.
        path: PathBuf,
    },
    /// The env file exists but lacks a variable.
    #[error(
        "{name} is set neither in the environment nor in {path}; run `cargo xtask services up` \
         to rewrite it"
    )]
    Missing {
        /// The missing variable.
        name: &'static str,
        /// The env file read.
        path: PathBuf,
    },
    /// The env file cannot be read.
    #[error("cannot read {path}: {source}; run `cargo xtask services up`")]
    Read {
        /// The env file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the env file is not `export NAME=value`.
    #[error("{path}:{line}: expected `export NAME=value`; run `cargo xtask services up` to rewrite it")]
    Malformed {
        /// The env file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// A variable is present but unusable (its value is not shown: it may hold a password).
    #[error("{name} is not usable: {reason}; run `cargo xtask services up`")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// A database server: the `app` account and a superuser for creating per-test databases.
#[derive(Clone, Debug)]
pub struct Database {
    /// The `app` user on the `app` database.
    pub url: SecretUrl,
    /// A superuser; create a fresh database per test with it.
    pub admin_url: SecretUrl,
    /// The CA the server's TLS certificate chains to; the certificate names `localhost` (and
    /// the pod network's gateway), not `127.0.0.1`. `None` where the servers run without TLS
    /// (the kind provider's database containers).
    pub ca_path: Option<PathBuf>,
}

impl Database {
    /// The `app` URL pointed at another database, e.g. one a test created with the admin URL.
    pub fn url_for_database(&self, database: &str) -> SecretUrl {
        self.url.with_database(database)
    }

    /// The TLS CA for tests that need TLS; panics, naming the command that provides it, where the
    /// server runs without TLS.
    pub fn require_tls_ca(&self) -> &Path {
        self.ca_path.as_deref().unwrap_or_else(|| {
            panic!(
                "this database server runs without TLS (no {} / {} in the environment): start the \
                 local services with `{UP_COMMAND}`",
                vars::PG_CA,
                vars::MYSQL_CA
            )
        })
    }

    /// The admin URL pointed at another database.
    pub fn admin_url_for_database(&self, database: &str) -> SecretUrl {
        self.admin_url.with_database(database)
    }
}

/// The OCI registry with TLS (private CA) and basic auth.
#[derive(Clone, Debug)]
pub struct Registry {
    /// `127.0.0.1:PORT`, as it appears in references (`127.0.0.1:PORT/repo:tag`).
    pub host: String,
    /// Absolute path of the CA certificate (PEM) to trust.
    pub ca_path: PathBuf,
    /// Basic-auth user.
    pub username: String,
    /// Basic-auth password.
    pub password: Password,
}

impl Registry {
    /// The CA certificate's PEM bytes.
    pub fn ca_pem(&self) -> Result<Vec<u8>, Error> {
        std::fs::read(&self.ca_path).map_err(|source| Error::Read {
            path: self.ca_path.clone(),
            source,
        })
    }
}

/// Everything `cargo xtask services up` started.
#[derive(Clone)]
pub struct TestServices {
    /// PostgreSQL 15.
    pub postgres: Database,
    /// MariaDB 10.11 (standing in for MySQL).
    pub mysql: Database,
    /// The TLS + basic-auth registry.
    pub registry: Registry,
    /// `127.0.0.1:PORT` of the plain-HTTP registry without auth.
    pub plain_registry: String,
    /// The services' state directory, when known.
    pub services_dir: Option<PathBuf>,
    /// Toxiproxy in front of every service, where the env file has it.
    pub fault_proxy: Option<FaultProxy>,
}

impl fmt::Debug for TestServices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every secret field redacts itself; this impl only exists to keep it that way visibly.
        f.debug_struct("TestServices")
            .field("postgres", &self.postgres)
            .field("mysql", &self.mysql)
            .field("registry", &self.registry)
            .field("plain_registry", &self.plain_registry)
            .field("services_dir", &self.services_dir)
            .field("fault_proxy", &self.fault_proxy)
            .finish()
    }
}

impl TestServices {
    /// Reads the services of the workspace this test belongs to: the environment first, then
    /// `target/services.env` of the workspace root.
    pub fn load() -> Result<Self, Error> {
        let root = workspace_root()?;
        Self::load_from(&root.join(ENV_FILE), |name| std::env::var(name).ok())
    }

    /// Like [`TestServices::load`], but panics with a message naming `cargo xtask services up`.
    pub fn require() -> Self {
        match Self::load() {
            Ok(services) => services,
            Err(err) => panic!("test services unavailable: {err}"),
        }
    }

    /// Reads the services from `env_file`, letting `lookup` (normally the process environment)
    /// override any variable. A missing file is fine when `lookup` supplies everything.
    pub fn load_from(env_file: &Path, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let file = match std::fs::read_to_string(env_file) {
            Ok(text) => Some(envfile::parse(&text).map_err(|line| Error::Malformed {
                path: env_file.to_owned(),
                line,
            })?),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(Error::Read {
                    path: env_file.to_owned(),
                    source,
                });
            }
        };
        let sources = Sources {
            file: file.as_ref(),
            path: env_file,
            lookup: &lookup,
        };
        Ok(Self {
            postgres: Database {
                url: sources.url(vars::PG_URL, "postgres://")?,
                admin_url: sources.url(vars::PG_ADMIN_URL, "postgres://")?,
                ca_path: sources.optional_file(vars::PG_CA)?,
            },
            mysql: Database {
                url: sources.url(vars::MYSQL_URL, "mysql://")?,
                admin_url: sources.url(vars::MYSQL_ADMIN_URL, "mysql://")?,
                ca_path: sources.optional_file(vars::MYSQL_CA)?,
            },
            registry: Registry {
                host: sources.host(vars::REGISTRY)?,
                ca_path: sources.file(vars::REGISTRY_CA)?,
                username: sources.get(vars::REGISTRY_USERNAME)?,
                password: Password::new(sources.get(vars::REGISTRY_PASSWORD)?),
            },
            plain_registry: sources.host(vars::REGISTRY_PLAIN)?,
            services_dir: sources.optional(vars::SERVICES_DIR).map(PathBuf::from),
            fault_proxy: faultproxy::load(&sources)?,
        })
    }

    /// The fault proxy; panics, naming `cargo xtask services up`, where the env file has none.
    pub fn require_fault_proxy(&self) -> &FaultProxy {
        match &self.fault_proxy {
            Some(proxy) => proxy,
            None => faultproxy::missing(),
        }
    }
}

/// Where variables come from: the environment, then the env file.
struct Sources<'a, L> {
    file: Option<&'a HashMap<String, String>>,
    path: &'a Path,
    lookup: &'a L,
}

impl<L: Fn(&str) -> Option<String>> Sources<'_, L> {
    fn optional(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
            .filter(|v| !v.is_empty())
            .or_else(|| self.file.and_then(|f| f.get(name).cloned()))
            .filter(|v| !v.is_empty())
    }

    fn get(&self, name: &'static str) -> Result<String, Error> {
        self.optional(name).ok_or_else(|| match self.file {
            None => Error::NotUp {
                name,
                path: self.path.to_owned(),
            },
            Some(_) => Error::Missing {
                name,
                path: self.path.to_owned(),
            },
        })
    }

    fn url(&self, name: &'static str, scheme: &str) -> Result<SecretUrl, Error> {
        let value = self.get(name)?;
        if !value.starts_with(scheme) || !value.contains('@') {
            return Err(Error::Invalid {
                name,
                reason: format!("expected a {scheme}user:password@host:port/database URL"),
            });
        }
        Ok(SecretUrl::new(value))
    }

    fn host(&self, name: &'static str) -> Result<String, Error> {
        let value = self.get(name)?;
        let valid = value
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !valid {
            return Err(Error::Invalid {
                name,
                reason: format!("expected host:port, got {value:?}"),
            });
        }
        Ok(value)
    }

    /// A variable that, when set, names a file that must exist.
    fn optional_file(&self, name: &'static str) -> Result<Option<PathBuf>, Error> {
        match self.optional(name) {
            Some(_) => self.file(name).map(Some),
            None => Ok(None),
        }
    }

    /// A variable naming a file that must exist.
    fn file(&self, name: &'static str) -> Result<PathBuf, Error> {
        let path = PathBuf::from(self.get(name)?);
        if !path.is_file() {
            return Err(Error::Invalid {
                name,
                reason: format!("{} does not exist", path.display()),
            });
        }
        Ok(path)
    }
}

/// The workspace root: the nearest directory holding `Cargo.lock`, searched upwards from the
/// caller's `CARGO_MANIFEST_DIR` (set by cargo and nextest when running tests) or else from the
/// current directory.
pub fn workspace_root() -> Result<PathBuf, Error> {
    let start = match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().map_err(|source| Error::Read {
            path: PathBuf::from("."),
            source,
        })?,
    };
    start
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .map(Path::to_owned)
        .ok_or(Error::WorkspaceNotFound { start })
}

/// A name unique to this process and call, usable as a database name and as an OCI repository
/// path component: `prefix_<time>_<pid>_<n>` in lowercase ASCII letters, digits and `_`.
pub fn unique_name(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{prefix}_{nanos:x}_{}_{n}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const FILE: &str = "\
# written by cargo xtask services up
export PTAH_SERVICES_DIR='/var/tmp/ptah-services/abc'
export PTAH_TEST_PG_URL='postgres://app:pgSECRET1@127.0.0.1:55432/app'
export PTAH_TEST_PG_ADMIN_URL='postgres://postgres:pgSECRET2@127.0.0.1:55432/postgres'
export PTAH_TEST_MYSQL_URL='mysql://app:mySECRET1@127.0.0.1:53306/app'
export PTAH_TEST_MYSQL_ADMIN_URL='mysql://ptah_admin:mySECRET2@127.0.0.1:53306/mysql'
export PTAH_TEST_PG_CA='DBCA_FILE'
export PTAH_TEST_MYSQL_CA='DBCA_FILE'
export PTAH_TEST_REGISTRY='127.0.0.1:55443'
export PTAH_TEST_REGISTRY_CA='CA_PATH'
export PTAH_TEST_REGISTRY_USERNAME='ptah'
export PTAH_TEST_REGISTRY_PASSWORD='regSECRET'
export PTAH_TEST_REGISTRY_PLAIN='127.0.0.1:55000'
";

    /// A scratch directory holding an env file and a CA file.
    pub(crate) fn fixture(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(unique_name(name));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, "pem").expect("ca");
        let env = dir.join("services.env");
        let text = text
            .replace("CA_PATH", &ca.to_string_lossy())
            .replace("DBCA_FILE", &ca.to_string_lossy());
        std::fs::write(&env, text).expect("env file");
        env
    }

    pub(crate) fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn reads_every_variable_from_the_file() {
        let env = fixture("reads", FILE);
        let s = TestServices::load_from(&env, no_env).expect("load");
        assert_eq!(
            s.postgres.url.expose(),
            "postgres://app:pgSECRET1@127.0.0.1:55432/app"
        );
        assert_eq!(
            s.mysql.admin_url.expose(),
            "mysql://ptah_admin:mySECRET2@127.0.0.1:53306/mysql"
        );
        assert_eq!(s.registry.host, "127.0.0.1:55443");
        assert_eq!(s.registry.username, "ptah");
        assert_eq!(s.registry.password.expose(), "regSECRET");
        assert_eq!(s.registry.ca_pem().expect("ca"), b"pem");
        assert_eq!(s.plain_registry, "127.0.0.1:55000");
        assert!(s.postgres.require_tls_ca().is_file());
        assert!(s.mysql.ca_path.is_some());
        assert_eq!(s.services_dir, Some(PathBuf::from("/var/tmp/ptah-services/abc")));
    }

    #[test]
    fn the_environment_wins_over_the_file() {
        let env = fixture("wins", FILE);
        let s = TestServices::load_from(&env, |name| {
            (name == vars::REGISTRY_PLAIN).then(|| "localhost:1234".to_owned())
        })
        .expect("load");
        assert_eq!(s.plain_registry, "localhost:1234");
        assert_eq!(s.registry.host, "127.0.0.1:55443");
    }

    #[test]
    fn a_missing_file_says_to_run_services_up() {
        let path = std::env::temp_dir()
            .join(unique_name("absent"))
            .join("services.env");
        let err = TestServices::load_from(&path, no_env).expect_err("must fail");
        assert!(matches!(err, Error::NotUp { .. }), "{err:?}");
        assert!(err.to_string().contains("cargo xtask services up"), "{err}");
    }

    #[test]
    fn a_missing_variable_names_it_and_the_command() {
        let text: String = FILE
            .lines()
            .filter(|l| !l.contains("MYSQL_URL="))
            .map(|l| format!("{l}\n"))
            .collect();
        let env = fixture("missing", &text);
        let err = TestServices::load_from(&env, no_env).expect_err("must fail");
        let message = err.to_string();
        assert!(message.contains("PTAH_TEST_MYSQL_URL"), "{message}");
        assert!(message.contains("cargo xtask services up"), "{message}");
    }

    #[test]
    fn a_malformed_line_is_reported_with_its_number() {
        let env = fixture("malformed", "export A='1'\nthis is not an assignment\n");
        let err = TestServices::load_from(&env, no_env).expect_err("must fail");
        assert!(matches!(err, Error::Malformed { line: 2, .. }), "{err:?}");
    }

    #[test]
    fn a_missing_ca_file_is_refused() {
        let env = fixture("noca", &FILE.replace("CA_PATH", "/nonexistent/ca.pem"));
        let err = TestServices::load_from(&env, no_env).expect_err("must fail");
        assert!(
            matches!(
                err,
                Error::Invalid {
                    name: vars::REGISTRY_CA,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn debug_output_never_shows_a_password() {
        let env = fixture("debug", FILE);
        let s = TestServices::load_from(&env, no_env).expect("load");
        let debug = format!("{s:?}");
        for secret in ["pgSECRET1", "pgSECRET2", "mySECRET1", "mySECRET2", "regSECRET"] {
            assert!(!debug.contains(secret), "{secret} leaked: {debug}");
        }
        assert!(debug.contains("127.0.0.1:55432"), "{debug}");
        assert!(debug.contains("ptah_admin"), "{debug}");
    }

    #[test]
    fn urls_can_point_at_another_database() {
        let env = fixture("otherdb", FILE);
        let s = TestServices::load_from(&env, no_env).expect("load");
        assert_eq!(
            s.postgres.url_for_database("t_1").expose(),
            "postgres://app:pgSECRET1@127.0.0.1:55432/t_1"
        );
        assert_eq!(
            s.mysql.admin_url_for_database("t_2").expose(),
            "mysql://ptah_admin:mySECRET2@127.0.0.1:53306/t_2"
        );
    }

    #[test]
    fn unique_names_differ_and_are_valid_identifiers() {
        let a = unique_name("t");
        let b = unique_name("t");
        assert_ne!(a, b);
        assert!(
            a.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_'),
            "{a}"
        );
    }

    #[test]
    fn the_workspace_root_holds_cargo_lock() {
        let root = workspace_root().expect("root");
        assert!(root.join("Cargo.lock").is_file());
        assert!(root.join("crates/testservices/Cargo.toml").is_file());
    }
}
