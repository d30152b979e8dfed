//! Where a minor's cluster comes from: the local full tier (with the images of this checkout and,
//! for the upgrade phase, of the previous release) or kind.

use std::path::{Path, PathBuf};

use anyhow::Context;
use ptah_testenv::k8s::{Matrix, Minor};

use super::{Provider, kind, run_command};
use crate::forward;

/// The `needs` of a suite that wants the tainted isolation worker.
pub const ISOLATION_WORKER: &str = "isolation-worker";

/// Did `cargo xtask cluster up --nodes 2` record a running isolation worker in `cluster_dir`?
pub fn has_isolation_worker(cluster_dir: &Path) -> bool {
    std::fs::read_to_string(cluster_dir.join("cluster.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|state| state["isolation"]["nodeName"].is_string())
}

/// Starts (or keeps) the minor's cluster with every program the suites use (with the local
/// provider's isolation worker when `isolation`), and returns the directory whose
/// `cluster.json` tests read.
pub fn provide(
    provider: Provider,
    minor: &Minor,
    matrix: &Matrix,
    root: &Path,
    fresh: bool,
    previous: Option<&str>,
    isolation: bool,
) -> anyhow::Result<PathBuf> {
    let testenv = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        run_command(&mut forward::command(
            forward::TESTENV,
            &args[0],
            &args[1..],
            forward::Profile::Dev,
        ))
    };
    // kubectl, helm, oras and promtool are the suites' own tools; the rest is the cluster (cached).
    let programs = match provider {
        Provider::Local => {
            "kube-apiserver,etcd,kube-controller-manager,kube-scheduler,kubelet,kubectl,kube-proxy,helm,oras,promtool"
        }
        Provider::Kind => "kind,kubectl,helm,oras,promtool",
    };
    testenv(&["k8s-bin", "--kubernetes", &minor.minor, "--only", programs])?;
    match provider {
        Provider::Local => {
            if fresh {
                testenv(&["cluster", "down"])?;
            }
            let nodes = if isolation { "2" } else { "1" };
            testenv(&[
                "cluster",
                "up",
                "--tier",
                "full",
                "--nodes",
                nodes,
                "--kubernetes",
                &minor.minor,
            ])?;
            // The registry may have been recreated since the images were last pushed.
            testenv(&["images"])?;
            if let Some(commit) = previous {
                testenv(&["images", "--rev", commit])?;
            }
            Ok(root.join("target").join("cluster"))
        }
        Provider::Kind => kind::provide(root, minor, matrix),
    }
}

/// The commit `support/previous-release.json` names: the release the upgrade phase starts from.
pub fn previous_release(root: &Path) -> anyhow::Result<String> {
    let path = root.join("support").join("previous-release.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    value["commit"]
        .as_str()
        .filter(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
        .with_context(|| format!("{} names no 40-hex `commit`", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_isolation_worker_is_offered_only_when_the_cluster_records_it() {
        let dir = std::env::temp_dir().join(format!("ptah-provide-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        assert!(!has_isolation_worker(&dir), "no cluster.json");
        std::fs::write(dir.join("cluster.json"), r#"{"tier": "full"}"#).expect("write");
        assert!(!has_isolation_worker(&dir));
        assert!(!Provider::Local.offers(ISOLATION_WORKER, &dir));
        assert!(Provider::Local.offers("full-tier", &dir));
        std::fs::write(
            dir.join("cluster.json"),
            r#"{"tier": "full", "isolation": {"nodeName": "ptah-isolation"}}"#,
        )
        .expect("write");
        assert!(Provider::Local.offers(ISOLATION_WORKER, &dir));
        assert!(Provider::Kind.offers(ISOLATION_WORKER, Path::new("/nonexistent")));
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
