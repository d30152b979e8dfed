//! The one uncached read of ConfigMap bytes.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client};
use ptah_api::shared::Sha256Digest;

use crate::CacheError;

/// One key of an immutable ConfigMap and the identity it was read under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigMapRead {
    /// The ConfigMap's UID: a recreated ConfigMap is another object.
    pub uid: String,
    /// The resourceVersion the bytes were read at.
    pub resource_version: String,
    /// Always true on success; kept so callers can record it.
    pub immutable: bool,
    /// The key's bytes (UTF-8 for `data`, raw for `binaryData`).
    pub bytes: Vec<u8>,
    /// sha256 of `bytes`.
    pub digest: Sha256Digest,
}

/// Reads exactly `key` of ConfigMap `namespace/name` with an uncached GET; refuses a mutable one.
///
/// The API server returns the whole object; every other key is dropped before this returns, so
/// only the requested bytes outlive the call.
pub async fn read_configmap_key(
    client: Client,
    namespace: &str,
    name: &str,
    key: &str,
) -> Result<ConfigMapRead, CacheError> {
    let api: Api<ConfigMap> = Api::namespaced(client, namespace);
    let live = api.get_opt(name).await.map_err(|source| CacheError::Api {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        source: Box::new(source),
    })?;
    let Some(live) = live else {
        return Err(CacheError::NotFound {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        });
    };
    extract(namespace, name, key, live)
}

/// The pure part: immutability first (a mutable ConfigMap is refused whatever it holds), then the key.
fn extract(namespace: &str, name: &str, key: &str, live: ConfigMap) -> Result<ConfigMapRead, CacheError> {
    if live.immutable != Some(true) {
        return Err(CacheError::Mutable {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        });
    }
    let missing = |field| CacheError::MissingMetadata {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        field,
    };
    let ConfigMap {
        metadata,
        data,
        binary_data,
        ..
    } = live;
    let uid = metadata.uid.ok_or_else(|| missing("uid"))?;
    let resource_version = metadata
        .resource_version
        .ok_or_else(|| missing("resourceVersion"))?;
    // The API server refuses a key present in both maps, so the order of lookup cannot matter.
    let bytes = data
        .and_then(|mut d| d.remove(key))
        .map(String::into_bytes)
        .or_else(|| binary_data.and_then(|mut b| b.remove(key)).map(|b| b.0))
        .ok_or_else(|| CacheError::MissingKey {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            key: key.to_owned(),
        })?;
    let digest = Sha256Digest::from(ptah_fingerprint::Digest::of(&bytes));
    Ok(ConfigMapRead {
        uid,
        resource_version,
        immutable: true,
        bytes,
        digest,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::ByteString;

    use super::*;

    fn configmap(immutable: Option<bool>) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.uid = Some("u-1".into());
        cm.metadata.resource_version = Some("7".into());
        cm.immutable = immutable;
        cm.data = Some(BTreeMap::from([
            ("policy.yaml".to_owned(), "rules: []\n".to_owned()),
            ("other".to_owned(), "x".to_owned()),
        ]));
        cm.binary_data = Some(BTreeMap::from([(
            "ca.der".to_owned(),
            ByteString(vec![0, 159, 146]),
        )]));
        cm
    }

    #[test]
    fn reads_one_data_or_binary_key_with_its_digest() {
        let read = extract("ns", "p", "policy.yaml", configmap(Some(true))).expect("data key");
        assert_eq!(read.bytes, b"rules: []\n");
        assert_eq!(
            read.digest,
            Sha256Digest::from(ptah_fingerprint::Digest::of(b"rules: []\n"))
        );
        assert_eq!((read.uid.as_str(), read.resource_version.as_str()), ("u-1", "7"));
        let binary = extract("ns", "p", "ca.der", configmap(Some(true))).expect("binary key");
        assert_eq!(binary.bytes, [0, 159, 146]);
    }

    #[test]
    fn refuses_mutable_before_looking_at_keys_and_names_a_missing_key() {
        for immutable in [None, Some(false)] {
            let err = extract("ns", "p", "nope", configmap(immutable)).expect_err("mutable");
            assert!(matches!(err, CacheError::Mutable { .. }), "{err:?}");
        }
        let err = extract("ns", "p", "nope", configmap(Some(true))).expect_err("missing");
        assert!(
            matches!(err, CacheError::MissingKey { ref key, .. } if key == "nope"),
            "{err:?}"
        );
        let mut unstored = configmap(Some(true));
        unstored.metadata.uid = None;
        let err = extract("ns", "p", "other", unstored).expect_err("no uid");
        assert!(
            matches!(err, CacheError::MissingMetadata { field: "uid", .. }),
            "{err:?}"
        );
    }
}
