//! Database URLs: read once by `ptah_dburl` (the reading the target identity uses too), refused
//! when unsafe, and never printed with their password. This module maps the parsed form onto the
//! engine's dialect and errors; `session` maps it onto the drivers' configurations.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use ptah_dburl::{DbUrl, Engine};

use crate::Error;

pub use ptah_dburl::TlsMode;
pub use ptah_schema::Dialect;

/// The canonical lowercase name, as the API's engine canonicalisation writes it.
pub fn dialect_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "postgresql",
        Dialect::Mysql => "mysql",
    }
}

/// A validated database URL. `Display` and `Debug` show it with the password masked.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl {
    parsed: DbUrl,
    dialect: Dialect,
    ca_file: Option<PathBuf>,
}

impl From<ptah_dburl::Error> for Error {
    fn from(err: ptah_dburl::Error) -> Error {
        use ptah_dburl::Error as E;
        match err {
            E::MultiStatements => Error::MultiStatements,
            E::SeveralHosts => Error::SeveralHosts,
            E::UnsupportedTls => Error::UnsupportedTls,
            E::Invalid(reason) => Error::InvalidUrl {
                reason: reason.to_owned(),
            },
            other => Error::InvalidUrl {
                reason: other.to_string(),
            },
        }
    }
}

impl DatabaseUrl {
    /// Parses and validates a URL; every refusal is a typed error without the password in it.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let parsed = DbUrl::parse(text)?;
        let dialect = match parsed.engine() {
            Engine::Postgresql => Dialect::Postgres,
            Engine::Mysql => Dialect::Mysql,
        };
        Ok(DatabaseUrl {
            parsed,
            dialect,
            ca_file: None,
        })
    }

    /// The database family.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The host to dial: a DNS name, an IPv4 address, or an IPv6 address without brackets.
    pub fn host(&self) -> &str {
        self.parsed.host().name()
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.parsed.port()
    }

    /// The user name.
    pub fn user(&self) -> &str {
        self.parsed.user()
    }

    /// The database (MySQL: the schema) the URL names.
    pub fn database(&self) -> &str {
        self.parsed.database()
    }

    /// The TLS requirement.
    pub fn tls(&self) -> TlsMode {
        self.parsed.tls()
    }

    /// The URL as `ptah_dburl` read it (what the target identity is computed from).
    pub fn parsed(&self) -> &DbUrl {
        &self.parsed
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
        self.parsed.application_name()
    }

    /// The password; only for handing to a driver, never for printing.
    pub(crate) fn password(&self) -> Option<&str> {
        self.parsed.password().map(|p| p.expose())
    }

    /// Removes the password from any text, in case a driver message ever echoes it.
    pub fn scrub(&self, text: &str) -> String {
        match self.password() {
            Some(pw) if !pw.is_empty() => text.replace(pw, "***"),
            _ => text.to_owned(),
        }
    }

    /// The same database with another name (tests and scratch databases).
    pub fn with_database(&self, database: &str) -> DatabaseUrl {
        DatabaseUrl {
            parsed: self.parsed.with_database(database),
            ..self.clone()
        }
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match self.dialect {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        };
        let password = if self.parsed.password().is_some() {
            ":***"
        } else {
            ""
        };
        // Host's Display puts an IPv6 address in brackets, as a URL writes it.
        let host = self.parsed.host();
        write!(
            f,
            "{scheme}://{}{password}@{host}:{}/{}",
            self.user(),
            self.port(),
            self.database()
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
