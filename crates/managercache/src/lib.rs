//! Watch streams that keep ConfigMap metadata only.
//!
//! The manager needs to know which ConfigMaps exist (projections, verification policies, its own
//! state), never what an unrelated one holds: a cluster with 10,000 ConfigMaps of application data
//! must not cost the manager their bytes. [`configmap_metadata`] therefore watches with the
//! metadata-only media type, so data never crosses the wire into this process, and
//! [`read_configmap_key`] is the one way to read bytes: an uncached GET of one key of an immutable
//! ConfigMap, everything else dropped at once.

mod read;
mod watch;

pub use read::{ConfigMapRead, read_configmap_key};
pub use watch::{
    ConfigMapMeta, LAST_APPLIED_ANNOTATION, configmap_metadata, configmap_metadata_with, watcher_config,
};

/// Why a ConfigMap could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// No ConfigMap of that name exists.
    #[error("ConfigMap {namespace}/{name} not found")]
    NotFound {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// The ConfigMap can change under a recorded digest; recreate it with `immutable: true`.
    #[error(
        "ConfigMap {namespace}/{name} is not immutable; recreate it with `immutable: true` so its bytes cannot change after they are bound"
    )]
    Mutable {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Neither `data` nor `binaryData` holds the key.
    #[error("ConfigMap {namespace}/{name} has no key {key:?} in data or binaryData")]
    MissingKey {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The key asked for.
        key: String,
    },
    /// The object came back without a UID or resourceVersion (not a stored object).
    #[error("ConfigMap {namespace}/{name} has no {field}; the API server returned an unstored object")]
    MissingMetadata {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// `uid` or `resourceVersion`.
        field: &'static str,
    },
    /// The API server refused or failed the request (RBAC, network, timeouts).
    #[error("get ConfigMap {namespace}/{name}: {source}")]
    Api {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}
