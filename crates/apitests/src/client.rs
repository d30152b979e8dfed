//! Clients, CRDs and namespaces of the running test cluster, shared by every crate's T3 tests.
//!
//! Every function panics with a message naming the failed call: these are test fixtures, and a
//! fixture that cannot reach the cluster must fail the test loudly.

use std::{
    path::Path,
    sync::atomic::{AtomicU32, Ordering},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use k8s_openapi::{
    api::core::v1::Namespace, apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client, Config,
    api::{Patch, PatchParams, PostParams},
    config::{KubeConfigOptions, Kubeconfig},
};

use crate::ClusterFiles;

/// The field manager the fixtures apply CRDs with.
pub const FIXTURE_MANAGER: &str = "ptah-apitests";

/// A client from a kubeconfig file.
pub async fn client_from(path: &Path) -> Client {
    let kubeconfig = Kubeconfig::read_from(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Client::try_from(config).unwrap_or_else(|e| panic!("client for {}: {e}", path.display()))
}

/// The admin client (system:masters) of the running cluster.
pub async fn admin_client() -> Client {
    client_from(&ClusterFiles::require().admin_kubeconfig).await
}

/// The unprivileged user's client.
pub async fn user_client() -> Client {
    client_from(&ClusterFiles::require().user_kubeconfig).await
}

/// Applies `ptah_api::crds()` and waits until every CRD is Established.
pub async fn install_crds(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crds = ptah_api::crds().unwrap_or_else(|e| panic!("generate CRDs: {e}"));
    let params = PatchParams::apply(FIXTURE_MANAGER).force();
    for crd in &crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        api.patch(&name, &params, &Patch::Apply(crd))
            .await
            .unwrap_or_else(|e| panic!("apply CRD {name}: {e}"));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for crd in &crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        loop {
            let live = api
                .get(&name)
                .await
                .unwrap_or_else(|e| panic!("get CRD {name}: {e}"));
            let established = live
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Established" && c.status == "True"));
            if established {
                break;
            }
            assert!(Instant::now() < deadline, "CRD {name} not Established after 60s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A name no other test (or earlier run) uses: `<prefix>-<pid>-<counter>-<time>`.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("{prefix}-{}-{n}-{nanos:x}", std::process::id())
}

/// Creates a fresh namespace and returns its name.
pub async fn namespace(client: &Client, prefix: &str) -> String {
    let name = unique(prefix);
    let api: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.clone());
    api.create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("create namespace {name}: {e}"));
    name
}
