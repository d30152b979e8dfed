//! The query string: which keys are accepted, and what they set.

use std::collections::BTreeSet;

use crate::{Error, TlsMode};

/// What the query sets.
#[derive(Debug, Default)]
pub(crate) struct Query {
    pub tls: Option<TlsMode>,
    pub application_name: Option<String>,
}

/// The key's ASCII letters and digits, lowercased: `multi_statements`, `multiStatements` and
/// `CLIENT_MULTI_STATEMENTS` are one switch to every driver that knows one of them.
fn fold(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

fn is_multi_statement_switch(name: &str) -> bool {
    let f = fold(name);
    f.contains("multistatement") || f.contains("multiquer")
}

fn is_session_sql(name: &str) -> bool {
    let f = fold(name);
    f.contains("initcommand") || f == "init" || f.contains("sessionvariables") || f.contains("initsql")
}

/// Connect, read, write and keep-alive knobs: they change neither which database is reached nor
/// what a session does there, so they are accepted (URLs are copied from application configs)
/// and left to the executor's own deadlines.
fn is_timing_knob(name: &str) -> bool {
    let f = fold(name);
    f.contains("timeout") || f.starts_with("keepalives")
}

/// `sslmode` in libpq's and MySQL's spellings, in any case, with `_` or `-`.
fn tls_mode(value: &str) -> Result<TlsMode, Error> {
    Ok(match value.to_ascii_lowercase().replace('_', "-").as_str() {
        "disable" | "disabled" => TlsMode::Disable,
        "require" | "required" => TlsMode::Require,
        "verify-ca" => TlsMode::VerifyCa,
        "verify-full" | "verify-identity" => TlsMode::VerifyFull,
        // `prefer`, `allow` and `preferred` fall back to plaintext when the server has no TLS.
        _ => return Err(Error::UnsupportedTls),
    })
}

/// A key for an error message: never a value, at most 64 characters.
/// A key as a refusal may quote it: a parameter name (ASCII letters, digits, `_`, `-`, `.`, at
/// most 64) that does not hold the password. Anything else may be a misplaced secret and is
/// described, never quoted.
fn shown(key: &str, password: Option<&str>) -> String {
    let name_like = key.len() <= 64
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    let holds_password = password.is_some_and(|p| !p.is_empty() && key.contains(p));
    if name_like && !holds_password {
        key.to_owned()
    } else {
        format!("<{} characters, not shown>", key.chars().count())
    }
}

/// Reads the query pairs. The accepted keys are the same for both engines: the per-engine
/// settings the target identity once accepted (`options`, `target_session_attrs`, `charset`,
/// `collation`) are refused for both, since the executor does not apply them.
pub(crate) fn read<'a>(
    pairs: impl Iterator<Item = (std::borrow::Cow<'a, str>, std::borrow::Cow<'a, str>)>,
    password: Option<&str>,
) -> Result<Query, Error> {
    let mut seen = BTreeSet::new();
    let mut query = Query::default();
    for (key, value) in pairs {
        if is_multi_statement_switch(&key) {
            return Err(Error::MultiStatements);
        }
        if is_session_sql(&key) {
            return Err(Error::SessionSql(shown(&key, password)));
        }
        let canonical = match key.as_ref() {
            "host" | "hostaddr" => return Err(Error::SeveralHosts),
            "password" | "user" | "dbname" => {
                return Err(Error::Invalid(
                    "a user, password or dbname query parameter is refused: it belongs in the URL itself",
                ));
            }
            "sslmode" | "ssl-mode" | "ssl_mode" => "sslmode",
            other => other,
        };
        if !seen.insert(canonical.to_owned()) {
            return Err(Error::Ambiguous(shown(&key, password)));
        }
        match canonical {
            "sslmode" => query.tls = Some(tls_mode(&value)?),
            "application_name" => query.application_name = Some(value.into_owned()),
            other if is_timing_knob(other) => {}
            _ => return Err(Error::UnsupportedParameter(shown(&key, password))),
        }
    }
    Ok(query)
}
