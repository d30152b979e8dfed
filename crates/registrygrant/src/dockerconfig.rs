//! The one `auths` entry of a Docker config a registry request may use: a container is handed the
//! entry for the authority it talks to, never the whole document.

use serde_json::{Map, Value};

use crate::{Refusal, authorities_match};

/// `config` reduced to its `auths` entry for `authority` (an empty `auths` when it has none);
/// every other key of the document (`credsStore`, `credHelpers`, other registries) is dropped.
pub fn only_entry_for(config: &[u8], authority: &str, plain_http: bool) -> Result<Vec<u8>, Refusal> {
    let malformed = || {
        Refusal::Malformed("the registry Secret's Docker config is not a JSON object with auths".to_owned())
    };
    let doc: Value = serde_json::from_slice(config).map_err(|_| malformed())?;
    let auths = doc
        .get("auths")
        .and_then(Value::as_object)
        .ok_or_else(malformed)?;
    let kept: Map<String, Value> = auths
        .iter()
        .filter(|(key, _)| authorities_match(&entry_authority(key), authority, plain_http))
        .take(1)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut out = Map::new();
    out.insert("auths".to_owned(), Value::Object(kept));
    serde_json::to_vec(&Value::Object(out)).map_err(|_| malformed())
}

/// `https://host:port/v1/` → `host:port`, the way Docker writes its keys.
fn entry_authority(key: &str) -> String {
    let rest = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    rest.split('/').next().unwrap_or(rest).to_owned()
}
