//! The target identity: which physical database, as which user, under which session semantics a
//! database URL reaches, hashed to a [`Fingerprint`]. The manager computes it from the URL in the
//! realm's Secret; the runner recomputes it from the URL its Pod got and refuses to start `ptah`
//! when they differ.
//!
//! The refusals follow `ptah_engine::DatabaseUrl::parse` (`crates/engine/src/url.rs`) so that a
//! URL the runner accepts is never read differently by the executor: the same schemes, the same
//! multi-statement switch test (any key whose alphanumerics contain `multistatement` or
//! `multiquer`), several hosts (a comma in the host, `host`/`hostaddr` in the query) refused, and
//! `user`/`password`/`dbname` refused in the query. This crate is stricter where the identity
//! needs it: a repeated query key, a fragment, user or database names that are not UTF-8 once
//! decoded, MySQL session-SQL parameters, and an IPv6 MySQL host without a port are refused.
//! It accepts TLS modes the engine does not implement yet (the engine refuses them itself) so the
//! identity of a URL does not change when the engine learns them.
//!
//! In the identity: engine family, address family, host (ASCII-lowercased; a DNS trailing dot is
//! kept), port (default filled in), database (case kept), user, TLS mode (default `disable`, as
//! in the engine) and semantic session options. Out of it: the password, timing knobs (any key
//! containing `timeout`, `keepalives*`) and `application_name`.

use std::{
    collections::{BTreeMap, BTreeSet},
    net::{Ipv4Addr, Ipv6Addr},
};

use percent_encoding::percent_decode_str;
use ptah_fingerprint::Fingerprint;
use serde::Serialize;
use url::{Host, Url};

/// The identity document's version; part of what is hashed.
pub const IDENTITY_VERSION: u32 = 1;

/// Why a URL has no target identity. No variant carries the password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// Not a URL, or a part of it is missing or malformed.
    #[error("invalid database URL: {0}")]
    Invalid(&'static str),
    /// A scheme other than postgres/postgresql/mysql/mariadb.
    #[error("unsupported database URL scheme")]
    UnsupportedScheme,
    /// Several hosts (a comma in the host, or `host`/`hostaddr` in the query).
    #[error("several hosts are refused; name exactly one")]
    SeveralHosts,
    /// A MySQL multi-statement switch.
    #[error("multi-statement mode is refused")]
    MultiStatements,
    /// A parameter that runs SQL when the session starts.
    #[error("session SQL parameter {0:?} is refused")]
    SessionSql(String),
    /// The same query key twice, or two spellings of one setting.
    #[error("query parameter {0:?} is given more than once")]
    Ambiguous(String),
    /// A query key the identity does not know.
    #[error("unsupported query parameter {0:?}")]
    UnsupportedParameter(String),
    /// A TLS mode it does not know (the value is not repeated: it might be a misplaced secret).
    #[error("unsupported TLS mode")]
    UnsupportedTls,
    /// A MySQL URL with an IPv6 host and no port.
    #[error("an IPv6 MySQL URL must name its port")]
    Ipv6WithoutPort,
}

/// The engine family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// PostgreSQL.
    Postgresql,
    /// MySQL or MariaDB.
    Mysql,
}

impl Engine {
    /// `postgresql` or `mysql`.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Postgresql => "postgresql",
            Engine::Mysql => "mysql",
        }
    }
}

/// The normalised target of a database URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetIdentity {
    version: u32,
    engine: Engine,
    address_family: &'static str,
    host: String,
    port: u16,
    database: String,
    user: String,
    tls: &'static str,
    session_options: BTreeMap<String, String>,
}

fn is_multi_statement_switch(name: &str) -> bool {
    let folded: String = name.chars().filter(char::is_ascii_alphanumeric).collect();
    let folded = folded.to_ascii_lowercase();
    folded.contains("multistatement") || folded.contains("multiquer")
}

fn fold(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

fn is_session_sql(name: &str) -> bool {
    let f = fold(name);
    f.contains("initcommand") || f == "init" || f.contains("sessionvariables") || f.contains("initsql")
}

fn is_timing_knob(name: &str) -> bool {
    let f = fold(name);
    f.contains("timeout") || f.starts_with("keepalives")
}

fn tls_mode(value: &str) -> Result<&'static str, IdentityError> {
    Ok(match value.to_ascii_lowercase().replace('_', "-").as_str() {
        "disable" | "disabled" => "disable",
        "prefer" | "preferred" => "prefer",
        "require" | "required" => "require",
        "verify-ca" => "verify-ca",
        "verify-full" | "verify-identity" => "verify-full",
        _ => return Err(IdentityError::UnsupportedTls),
    })
}

