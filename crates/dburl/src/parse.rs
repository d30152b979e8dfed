//! [`DbUrl::parse`](crate::DbUrl::parse): scheme, host, port, names, then the query.

use std::net::{Ipv4Addr, Ipv6Addr};

use percent_encoding::percent_decode_str;
use url::Url;

use crate::{AddressFamily, DbUrl, Engine, Error, Host, Password, TlsMode, query};

/// Percent-decodes a name; one that is not UTF-8 once decoded is refused, never replaced.
fn decode(s: &str, what: &'static str) -> Result<String, Error> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| Error::Invalid(what))
}

fn host(url: &Url) -> Result<Host, Error> {
    let (family, name) = match url.host() {
        None => return Err(Error::Invalid("the URL names no host")),
        Some(url::Host::Ipv6(addr)) => (AddressFamily::Ipv6, addr.to_string()),
        Some(url::Host::Ipv4(addr)) => (AddressFamily::Ipv4, addr.to_string()),
        // postgres:// and mysql:// are not special schemes to the URL standard: the host comes
        // back as written, percent-encoding and case included.
        Some(url::Host::Domain(d)) => {
            let d = decode(d, "the host is not UTF-8 once decoded")?;
            if d.contains(',') {
                return Err(Error::SeveralHosts);
            }
            if d.is_empty() {
                return Err(Error::Invalid("the URL names no host"));
            }
            if let Ok(v4) = d.parse::<Ipv4Addr>() {
                (AddressFamily::Ipv4, v4.to_string())
            } else if d.parse::<Ipv6Addr>().is_ok() {
                return Err(Error::Invalid("an IPv6 host must be in brackets"));
            } else {
                (AddressFamily::Dns, d.to_ascii_lowercase())
            }
        }
    };
    Ok(Host { family, name })
}

pub(crate) fn parse(text: &str) -> Result<DbUrl, Error> {
    if text.is_empty() {
        return Err(Error::Invalid("the URL is empty"));
    }
    if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Error::Invalid(
            "the URL contains whitespace or control characters",
        ));
    }
    let url = Url::parse(text).map_err(|_| Error::Invalid("not a URL"))?;
    let engine = match url.scheme() {
        "postgres" | "postgresql" => Engine::Postgresql,
        "mysql" | "mariadb" => Engine::Mysql,
        _ => return Err(Error::UnsupportedScheme),
    };
    if url.fragment().is_some() {
        return Err(Error::Invalid("a fragment is not allowed"));
    }
    let host = host(&url)?;
    if engine == Engine::Mysql && host.family == AddressFamily::Ipv6 && url.port().is_none() {
        return Err(Error::Ipv6WithoutPort);
    }
    let path = url.path().strip_prefix('/').unwrap_or(url.path());
    let database = decode(path, "the database name is not UTF-8 once decoded")?;
    if database.is_empty() || database.contains('/') {
        return Err(Error::Invalid(
            "the URL must name exactly one database in its path",
        ));
    }
    let user = decode(url.username(), "the user name is not UTF-8 once decoded")?;
    if user.is_empty() {
        return Err(Error::Invalid("the URL names no user"));
    }
    let password = url
        .password()
        .map(|p| decode(p, "the password is not UTF-8 once decoded").map(Password))
        .transpose()?;
    let query = query::read(url.query_pairs(), password.as_ref().map(|p| p.expose()))?;
    Ok(DbUrl {
        engine,
        host,
        port: url.port().unwrap_or(engine.default_port()),
        user,
        password,
        database,
        tls: query.tls.unwrap_or(TlsMode::Disable),
        application_name: query.application_name,
    })
}
