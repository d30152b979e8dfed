//! The exact versions a cell ran against, read from what runs: the API server's `/version`, each
//! node's `nodeInfo`, and the database servers.

use std::{path::Path, process::Command};

use ptah_testenv::{
    k8s::{Binaries, Component, Matrix, Minor},
    services,
    step::output,
};
use serde_json::Value;

use super::{Provider, cell::Versions};

/// Reads the versions; a value that cannot be read says why instead.
pub fn collect(cluster_dir: &Path, minor: &Minor, matrix: &Matrix, provider: Provider) -> Versions {
    let kubectl = |args: &[&str]| -> anyhow::Result<Value> {
        let kubectl = Binaries::new(minor, matrix)?.path(Component::Kubectl);
        let text = output(
            Command::new(kubectl)
                .arg(format!(
                    "--kubeconfig={}",
                    cluster_dir.join("admin.kubeconfig").display()
                ))
                .args(args),
        )?;
        Ok(serde_json::from_str(&text)?)
    };
    let unknown = |err: anyhow::Error| format!("unknown ({err:#})");
    let api_server = kubectl(&["version", "-o", "json"])
        .map(|v| {
            v["serverVersion"]["gitVersion"]
                .as_str()
                .unwrap_or("unknown")
                .to_owned()
        })
        .unwrap_or_else(unknown);
    let nodes = kubectl(&["get", "nodes", "-o", "json"]);
    let node_field = |field: &str| match &nodes {
        Ok(nodes) => node_values(nodes, field),
        Err(err) => format!("unknown ({err:#})"),
    };
    let (postgresql, mysql) = match provider {
        Provider::Local => (
            services::server_version(services::Engine::Postgres).unwrap_or_else(unknown),
            services::server_version(services::Engine::Mariadb).unwrap_or_else(unknown),
        ),
        Provider::Kind => (
            ptah_testenv::kind::database_image(services::Engine::Postgres).unwrap_or_else(unknown),
            ptah_testenv::kind::database_image(services::Engine::Mariadb).unwrap_or_else(unknown),
        ),
    };
    Versions {
        api_server,
        kubelet: node_field("kubeletVersion"),
        container_runtime: node_field("containerRuntimeVersion"),
        postgresql,
        mysql,
    }
}

/// The distinct values of `status.nodeInfo.<field>` over every node, comma-separated.
pub fn node_values(nodes: &Value, field: &str) -> String {
    let mut values: Vec<&str> = nodes["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["status"]["nodeInfo"][field].as_str())
        .collect();
    values.sort_unstable();
    values.dedup();
    if values.is_empty() {
        "unknown (no node reports it)".to_owned()
    } else {
        values.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn node_versions_are_deduplicated_and_an_empty_cluster_says_so() {
        let nodes = json!({"items": [
            {"status": {"nodeInfo": {"kubeletVersion": "v1.36.3", "containerRuntimeVersion": "containerd://2.2.1"}}},
            {"status": {"nodeInfo": {"kubeletVersion": "v1.36.3", "containerRuntimeVersion": "containerd://2.2.1"}}}]});
        assert_eq!(node_values(&nodes, "kubeletVersion"), "v1.36.3");
        assert_eq!(
            node_values(&nodes, "containerRuntimeVersion"),
            "containerd://2.2.1"
        );
        assert!(node_values(&json!({"items": []}), "kubeletVersion").starts_with("unknown"));
    }
}
