//! The Docker `config.json` / `.dockerconfigjson` reader (registry credentials). Invariants:
//! - parsing is deterministic, and a refusal has a bounded message that names the file;
//! - no secret ever shows: neither a refusal's message nor the parsed config's `Debug` contains a
//!   password, registry token or `auth` value of the input (checked for every secret holding a
//!   character that nothing else a message may quote — its fixed words, the file name, keys, user
//!   names, numbers, escapes — could produce);
//! - lookups are by normalised host: every key that yields a credential is found again under its
//!   `https://…/v1/` and upper-case spellings.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use ptah_artifact::{Credential, DockerConfig};
use ptah_fuzz::assert_refusal_message;
use serde_json::Value;

const ORIGIN: &str = "/fuzz/config.json";

/// Every fixed text the reader's messages and `Debug` forms are made of (`crates/artifact/src/auth.rs`).
const VOCABULARY: &str = "not a Docker config (line , column ) entry : `auth` is not base64 of user:password \
    `auth` is not UTF-8 username and password must both be set identity tokens (OAuth refresh tokens) \
    are not supported; use a registry token DockerConfig { auths: {} } Basic { username: , password: \
    Secret(<redacted>) } Bearer Anonymous 0123456789 \\ \" u{}";

/// The secrets of the input as `serde_json` sees them, and every other string (keys, user names).
fn secrets_and_others(data: &[u8]) -> (Vec<String>, Vec<String>) {
    let mut secrets = Vec::new();
    let mut others = Vec::new();
    let Ok(Value::Object(top)) = serde_json::from_slice::<Value>(data) else {
        return (secrets, others);
    };
    let Some(Value::Object(auths)) = top.get("auths") else {
        return (secrets, others);
    };
    for (key, entry) in auths {
        others.push(key.clone());
        let Value::Object(entry) = entry else { continue };
        for (field, value) in entry {
            let Value::String(text) = value else { continue };
            match field.as_str() {
                "password" | "registrytoken" | "identitytoken" => secrets.push(text.clone()),
                "auth" => {
                    use base64::Engine as _;
                    let decoded = base64::engine::general_purpose::STANDARD.decode(text.trim());
                    let decoded = decoded.ok().and_then(|d| String::from_utf8(d).ok());
                    if let Some((user, password)) = decoded.as_deref().and_then(|d| d.split_once(':')) {
                        others.push(user.to_owned());
                        secrets.push(password.to_owned());
                    }
                    secrets.push(text.clone());
                }
                _ => others.push(text.clone()),
            }
        }
    }
    (secrets, others)
}

fuzz_target!(|data: &[u8]| {
    let parsed = DockerConfig::parse(data, Path::new(ORIGIN));
    let shown = match &parsed {
        Ok(config) => format!("{config:?}"),
        Err(err) => {
            let message = err.to_string();
            assert!(
                message.contains(ORIGIN),
                "a refusal does not name the file: {message}"
            );
            assert_refusal_message(&message, data.len());
            message
        }
    };
    let again = DockerConfig::parse(data, Path::new(ORIGIN));
    match (&parsed, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "parsing is deterministic"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "parsing is deterministic"),
        _ => panic!("parsing is not deterministic"),
    }
    let (secrets, others) = secrets_and_others(data);
    let quotable =
        |c: char| VOCABULARY.contains(c) || ORIGIN.contains(c) || others.iter().any(|o| o.contains(c));
    for secret in secrets.iter().filter(|s| s.chars().any(|c| !quotable(c))) {
        assert!(!shown.contains(secret.as_str()), "a secret shows: {shown}");
    }
    let Ok(config) = parsed else { return };
    for key in others
        .iter()
        .filter(|k| !k.is_empty() && !k.contains(['/', ':']) && k.is_ascii())
    {
        let Some(found) = config.lookup(key) else { continue };
        assert_ne!(found, Credential::Anonymous);
        for spelling in [format!("https://{key}/v1/"), key.to_ascii_uppercase()] {
            assert_eq!(
                config.lookup(&spelling).as_ref(),
                Some(&found),
                "{spelling:?} is not {key:?}"
            );
        }
    }
});