fn decode(s: &str) -> Result<String, IdentityError> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| IdentityError::Invalid("a name is not UTF-8 once decoded"))
}

fn session_option(engine: Engine, key: &str) -> Option<&'static str> {
    match (engine, key) {
        (Engine::Postgresql, "options") => Some("options"),
        (Engine::Postgresql, "target_session_attrs") => Some("target_session_attrs"),
        (Engine::Mysql, "charset") => Some("charset"),
        (Engine::Mysql, "collation") => Some("collation"),
        _ => None,
    }
}

impl TargetIdentity {
    /// Parses a database URL into its identity; refusals are typed and never carry the password.
    pub fn from_url(text: &str) -> Result<Self, IdentityError> {
        use IdentityError as E;
        if text.is_empty() || text.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(E::Invalid("empty, or contains whitespace or control characters"));
        }
        let url = Url::parse(text).map_err(|_| E::Invalid("not a URL"))?;
        let engine = match url.scheme() {
            "postgres" | "postgresql" => Engine::Postgresql,
            "mysql" | "mariadb" => Engine::Mysql,
            _ => return Err(E::UnsupportedScheme),
        };
        if url.fragment().is_some() {
            return Err(E::Invalid("a fragment is not allowed"));
        }
        let (address_family, host) = match url.host() {
            None => return Err(E::Invalid("the URL names no host")),
            Some(Host::Ipv6(addr)) => ("ipv6", addr.to_string()),
            Some(Host::Ipv4(addr)) => ("ipv4", addr.to_string()),
            Some(Host::Domain(d)) => {
                let d = decode(d)?;
                if d.contains(',') {
                    return Err(E::SeveralHosts);
                }
                if d.is_empty() {
                    return Err(E::Invalid("the URL names no host"));
                }
                if let Ok(v4) = d.parse::<Ipv4Addr>() {
                    ("ipv4", v4.to_string())
                } else if d.parse::<Ipv6Addr>().is_ok() {
                    return Err(E::Invalid("an IPv6 host must be in brackets"));
                } else {
                    ("dns", d.to_ascii_lowercase())
                }
            }
        };
        if engine == Engine::Mysql && address_family == "ipv6" && url.port().is_none() {
            return Err(E::Ipv6WithoutPort);
        }
        let port = url.port().unwrap_or(match engine {
            Engine::Postgresql => 5432,
            Engine::Mysql => 3306,
        });
        let database = decode(url.path().strip_prefix('/').unwrap_or(url.path()))?;
        if database.is_empty() || database.contains('/') {
            return Err(E::Invalid("the URL must name exactly one database in its path"));
        }
        let user = decode(url.username())?;
        if user.is_empty() {
            return Err(E::Invalid("the URL names no user"));
        }
        let mut seen = BTreeSet::new();
        let mut tls = "disable";
        let mut session_options = BTreeMap::new();
        for (key, value) in url.query_pairs() {
            let key = key.into_owned();
            if is_multi_statement_switch(&key) {
                return Err(E::MultiStatements);
            }
            if is_session_sql(&key) {
                return Err(E::SessionSql(key.chars().take(64).collect()));
            }
            let canonical = match key.as_str() {
                "host" | "hostaddr" => return Err(E::SeveralHosts),
                "password" | "user" | "dbname" => {
                    return Err(E::Invalid("user, password and dbname belong in the URL itself"));
                }
                "sslmode" | "ssl-mode" | "ssl_mode" => "sslmode".to_owned(),
                other => other.to_owned(),
            };
            if !seen.insert(canonical.clone()) {
                return Err(E::Ambiguous(key.chars().take(64).collect()));
            }
            if canonical == "sslmode" {
                tls = tls_mode(&value)?;
            } else if canonical == "application_name" || is_timing_knob(&canonical) {
                // Labels and timing knobs do not change which database is reached or how.
            } else if let Some(name) = session_option(engine, &canonical) {
                session_options.insert(name.to_owned(), value.into_owned());
            } else {
                return Err(E::UnsupportedParameter(key.chars().take(64).collect()));
            }
        }
        Ok(TargetIdentity {
            version: IDENTITY_VERSION,
            engine,
            address_family,
            host,
            port,
            database,
            user,
            tls,
            session_options,
        })
    }

    /// The engine family.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// The fingerprint over the identity's canonical JSON.
    pub fn digest(&self) -> Result<Fingerprint, ptah_fingerprint::Error> {
        Fingerprint::of(self)
    }
}
