//! Registry credentials: anonymous, from the environment, or from a Docker `config.json` (the
//! shape of a Kubernetes `.dockerconfigjson` Secret). Secrets never reach `Debug` or an error.
//!
//! Precedence, first match wins:
//! 1. `PTAH_REGISTRY_TOKEN` (a bearer token), or `PTAH_REGISTRY_USERNAME` with
//!    `PTAH_REGISTRY_PASSWORD` (basic). Setting both kinds, or only half a pair, is refused. They
//!    apply to whichever registry the command talks to (a command talks to one registry).
//! 2. The Docker config: `$DOCKER_CONFIG/config.json`, else `$DOCKER_CONFIG/.dockerconfigjson`
//!    (a mounted Secret), else `$HOME/.docker/config.json`; the entry for the registry host.
//!    Credential helpers (`credsStore`, `credHelpers`) are not run.
//! 3. Anonymous.

use std::{collections::BTreeMap, fmt, path::PathBuf};

use base64::{Engine as _, engine::general_purpose::STANDARD};
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;

use crate::Error;

/// Environment variable: bearer token for the registry.
pub const ENV_TOKEN: &str = "PTAH_REGISTRY_TOKEN";
/// Environment variable: basic-auth user name.
pub const ENV_USERNAME: &str = "PTAH_REGISTRY_USERNAME";
/// Environment variable: basic-auth password.
pub const ENV_PASSWORD: &str = "PTAH_REGISTRY_PASSWORD";
/// Environment variable: directory holding the Docker config.
pub const ENV_DOCKER_CONFIG: &str = "DOCKER_CONFIG";

/// A secret string whose `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Credentials for one registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// No credentials.
    Anonymous,
    /// HTTP basic auth.
    Basic {
        /// User name.
        username: String,
        /// Password.
        password: Secret,
    },
    /// A bearer token sent as is.
    Bearer(Secret),
}

impl Credential {
    /// The oci-client form.
    pub(crate) fn to_registry_auth(&self) -> RegistryAuth {
        match self {
            Credential::Anonymous => RegistryAuth::Anonymous,
            Credential::Basic { username, password } => {
                RegistryAuth::Basic(username.clone(), password.expose().to_owned())
            }
            Credential::Bearer(token) => RegistryAuth::Bearer(token.expose().to_owned()),
        }
    }
}

/// Where credentials come from for any registry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CredentialSource {
    /// Always anonymous.
    #[default]
    Anonymous,
    /// The same credential for every registry.
    Fixed(Credential),
    /// Entries of a Docker config, by normalized host.
    DockerConfig(DockerConfig),
}

impl CredentialSource {
    /// The credential for `registry` (`host[:port]`).
    pub fn for_registry(&self, registry: &str) -> Credential {
        match self {
            CredentialSource::Anonymous => Credential::Anonymous,
            CredentialSource::Fixed(credential) => credential.clone(),
            CredentialSource::DockerConfig(config) => {
                config.lookup(registry).unwrap_or(Credential::Anonymous)
            }
        }
    }

    /// Reads the source from the environment (see the module docs), through `lookup`.
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<String>) -> Result<CredentialSource, Error> {
        let get = |name: &str| lookup(name).filter(|v| !v.is_empty());
        let token = get(ENV_TOKEN);
        let username = get(ENV_USERNAME);
        let password = get(ENV_PASSWORD);
        let refuse = |reason: String| Err(Error::Credentials { reason });
        match (token, username, password) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => refuse(format!(
                "set either {ENV_TOKEN} or {ENV_USERNAME}/{ENV_PASSWORD}, not both"
            )),
            (Some(token), None, None) => Ok(CredentialSource::Fixed(Credential::Bearer(Secret(token)))),
            (None, Some(username), Some(password)) => Ok(CredentialSource::Fixed(Credential::Basic {
                username,
                password: Secret(password),
            })),
            (None, Some(_), None) => refuse(format!("{ENV_USERNAME} is set without {ENV_PASSWORD}")),
            (None, None, Some(_)) => refuse(format!("{ENV_PASSWORD} is set without {ENV_USERNAME}")),
            (None, None, None) => {
                for path in docker_config_candidates(lookup) {
                    match std::fs::read(&path) {
                        Ok(bytes) => {
                            return DockerConfig::parse(&bytes, &path).map(CredentialSource::DockerConfig);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(Error::io(path)(e)),
                    }
                }
                Ok(CredentialSource::Anonymous)
            }
        }
    }
}

