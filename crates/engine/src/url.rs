//! Database URLs: parsed once, refused when unsafe, and never printed with their password.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use percent_encoding::percent_decode_str;
use url::Url;

use crate::Error;

pub use ptah_schema::Dialect;

/// The canonical lowercase name, as the API's engine canonicalisation writes it.
pub fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "postgresql",
        Dialect::Mysql => "mysql",
    }
}

fn default_port(dialect: Dialect) -> u16 {
    match dialect {
        Dialect::Postgres => 5432,
        Dialect::Mysql => 3306,
    }
}

/// TLS requirement read from `sslmode` / `ssl-mode`, in libpq's and MySQL's spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Plain TCP (`disable`/`DISABLED`, the default when the URL says nothing).
    Disable,
    /// Encrypted; the certificate is checked only when a CA bundle is given (`require`/`REQUIRED`).
    Require,
    /// Encrypted, the chain checked against the CA bundle (`verify-ca`/`VERIFY_CA`).
    VerifyCa,
    /// Encrypted, the chain and the host name checked (`verify-full`/`VERIFY_IDENTITY`).
    VerifyFull,
}

impl TlsMode {
    /// Reads a mode; `prefer`/`allow`/`PREFERRED` are refused, since they fall back to plaintext.
    fn parse(value: &str) -> Result<TlsMode, Error> {
        Ok(match value.to_ascii_lowercase().replace('_', "-").as_str() {
            "disable" | "disabled" => TlsMode::Disable,
            "require" | "required" => TlsMode::Require,
            "verify-ca" => TlsMode::VerifyCa,
            "verify-full" | "verify-identity" => TlsMode::VerifyFull,
            _ => {
                return Err(Error::UnsupportedTls {
                    mode: value.chars().take(32).collect(),
                });
            }
        })
    }

    /// The canonical name, as the target identity writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }
}

/// A validated database URL. `Display` and `Debug` show it with the password masked.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    dialect: Dialect,
    host: String,
    port: u16,
    user: String,
    password: Option<String>,
    database: String,
    tls: TlsMode,
    ca_file: Option<PathBuf>,
    application_name: Option<String>,
}

/// Query parameters that would let one statement string run several statements.
fn is_multi_statement_switch(name: &str) -> bool {
    let folded: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let folded = folded.to_ascii_lowercase();
    folded.contains("multistatement") || folded.contains("multiquer")
}

impl DatabaseUrl {
    /// Parses and validates a URL; every refusal is a typed error without the password in it.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let invalid = |reason: &str| Error::InvalidUrl {
            reason: reason.to_owned(),
        };
        if text.is_empty() {
            return Err(invalid("the URL is empty"));
        }
        if text.trim() != text || text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(invalid("the URL contains whitespace or control characters"));
        }
        let url = Url::parse(text).map_err(|e| invalid(&format!("not a URL ({e})")))?;
        let dialect = match url.scheme() {
            "postgres" | "postgresql" => Dialect::Postgres,
            "mysql" | "mariadb" => Dialect::Mysql,
            other => {
                return Err(invalid(&format!(
                    "unsupported scheme {other:?}; want postgres:// or mysql://"
                )));
            }
        };
        let host = url.host_str().unwrap_or_default();
        if host.contains(',') {
            return Err(Error::SeveralHosts);
        }
        if host.is_empty() {
            return Err(invalid("the URL names no host"));
        }
        let database = decode(url.path().trim_start_matches('/'));
        if database.is_empty() || database.contains('/') {
            return Err(invalid("the URL must name exactly one database in its path"));
        }
        let user = decode(url.username());
        if user.is_empty() {
            return Err(invalid("the URL names no user"));
        }
        let password = url.password().map(decode);
        let mut tls = TlsMode::Disable;
        let mut application_name = None;
        for (name, value) in url.query_pairs() {
            match name.as_ref() {
                n if is_multi_statement_switch(n) => return Err(Error::MultiStatements),
                "host" | "hostaddr" => return Err(Error::SeveralHosts),
                "password" | "user" | "dbname" => {
                    return Err(invalid(&format!(
                        "{name} belongs in the URL itself, not in the query"
                    )));
                }
                "sslmode" | "ssl-mode" | "ssl_mode" => tls = TlsMode::parse(&value)?,
                "application_name" => application_name = Some(value.into_owned()),
                "connect_timeout" => {}
                other => return Err(invalid(&format!("unsupported query parameter {other:?}"))),
            }
        }
        Ok(DatabaseUrl {
            dialect,
            host: host.trim_start_matches('[').trim_end_matches(']').to_owned(),
            port: url.port().unwrap_or(default_port(dialect)),
            user,
            password,
            database,
            tls,
            ca_file: None,
            application_name,
        })
    }

    /// The database family.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The host name or address.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The database (MySQL: the schema) the URL names.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The TLS requirement.
    pub fn tls(&self) -> TlsMode {
        self.tls
    }

    /// The CA bundle (PEM) the TLS modes check the server's certificate against, if one is given.
    pub fn ca_file(&self) -> Option<&Path> {
        self.ca_file.as_deref()
    }

    /// The same URL with a CA bundle (the CLI's `--db-ca-file` / `PTAH_DB_CA_FILE`).
    pub fn with_ca_file(self, path: Option<PathBuf>) -> DatabaseUrl {
        DatabaseUrl {
            ca_file: path,
            ..self
        }
    }

    /// The application name to report to the server, if set.
    pub fn application_name(&self) -> Option<&str> {
        self.application_name.as_deref()
    }

    /// The password; only for handing to a driver, never for printing.
    pub(crate) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// Removes the password from any text, in case a driver message ever echoes it.
    pub fn scrub(&self, text: &str) -> String {
        match self.password.as_deref() {
            Some(pw) if !pw.is_empty() => text.replace(pw, "***"),
            _ => text.to_owned(),
        }
    }

    /// The same database with another name (tests and scratch databases).
    pub fn with_database(&self, database: &str) -> DatabaseUrl {
        DatabaseUrl {
            database: database.to_owned(),
            ..self.clone()
        }
    }
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.dialect {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        };
        let password = if self.password.is_some() { ":***" } else { "" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(
            f,
            "{scheme}://{}{password}@{host}:{}/{}",
            self.user, self.port, self.database
        )
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

impl std::str::FromStr for DatabaseUrl {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        DatabaseUrl::parse(s)
    }
}
