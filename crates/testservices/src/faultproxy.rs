//! The fault proxy: Toxiproxy in front of every service, as `cargo xtask services up` writes it
//! into `target/services.env`. Its variables are optional as a set (the kind provider and older
//! env files have none); once the API URL is there, every proxied address must be too.

use super::{Error, Sources, UP_COMMAND, vars};

/// The names of the proxies Toxiproxy holds, one per service (its API addresses them by name).
pub mod proxies {
    /// PostgreSQL.
    pub const POSTGRES: &str = "postgres";
    /// MariaDB.
    pub const MARIADB: &str = "mariadb";
    /// The TLS + basic-auth registry.
    pub const REGISTRY: &str = "registry";
    /// The plain-HTTP registry.
    pub const REGISTRY_PLAIN: &str = "registry-plain";
}

/// Toxiproxy's API and the address in front of each service (`127.0.0.1:PORT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultProxy {
    /// `http://127.0.0.1:PORT`, Toxiproxy's HTTP API.
    pub api_url: String,
    /// In front of PostgreSQL (proxy [`proxies::POSTGRES`]).
    pub postgres: String,
    /// In front of MariaDB (proxy [`proxies::MARIADB`]).
    pub mysql: String,
    /// In front of the TLS registry (proxy [`proxies::REGISTRY`]); its certificate names
    /// `localhost`, as the direct address's does.
    pub registry: String,
    /// In front of the plain registry (proxy [`proxies::REGISTRY_PLAIN`]).
    pub plain_registry: String,
}

/// Reads the fault proxy's variables: `None` without the API URL, an error when only some are set.
pub(crate) fn load<L: Fn(&str) -> Option<String>>(
    sources: &Sources<'_, L>,
) -> Result<Option<FaultProxy>, Error> {
    let Some(api_url) = sources.optional(vars::TOXIPROXY_URL) else {
        return Ok(None);
    };
    if !api_url.starts_with("http://") {
        return Err(Error::Invalid {
            name: vars::TOXIPROXY_URL,
            reason: format!("expected http://host:port, got {api_url:?}"),
        });
    }
    Ok(Some(FaultProxy {
        api_url,
        postgres: sources.host(vars::PG_PROXY)?,
        mysql: sources.host(vars::MYSQL_PROXY)?,
        registry: sources.host(vars::REGISTRY_PROXY)?,
        plain_registry: sources.host(vars::REGISTRY_PLAIN_PROXY)?,
    }))
}

/// The panic of a test that needs the fault proxy where the env file has none.
pub(crate) fn missing() -> ! {
    panic!(
        "the fault proxy (Toxiproxy) is not up: {} is not set; run `{UP_COMMAND}`",
        vars::TOXIPROXY_URL
    )
}

#[cfg(test)]
mod tests {
    use crate::{
        TestServices,
        tests::{FILE, fixture, no_env},
        vars,
    };

    #[test]
    fn the_fault_proxy_is_optional_as_a_set() {
        let env = fixture("noproxy", FILE);
        let s = TestServices::load_from(&env, no_env).expect("load");
        assert_eq!(s.fault_proxy, None);
        let with = format!(
            "{FILE}export PTAH_TEST_TOXIPROXY_URL='http://127.0.0.1:58474'\n\
             export PTAH_TEST_PG_PROXY='127.0.0.1:58475'\n\
             export PTAH_TEST_MYSQL_PROXY='127.0.0.1:58476'\n\
             export PTAH_TEST_REGISTRY_PROXY='127.0.0.1:58477'\n"
        );
        let partial = fixture("partialproxy", &with);
        let err = TestServices::load_from(&partial, no_env).expect_err("partial");
        assert!(err.to_string().contains(vars::REGISTRY_PLAIN_PROXY), "{err}");
        let full = fixture(
            "fullproxy",
            &format!("{with}export PTAH_TEST_REGISTRY_PLAIN_PROXY='127.0.0.1:58478'\n"),
        );
        let s = TestServices::load_from(&full, no_env).expect("load");
        let proxy = s.require_fault_proxy();
        assert_eq!(proxy.api_url, "http://127.0.0.1:58474");
        assert_eq!(proxy.postgres, "127.0.0.1:58475");
        assert_eq!(proxy.plain_registry, "127.0.0.1:58478");
        assert_eq!(
            s.postgres.url.via(&proxy.postgres).expose(),
            "postgres://app:pgSECRET1@127.0.0.1:58475/app"
        );
    }
}