fn docker_config_candidates(lookup: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    match lookup(ENV_DOCKER_CONFIG).filter(|v| !v.is_empty()) {
        Some(dir) => vec![
            PathBuf::from(&dir).join("config.json"),
            PathBuf::from(&dir).join(".dockerconfigjson"),
        ],
        None => lookup("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| vec![PathBuf::from(home).join(".docker").join("config.json")])
            .unwrap_or_default(),
    }
}

/// The `auths` of a Docker `config.json` / Kubernetes `.dockerconfigjson`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DockerConfig {
    auths: BTreeMap<String, Credential>,
}

#[derive(Deserialize)]
struct RawConfig {
    #[serde(default)]
    auths: BTreeMap<String, RawEntry>,
}

#[derive(Deserialize)]
struct RawEntry {
    auth: Option<String>,
    username: Option<String>,
    password: Option<String>,
    identitytoken: Option<String>,
    registrytoken: Option<String>,
}

impl DockerConfig {
    /// Parses a config; `origin` names it in errors (its content never appears).
    pub fn parse(bytes: &[u8], origin: &std::path::Path) -> Result<DockerConfig, Error> {
        let refuse = |what: String| Error::Credentials {
            reason: format!("{}: {what}", origin.display()),
        };
        let raw: RawConfig = serde_json::from_slice(bytes).map_err(|e| {
            refuse(format!(
                "not a Docker config (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        let mut auths = BTreeMap::new();
        for (key, entry) in raw.auths {
            let host = normalize_host(&key);
            let credential =
                entry_credential(entry).map_err(|what| refuse(format!("entry {host:?}: {what}")))?;
            if let Some(credential) = credential {
                auths.insert(host, credential);
            }
        }
        Ok(DockerConfig { auths })
    }

    /// The entry for `registry`; Docker Hub matches its historical key too.
    pub fn lookup(&self, registry: &str) -> Option<Credential> {
        let host = normalize_host(registry);
        if let Some(found) = self.auths.get(&host) {
            return Some(found.clone());
        }
        match host.as_str() {
            "docker.io" | "registry-1.docker.io" => self.auths.get("index.docker.io").cloned(),
            _ => None,
        }
    }
}

fn entry_credential(entry: RawEntry) -> Result<Option<Credential>, String> {
    if let Some(token) = entry.registrytoken.filter(|t| !t.is_empty()) {
        return Ok(Some(Credential::Bearer(Secret(token))));
    }
    if let Some(auth) = entry.auth.filter(|a| !a.is_empty()) {
        let decoded = STANDARD
            .decode(auth.trim())
            .map_err(|_| "`auth` is not base64".to_owned())?;
        let text = String::from_utf8(decoded).map_err(|_| "`auth` is not UTF-8".to_owned())?;
        let (username, password) = text
            .split_once(':')
            .ok_or_else(|| "`auth` is not base64 of user:password".to_owned())?;
        return Ok(Some(Credential::Basic {
            username: username.to_owned(),
            password: Secret(password.to_owned()),
        }));
    }
    match (entry.username, entry.password) {
        (Some(username), Some(password)) => Ok(Some(Credential::Basic {
            username,
            password: Secret(password),
        })),
        (Some(_), None) | (None, Some(_)) => Err("username and password must both be set".to_owned()),
        (None, None) if entry.identitytoken.is_some() => {
            Err("identity tokens (OAuth refresh tokens) are not supported; use a registry token".to_owned())
        }
        (None, None) => Ok(None),
    }
}

/// `https://host:port/v1/` → `host:port`, lowercased.
fn normalize_host(key: &str) -> String {
    let rest = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    rest.split('/').next().unwrap_or(rest).to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn environment_credentials_follow_the_documented_precedence() {
        let basic =
            CredentialSource::from_env(&env(&[(ENV_USERNAME, "u"), (ENV_PASSWORD, "p4ss")])).expect("basic");
        assert_eq!(
            basic.for_registry("any:1"),
            Credential::Basic {
                username: "u".into(),
                password: Secret::new("p4ss")
            }
        );
        let token = CredentialSource::from_env(&env(&[(ENV_TOKEN, "t0k")])).expect("token");
        assert_eq!(token.for_registry("x"), Credential::Bearer(Secret::new("t0k")));
        for bad in [
            vec![(ENV_TOKEN, "t0k"), (ENV_USERNAME, "u")],
            vec![(ENV_USERNAME, "u")],
            vec![(ENV_PASSWORD, "p4ss")],
        ] {
            let err = CredentialSource::from_env(&env(&bad)).expect_err("refused");
            let text = err.to_string();
            assert!(!text.contains("p4ss") && !text.contains("t0k"), "{text}");
        }
        let none =
            CredentialSource::from_env(&env(&[(ENV_DOCKER_CONFIG, "/nonexistent/ptah")])).expect("anonymous");
        assert_eq!(none, CredentialSource::Anonymous);
    }

    #[test]
    fn docker_config_entries_decode_every_shape() {
        let auth = STANDARD.encode("alice:s3cret:with-colon");
        let json = format!(
            r#"{{"auths":{{
                "https://reg.example:5000/v1/":{{"auth":"{auth}"}},
                "other.example":{{"username":"bob","password":"hunter2"}},
                "tok.example":{{"registrytoken":"abc"}},
                "https://index.docker.io/v1/":{{"auth":"{auth}"}},
                "empty.example":{{}}
            }},"credsStore":"desktop"}}"#
        );
        let config = DockerConfig::parse(json.as_bytes(), Path::new("config.json")).expect("parse");
        assert_eq!(
            config.lookup("reg.example:5000"),
            Some(Credential::Basic {
                username: "alice".into(),
                password: Secret::new("s3cret:with-colon")
            })
        );
        assert!(
            matches!(config.lookup("OTHER.example"), Some(Credential::Basic { username, .. }) if username == "bob")
        );
        assert_eq!(
            config.lookup("tok.example"),
            Some(Credential::Bearer(Secret::new("abc")))
        );
        assert!(config.lookup("docker.io").is_some());
        assert_eq!(config.lookup("empty.example"), None);
        assert_eq!(config.lookup("reg.example"), None);
        assert!(!format!("{config:?}").contains("s3cret"));
    }

    #[test]
    fn malformed_docker_configs_are_refused_without_showing_content() {
        for bad in [
            r#"{"auths":{"h":{"auth":"!!!not-base64-s3cret"}}}"#.to_owned(),
            format!(
                r#"{{"auths":{{"h":{{"auth":"{}"}}}}}}"#,
                STANDARD.encode("nocolon-s3cret")
            ),
            r#"{"auths":{"h":{"username":"only-s3cret"}}}"#.to_owned(),
            r#"{"auths":{"h":{"identitytoken":"s3cret"}}}"#.to_owned(),
            r#"{"auths": "s3cret"#.to_owned(),
        ] {
            let err = DockerConfig::parse(bad.as_bytes(), Path::new("/x/config.json")).expect_err("refused");
            assert!(matches!(err, Error::Credentials { .. }));
            assert!(!err.to_string().contains("s3cret"), "{err}");
        }
    }
}
