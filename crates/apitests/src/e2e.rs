//! Fixtures of the full-tier (T4) tests: the pod relay's endpoints, host binaries, the locally
//! built data-plane image, and object creation from JSON.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    process::Command,
};

use kube::{Api, api::PostParams};
use ptah_testenv::k8s::{Binaries, Component, Matrix};
use serde_json::Value;

use crate::{DIR_ENV, workspace_root};

/// The pod relay's endpoints (`target/cluster/pod-endpoints.env`): service URLs as Pods see them.
pub fn pod_endpoints() -> HashMap<String, String> {
    let dir = std::env::var_os(DIR_ENV)
        .filter(|v| !v.is_empty())
        .map_or_else(|| workspace_root().join("target").join("cluster"), PathBuf::from);
    let path = dir.join("pod-endpoints.env");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `cargo xtask services up` then `cargo xtask cluster relay`",
            path.display()
        )
    });
    text.lines()
        .filter_map(|line| line.strip_prefix("export "))
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| {
            let value = value
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .unwrap_or_else(|| panic!("{}: {name} is not single-quoted", path.display()))
                .replace(r"'\''", "'");
            (name.to_owned(), value)
        })
        .collect()
}

/// Builds a workspace binary with the test run's cargo and returns its path.
pub fn build_bin(package: &str, bin: &str) -> PathBuf {
    // Without the variables nextest set for this test: a build script watching them (ring's)
    // would rebuild the workspace for this build, and again for the next ordinary one.
    let status = ptah_testenv::step::cargo()
        .args(["build", "--quiet", "-p", package, "--bin", bin])
        .current_dir(workspace_root())
        .status()
        .unwrap_or_else(|e| panic!("run cargo build --bin {bin}: {e}"));
    assert!(status.success(), "cargo build -p {package} --bin {bin} failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    target.join("debug").join(bin)
}

/// The pinned reference of the data-plane image `cargo xtask images` pushed last.
pub fn data_plane_image() -> String {
    image_reference("data-plane")
}

/// The pinned reference of a locally built image (`target/images/<name>/reference`).
pub fn image_reference(name: &str) -> String {
    let path = workspace_root()
        .join("target/images")
        .join(name)
        .join("reference");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run `cargo xtask images` (the e2e driver does)",
            path.display()
        )
    });
    text.trim().to_owned()
}

/// The kubectl built by `cargo xtask k8s-bin` for the cluster's Kubernetes version.
pub fn kubectl() -> PathBuf {
    let version = crate::ClusterFiles::require().version;
    let path = k8s_cache().join(&version).join("kubectl");
    assert!(
        path.is_file(),
        "{} is missing; build it with `cargo xtask k8s-bin --only kubectl`",
        path.display()
    );
    path
}

/// Runs the host's `ptah` with `args --format json` against the services' TLS registry and
/// returns its JSON report; panics with stderr on failure.
pub fn host_ptah(bin: &Path, services: &ptah_testservices::TestServices, args: &[&str]) -> Value {
    let out = Command::new(bin)
        .args(args)
        .args(["--format", "json"])
        .env("PTAH_OCI_CA_FILE", &services.registry.ca_path)
        .env("PTAH_REGISTRY_USERNAME", &services.registry.username)
        .env("PTAH_REGISTRY_PASSWORD", services.registry.password.expose())
        .env("PTAH_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("run ptah: {e}"));
    assert!(
        out.status.success(),
        "ptah {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("ptah {args:?}: not JSON: {e}"))
}

/// Creates an object from its JSON manifest.
pub async fn create<K>(api: &Api<K>, value: Value) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let object: K = serde_json::from_value(value).unwrap_or_else(|e| panic!("manifest: {e}"));
    api.create(&PostParams::default(), &object)
        .await
        .unwrap_or_else(|e| panic!("create: {e}"))
}

/// The cache `cargo xtask k8s-bin` builds into (`$PTAH_K8S_CACHE`, else `~/.cache/ptah-operator/k8s`).
pub fn k8s_cache() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("PTAH_K8S_CACHE") {
        return dir;
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/root/.cache"))
        .join("ptah-operator")
        .join("k8s")
}

/// Helm 3 as `cargo xtask k8s-bin --only helm` built it, at the version matrix/kubernetes.json
/// pins (`components.helm`).
pub fn helm() -> PathBuf {
    pinned_program(Component::Helm)
}

/// Helm 4 as `cargo xtask k8s-bin --only helm4` built it, at the version matrix/kubernetes.json
/// pins (`components.helm4`).
pub fn helm4() -> PathBuf {
    pinned_program(Component::Helm4)
}

/// The cached `component` at the version matrix/kubernetes.json pins (never merely the newest
/// cached one: an older or unapproved build may sit beside it); panics with the command that
/// builds it when it is missing.
pub fn pinned_program(component: Component) -> PathBuf {
    let path = Matrix::load(&workspace_root())
        .and_then(|matrix| Ok(Binaries::new(matrix.select(None)?, &matrix)?.path(component)))
        .unwrap_or_else(|e| panic!("the pinned {component}: {e:#}"));
    require_built(component, path)
}

/// `path` when a program is there; else panics naming the command that builds `component`.
pub fn require_built(component: Component, path: PathBuf) -> PathBuf {
    assert!(
        path.is_file(),
        "{} is missing (the {component} matrix/kubernetes.json pins); build it with \
         `cargo xtask k8s-bin --only {component}`",
        path.display()
    );
    path
}
