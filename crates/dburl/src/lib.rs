//! The one reading of a database URL (`postgres://`, `postgresql://`, `mysql://`, `mariadb://`).
//!
//! The manager hashes a realm's URL into its target identity (`ptah-dataplane`), the runner
//! recomputes that identity from the URL its Pod got, and the executor connects with it
//! (`ptah-engine`). All three read the URL through [`DbUrl::parse`], so a URL that is accepted is
//! read the same everywhere, and one that is refused is refused everywhere. Pure: no driver, no
//! Kubernetes client, no runtime.
//!
//! Decisions, where the identity's and the executor's former parsers disagreed:
//!
//! * **Host**: percent-decoded, then read as an IPv4 address, a bracketed IPv6 address or a DNS
//!   name (ASCII-lowercased; a trailing dot is kept, it names another lookup). A comma, even
//!   encoded (`%2C`), is several hosts and refused; so are `host`/`hostaddr` in the query and an
//!   unbracketed IPv6 address. A MySQL URL with an IPv6 host must name its port. The executor
//!   dials exactly the host read here (it used to dial the undecoded text).
//! * **Names**: user, database and password are percent-decoded and must be UTF-8 (nothing is
//!   replaced by `�`); the path holds exactly one database (`//d` and `/d/e` are refused).
//! * **Query**: each key at most once, counting the spellings `sslmode`/`ssl-mode`/`ssl_mode` as
//!   one. Accepted, for both engines: the TLS mode, `application_name`, and timing knobs (a key
//!   containing `timeout`, or starting with `keepalives`), which change neither the target nor
//!   the session's semantics and which the executor does not apply (its deadlines come from the
//!   operation). Everything else is refused, in particular what would change the session without
//!   the executor knowing: PostgreSQL `options` (any server setting, `search_path` included) and
//!   `target_session_attrs`, MySQL `charset` and `collation`, multi-statement switches and
//!   session-SQL parameters (`init_command`, `sessionVariables`, …). The target identity used to
//!   accept those four as "session options" the executor then refused; no such URL ever ran.
//! * **TLS**: `disable`, `require`, `verify-ca`, `verify-full` (MySQL spellings `DISABLED`,
//!   `REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY`; any case, `_` or `-`), default `disable`. Modes
//!   that fall back to plaintext (`prefer`, `allow`, `PREFERRED`) are refused everywhere; the
//!   identity used to accept them for an executor that refused them.
//! * **Fragment**: refused.
//!
//! No error, `Debug` or `Display` of this crate shows the password.

mod parse;
mod query;

use std::fmt;

/// The engine family a URL's scheme names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// PostgreSQL (`postgres://`, `postgresql://`).
    Postgresql,
    /// MySQL or MariaDB (`mysql://`, `mariadb://`).
    Mysql,
}

impl Engine {
    /// `postgresql` or `mysql`, as the API's engine canonicalisation and the identity write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Postgresql => "postgresql",
            Engine::Mysql => "mysql",
        }
    }

    /// The port a URL without one reaches (5432, 3306).
    pub fn default_port(self) -> u16 {
        match self {
            Engine::Postgresql => 5432,
            Engine::Mysql => 3306,
        }
    }
}

/// What kind of address a host is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressFamily {
    /// A DNS name.
    Dns,
    /// An IPv4 address.
    Ipv4,
    /// An IPv6 address (bracketed in the URL).
    Ipv6,
}

impl AddressFamily {
    /// `dns`, `ipv4` or `ipv6`, as the identity writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressFamily::Dns => "dns",
            AddressFamily::Ipv4 => "ipv4",
            AddressFamily::Ipv6 => "ipv6",
        }
    }
}

/// The one host a URL names, in canonical text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Host {
    family: AddressFamily,
    name: String,
}

impl Host {
    /// Its address family.
    pub fn family(&self) -> AddressFamily {
        self.family
    }

    /// The name to dial: a lowercase DNS name, a dotted IPv4 address, or an IPv6 address in its
    /// compressed form without brackets.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for Host {
    /// As in a URL: an IPv6 address in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.family {
            AddressFamily::Ipv6 => write!(f, "[{}]", self.name),
            _ => f.write_str(&self.name),
        }
    }
}

/// The TLS requirement of `sslmode` / `ssl-mode` / `ssl_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    /// The canonical name (`disable`, `require`, `verify-ca`, `verify-full`).
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMode::Disable => "disable",
            TlsMode::Require => "require",
            TlsMode::VerifyCa => "verify-ca",
            TlsMode::VerifyFull => "verify-full",
        }
    }
}

/// A decoded password: shown as `***` by `Debug`, readable only through [`Password::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// The password itself, for handing to a driver or scrubbing text; never for printing.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A parsed database URL (see the crate documentation for what is accepted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbUrl {
    engine: Engine,
    host: Host,
    port: u16,
    user: String,
    password: Option<Password>,
    database: String,
    tls: TlsMode,
    application_name: Option<String>,
}

impl DbUrl {
    /// Parses a URL; every refusal is a typed [`Error`] without the password in it.
    pub fn parse(text: &str) -> Result<DbUrl, Error> {
        parse::parse(text)
    }

    /// The engine family.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The one host.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The TCP port (the engine's default filled in).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The user name, decoded.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The password, decoded, if the URL has one.
    pub fn password(&self) -> Option<&Password> {
        self.password.as_ref()
    }

    /// The database (MySQL: the schema), decoded, case kept.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The TLS requirement.
    pub fn tls(&self) -> TlsMode {
        self.tls
    }

    /// The application name to report to the server, if set.
    pub fn application_name(&self) -> Option<&str> {
        self.application_name.as_deref()
    }

    /// The same URL naming another database (scratch databases, tests).
    pub fn with_database(&self, database: &str) -> DbUrl {
        DbUrl {
            database: database.to_owned(),
            ..self.clone()
        }
    }
}

/// Why a URL is refused. No variant carries the password or a query value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Empty, not a URL, or a part of it is missing or malformed.
    #[error("invalid database URL: {0}")]
    Invalid(&'static str),
    /// A scheme other than postgres/postgresql/mysql/mariadb.
    #[error("unsupported scheme; want postgres://, postgresql://, mysql:// or mariadb://")]
    UnsupportedScheme,
    /// Several hosts (a comma in the host, or `host`/`hostaddr` in the query).
    #[error("several hosts are refused; name exactly one")]
    SeveralHosts,
    /// A multi-statement switch (any key whose alphanumerics contain `multistatement` or
    /// `multiquer`): it would let one statement string smuggle extra statements.
    #[error("multi-statement mode is refused")]
    MultiStatements,
    /// A parameter that runs SQL when the session starts (its key, at most 64 characters).
    #[error("session SQL parameter {0:?} is refused")]
    SessionSql(String),
    /// The same query key twice, or two spellings of one setting (the key, at most 64
    /// characters).
    #[error("query parameter {0:?} is given more than once")]
    Ambiguous(String),
    /// A query key that is not accepted (the key, at most 64 characters).
    #[error("unsupported query parameter {0:?}")]
    UnsupportedParameter(String),
    /// A TLS mode that is not one of the four, or one that falls back to plaintext (the value is
    /// not repeated: it might be a misplaced secret).
    #[error(
        "unsupported TLS mode; use disable, require, verify-ca or verify-full (MySQL: DISABLED, \
         REQUIRED, VERIFY_CA, VERIFY_IDENTITY); a mode that falls back to plaintext is never accepted"
    )]
    UnsupportedTls,
    /// A MySQL URL with an IPv6 host and no port.
    #[error("an IPv6 MySQL URL must name its port")]
    Ipv6WithoutPort,
}
