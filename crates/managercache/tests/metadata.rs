//! T3: the metadata-only ConfigMap cache and the one-key read against the real kube-apiserver.

use std::{
    collections::BTreeMap,
    future::ready,
    time::{Duration, Instant},
};

use futures_util::StreamExt as _;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api, Client,
    api::{ListParams, PostParams},
    core::PartialObjectMeta,
    runtime::{WatchStreamExt as _, reflector, watcher},
};
use ptah_apitests::client::{admin_client, namespace};
use ptah_managercache::{
    CacheError, ConfigMapMeta, configmap_metadata, configmap_metadata_with, read_configmap_key,
    watcher_config,
};

const COUNT: usize = 50;
const DATA_BYTES: usize = 100 * 1024;
const SUBSET: usize = 10;

/// Resident set size of this process in KiB, from /proc (Linux).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

async fn create_many(client: &Client, ns: &str) {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    for i in 0..COUNT {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(format!("bulk-{i:03}"));
        if i < SUBSET {
            cm.metadata.labels = Some(BTreeMap::from([(
                "ptah.test/subset".to_owned(),
                "yes".to_owned(),
            )]));
        }
        // Distinct bytes per object so nothing can be shared or deduplicated.
        let fill = char::from(b'a' + u8::try_from(i % 26).expect("small"));
        cm.data = Some(BTreeMap::from([(
            "blob".to_owned(),
            fill.to_string().repeat(DATA_BYTES),
        )]));
        api.create(&PostParams::default(), &cm)
            .await
            .unwrap_or_else(|e| panic!("create bulk-{i}: {e}"));
    }
}

async fn wait_for<K>(store: &reflector::Store<K>, want: usize)
where
    K: kube::runtime::reflector::Lookup + Clone + 'static,
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    let deadline = Instant::now() + Duration::from_secs(60);
    store.wait_until_ready().await.expect("writer alive");
    while store.len() < want {
        assert!(Instant::now() < deadline, "store holds {} of {want}", store.len());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn the_reflector_holds_metadata_of_every_configmap_and_none_of_their_data() {
    let client = admin_client().await;
    let ns = namespace(&client, "mcache").await;
    create_many(&client, &ns).await;

    let before = rss_kib();
    let (store, stream) = configmap_metadata(client.clone(), Some(&ns));
    let task = tokio::spawn(stream.for_each(|_| ready(())));
    wait_for(&store, COUNT).await;
    let metadata_growth = rss_kib().saturating_sub(before);

    // The namespace may also hold kube-root-ca.crt, published by kube-controller-manager.
    let objects: Vec<std::sync::Arc<ConfigMapMeta>> = store.state();
    let bulk = objects
        .iter()
        .filter(|o| o.metadata.name.as_deref().is_some_and(|n| n.starts_with("bulk-")))
        .count();
    assert_eq!(bulk, COUNT);
    for object in &objects {
        // A PartialObjectMeta has no data field at all; what the server sent is also what a
        // metadata request returns: kind PartialObjectMetadata, not ConfigMap.
        let types = object
            .types
            .as_ref()
            .expect("the metadata list and watch carry their type");
        assert_eq!(
            (types.api_version.as_str(), types.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadata"),
            "{types:?}"
        );
        assert!(
            object.metadata.managed_fields.is_none(),
            "managedFields are stripped"
        );
        let json = serde_json::to_string(object.as_ref()).expect("serialize");
        assert!(
            json.len() < 2048,
            "an object of {} bytes is more than metadata",
            json.len()
        );
        assert!(!json.contains("aaaa"), "data leaked into the cache: {json}");
    }
    task.abort();

    // The same objects through a full-object reflector, for the report: what the metadata cache saves.
    let before = rss_kib();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let (full_store, writer) = reflector::store();
    let full = tokio::spawn(
        watcher(api, watcher::Config::default())
            .reflect(writer)
            .for_each(|_| ready(())),
    );
    wait_for(&full_store, COUNT).await;
    let full_growth = rss_kib().saturating_sub(before);
    full.abort();
    eprintln!(
        "RSS growth for {COUNT} ConfigMaps of {} KiB: metadata reflector {metadata_growth} KiB, full reflector {full_growth} KiB",
        DATA_BYTES / 1024
    );
}

#[tokio::test]
async fn a_label_selector_limits_the_cache() {
    let client = admin_client().await;
    let ns = namespace(&client, "mcache").await;
    create_many(&client, &ns).await;
    let (store, stream) = configmap_metadata_with(
        client.clone(),
        Some(&ns),
        watcher_config(Some("ptah.test/subset=yes")),
    );
    let task = tokio::spawn(stream.for_each(|_| ready(())));
    wait_for(&store, SUBSET).await;
    // Give a wrongly unfiltered watch time to deliver more.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(store.len(), SUBSET);
    task.abort();
    // The list the watch started from is a metadata list too.
    let meta: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(client, &ns);
    let list = meta
        .list(&ListParams::default().labels("ptah.test/subset=yes"))
        .await
        .expect("list");
    assert_eq!(list.items.len(), SUBSET);
}

#[tokio::test]
async fn read_configmap_key_returns_one_key_and_refuses_mutable_and_missing() {
    let client = admin_client().await;
    let ns = namespace(&client, "mcache").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    for (name, immutable) in [
        ("policy", Some(true)),
        ("mutable", None),
        ("unlocked", Some(false)),
    ] {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.immutable = immutable;
        cm.data = Some(BTreeMap::from([
            ("policy.yaml".to_owned(), "protectedTables: [users]\n".to_owned()),
            ("unrelated".to_owned(), "x".repeat(4096)),
        ]));
        cm.binary_data = Some(BTreeMap::from([(
            "ca.der".to_owned(),
            k8s_openapi::ByteString(vec![0x30, 0x82, 0xff]),
        )]));
        api.create(&PostParams::default(), &cm).await.expect("create");
    }

    let read = read_configmap_key(client.clone(), &ns, "policy", "policy.yaml")
        .await
        .expect("read");
    assert_eq!(read.bytes, b"protectedTables: [users]\n");
    assert!(read.immutable);
    let live = api.get("policy").await.expect("get");
    assert_eq!(Some(read.uid.clone()), live.metadata.uid);
    assert_eq!(
        Some(read.resource_version.clone()),
        live.metadata.resource_version
    );
    assert_eq!(
        read.digest.as_str(),
        "sha256:".to_owned() + &ptah_fingerprint::Digest::of(b"protectedTables: [users]\n").hex()
    );
    let binary = read_configmap_key(client.clone(), &ns, "policy", "ca.der")
        .await
        .expect("binary");
    assert_eq!(binary.bytes, [0x30, 0x82, 0xff]);

    for name in ["mutable", "unlocked"] {
        let err = read_configmap_key(client.clone(), &ns, name, "policy.yaml")
            .await
            .expect_err("mutable");
        assert!(matches!(err, CacheError::Mutable { .. }), "{name}: {err:?}");
        assert!(err.to_string().contains("immutable: true"), "{err}");
    }
    let err = read_configmap_key(client.clone(), &ns, "policy", "absent")
        .await
        .expect_err("missing key");
    assert!(matches!(err, CacheError::MissingKey { .. }), "{err:?}");
    let err = read_configmap_key(client, &ns, "nonexistent", "policy.yaml")
        .await
        .expect_err("missing object");
    assert!(matches!(err, CacheError::NotFound { .. }), "{err:?}");
}
