//! The metadata-only ConfigMap reflector.

use futures_util::Stream;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client, Resource as _,
    core::PartialObjectMeta,
    runtime::{
        WatchStreamExt as _,
        reflector::{self, Store},
        watcher::{self, watcher},
    },
};

/// What the cache holds per ConfigMap: metadata only, by type.
pub type ConfigMapMeta = PartialObjectMeta<ConfigMap>;

/// The annotation `kubectl apply` writes: a full copy of the applied object, data included.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A watcher configuration, limited to ConfigMaps matching `label_selector` when given.
pub fn watcher_config(label_selector: Option<&str>) -> watcher::Config {
    let config = watcher::Config::default();
    match label_selector {
        Some(selector) => config.labels(selector),
        None => config,
    }
}

/// A metadata-only reflector over the ConfigMaps of `namespace` (all namespaces when `None`).
///
/// The store fills only while the returned stream is polled; drive it in a task.
pub fn configmap_metadata(
    client: Client,
    namespace: Option<&str>,
) -> (
    Store<ConfigMapMeta>,
    impl Stream<Item = Result<watcher::Event<ConfigMapMeta>, watcher::Error>> + Send + 'static,
) {
    configmap_metadata_with(client, namespace, watcher_config(None))
}

/// Like [`configmap_metadata`], with an explicit watcher configuration (label selector, paging).
pub fn configmap_metadata_with(
    client: Client,
    namespace: Option<&str>,
    config: watcher::Config,
) -> (
    Store<ConfigMapMeta>,
    impl Stream<Item = Result<watcher::Event<ConfigMapMeta>, watcher::Error>> + Send + 'static,
) {
    // `Api<PartialObjectMeta<_>>` sends `as=PartialObjectMetadata` on list and watch: this is what
    // kube's deprecated `metadata_watcher` does, without the deprecation.
    let api: Api<ConfigMapMeta> = match namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let (store, writer) = reflector::store();
    let stream = watcher(api, config)
        .default_backoff()
        .modify(strip)
        .reflect(writer);
    (store, stream)
}

/// Drops the metadata that can be large and is never read: field-manager bookkeeping, and the
/// last-applied annotation, which for a ConfigMap written with `kubectl apply` repeats its data.
fn strip(meta: &mut ConfigMapMeta) {
    meta.meta_mut().managed_fields = None;
    if let Some(annotations) = meta.meta_mut().annotations.as_mut() {
        annotations.remove(LAST_APPLIED_ANNOTATION);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};
    use kube::Resource as _;

    use super::*;

    #[test]
    fn the_cache_type_uses_metadata_requests() {
        assert!(<ConfigMapMeta as kube::Resource>::metadata_api());
        assert!(!<ConfigMap as kube::Resource>::metadata_api());
    }

    #[test]
    fn stripping_drops_managed_fields_and_the_applied_copy_only() {
        let mut meta = ConfigMapMeta {
            types: None,
            metadata: ObjectMeta {
                name: Some("a".into()),
                annotations: Some(BTreeMap::from([
                    (LAST_APPLIED_ANNOTATION.to_owned(), "{\"data\":{}}".to_owned()),
                    ("keep".to_owned(), "me".to_owned()),
                ])),
                managed_fields: Some(vec![ManagedFieldsEntry::default()]),
                ..ObjectMeta::default()
            },
            _phantom: Default::default(),
        };
        strip(&mut meta);
        assert_eq!(meta.meta().managed_fields, None);
        assert_eq!(
            meta.meta().annotations,
            Some(BTreeMap::from([("keep".to_owned(), "me".to_owned())]))
        );
    }

    #[test]
    fn a_label_selector_limits_the_watch() {
        assert_eq!(watcher_config(None).label_selector, None);
        assert_eq!(
            watcher_config(Some("app.kubernetes.io/name=ptah-operator"))
                .label_selector
                .as_deref(),
            Some("app.kubernetes.io/name=ptah-operator")
        );
    }
}
