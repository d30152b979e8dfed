//! The kind `Cluster` config and the `kind` command lines, as pure functions.
//!
//! The cluster has three control-plane nodes (an HA API server behind kind's load balancer), one
//! ordinary worker and one isolation worker: labelled [`ISOLATION_LABEL`]`=true` and tainted
//! [`ISOLATION_LABEL`]`=true:NoSchedule`, so only Pods that tolerate it run there. Every node
//! runs the minor's node image, and every kubelet keeps [`CONTAINER_LOG_MAX_SIZE`] of a
//! container's log before rotating it.

use std::{path::Path, process::Command};

/// The label (and taint key) of the isolation worker.
pub const ISOLATION_LABEL: &str = "operator.ptah.run/isolation";
/// The kubelets' `containerLogMaxSize`: above the 8 MiB plan contract, so a Pod's result frame
/// (its last output) is never split across a log rotation.
pub const CONTAINER_LOG_MAX_SIZE: &str = "50Mi";
/// Where the nodes' containerd looks for per-registry `hosts.toml` files.
pub const CERTS_D: &str = "/etc/containerd/certs.d";
/// How long `kind create cluster` waits for the control plane.
pub const WAIT: &str = "5m";

/// The number of control-plane nodes.
const CONTROL_PLANES: usize = 3;

/// The kind cluster of a minor: `1.35` → `ptah-1-35`.
pub fn cluster_name(minor: &str) -> String {
    format!("ptah-{}", minor.replace('.', "-"))
}

/// The `kind.x-k8s.io/v1alpha4` `Cluster` config for `node_image`.
pub fn cluster_config(node_image: &str) -> String {
    let mut text = format!(
        "# Written by the kind provider of ptah-testenv; do not edit.\n\
         kind: Cluster\n\
         apiVersion: kind.x-k8s.io/v1alpha4\n\
         containerdConfigPatches:\n\
         - |-\n  \
           [plugins.\"io.containerd.grpc.v1.cri\".registry]\n    \
             config_path = \"{CERTS_D}\"\n\
         kubeadmConfigPatches:\n\
         - |\n  \
           kind: KubeletConfiguration\n  \
           containerLogMaxSize: {CONTAINER_LOG_MAX_SIZE}\n\
         nodes:\n"
    );
    for _ in 0..CONTROL_PLANES {
        text.push_str(&format!("- role: control-plane\n  image: {node_image}\n"));
    }
    text.push_str(&format!("- role: worker\n  image: {node_image}\n"));
    text.push_str(&format!(
        "- role: worker\n  \
           image: {node_image}\n  \
           labels:\n    \
             {ISOLATION_LABEL}: \"true\"\n  \
           kubeadmConfigPatches:\n  \
           - |\n    \
             kind: JoinConfiguration\n    \
             nodeRegistration:\n      \
               taints:\n      \
               - key: {ISOLATION_LABEL}\n        \
                 value: \"true\"\n        \
                 effect: NoSchedule\n"
    ));
    text
}

/// `kind create cluster --name … --config … --kubeconfig … --wait …`.
pub fn create_command(kind: &Path, name: &str, config: &Path, kubeconfig: &Path) -> Command {
    let mut cmd = Command::new(kind);
    cmd.args(["create", "cluster", "--name", name, "--config"])
        .arg(config)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--wait", WAIT]);
    cmd
}

/// `kind delete cluster --name …`.
pub fn delete_command(kind: &Path, name: &str) -> Command {
    let mut cmd = Command::new(kind);
    cmd.args(["delete", "cluster", "--name", name]);
    cmd
}

/// `kind get clusters`: one name per line.
pub fn clusters_command(kind: &Path) -> Command {
    let mut cmd = Command::new(kind);
    cmd.args(["get", "clusters"]);
    cmd
}

/// `kind get nodes --name …`: the node containers, one per line.
pub fn nodes_command(kind: &Path, name: &str) -> Command {
    let mut cmd = Command::new(kind);
    cmd.args(["get", "nodes", "--name", name]);
    cmd
}

/// `kind get kubeconfig --name …`: the admin kubeconfig (server on 127.0.0.1).
pub fn kubeconfig_command(kind: &Path, name: &str) -> Command {
    let mut cmd = Command::new(kind);
    cmd.args(["get", "kubeconfig", "--name", name]);
    cmd
}

/// `tar -C <layout> -cf <archive> .`: an OCI image layout directory as an archive.
pub fn archive_command(layout: &Path, archive: &Path) -> Command {
    let mut cmd = Command::new("tar");
    cmd.arg("-C").arg(layout).arg("-cf").arg(archive).arg(".");
    cmd
}

/// `kind load image-archive <archive> --name …`: imports the archive into every node's
/// containerd (which takes OCI archives, names from `io.containerd.image.name`).
pub fn load_command(kind: &Path, archive: &Path, name: &str) -> Command {
    let mut cmd = Command::new(kind);
    cmd.args(["load", "image-archive"])
        .arg(archive)
        .args(["--name", name]);
    cmd
}

/// Is `name` among the lines `kind get clusters` printed?
pub fn has_cluster(listing: &str, name: &str) -> bool {
    listing.lines().any(|line| line.trim() == name)
}

/// A node's `hosts.toml` for `host` (the name Pods' images use, `127.0.0.1:<port>`): pull from
/// `mirror` (the registry container on the kind network), verified with `ca` when given.
pub fn hosts_toml(host: &str, mirror: &str, ca: Option<&str>) -> String {
    let scheme = if ca.is_some() { "https" } else { "http" };
    let mut text = format!(
        "# Written by the kind provider of ptah-testenv.\n\
         server = \"{scheme}://{host}\"\n\n\
         [host.\"{scheme}://{mirror}\"]\n  \
           capabilities = [\"pull\", \"resolve\"]\n"
    );
    if let Some(ca) = ca {
        text.push_str(&format!("  ca = \"{ca}\"\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::step::describe;

    fn config() -> Value {
        serde_saphyr::from_str(&cluster_config("kindest/node:v1.35.4")).expect("yaml")
    }

    #[test]
    fn the_cluster_has_three_control_planes_a_worker_and_a_tainted_isolation_worker() {
        let config = config();
        assert_eq!(config["kind"], "Cluster");
        assert_eq!(config["apiVersion"], "kind.x-k8s.io/v1alpha4");
        let nodes = config["nodes"].as_array().expect("nodes");
        let roles: Vec<&str> = nodes.iter().filter_map(|n| n["role"].as_str()).collect();
        assert_eq!(
            roles,
            [
                "control-plane",
                "control-plane",
                "control-plane",
                "worker",
                "worker"
            ]
        );
        assert!(nodes.iter().all(|n| n["image"] == "kindest/node:v1.35.4"));
        let labelled: Vec<&Value> = nodes
            .iter()
            .filter(|n| n["labels"][ISOLATION_LABEL] == "true")
            .collect();
        assert_eq!(labelled.len(), 1);
        let patch = labelled[0]["kubeadmConfigPatches"][0].as_str().expect("patch");
        let patch: Value = serde_saphyr::from_str(patch).expect("patch yaml");
        assert_eq!(patch["kind"], "JoinConfiguration");
        let taint = &patch["nodeRegistration"]["taints"][0];
        assert_eq!(taint["key"], ISOLATION_LABEL);
        assert_eq!(taint["value"], "true");
        assert_eq!(taint["effect"], "NoSchedule");
        // The ordinary worker has neither label nor taint.
        assert!(nodes[3]["labels"].is_null() && nodes[3]["kubeadmConfigPatches"].is_null());
    }

    #[test]
    fn every_kubelet_gets_container_log_max_size_and_containerd_reads_certs_d() {
        let config = config();
        let patch = config["kubeadmConfigPatches"][0].as_str().expect("patch");
        let patch: Value = serde_saphyr::from_str(patch).expect("patch yaml");
        assert_eq!(patch["kind"], "KubeletConfiguration");
        assert_eq!(patch["containerLogMaxSize"], CONTAINER_LOG_MAX_SIZE);
        let containerd = config["containerdConfigPatches"][0].as_str().expect("containerd");
        assert!(
            containerd.contains("config_path = \"/etc/containerd/certs.d\""),
            "{containerd}"
        );
    }

    #[test]
    fn the_cluster_is_named_for_the_minor() {
        assert_eq!(cluster_name("1.35"), "ptah-1-35");
        assert!(has_cluster("kind\nptah-1-35\n", "ptah-1-35"));
        assert!(!has_cluster("ptah-1-350\n", "ptah-1-35"));
    }

    #[test]
    fn kind_command_lines() {
        let kind = Path::new("/c/kind");
        let create = create_command(
            kind,
            "ptah-1-35",
            Path::new("/d/kind-config.yaml"),
            Path::new("/d/admin.kubeconfig"),
        );
        assert_eq!(
            describe(&create),
            "/c/kind create cluster --name ptah-1-35 --config /d/kind-config.yaml \
             --kubeconfig /d/admin.kubeconfig --wait 5m"
        );
        assert_eq!(
            describe(&archive_command(
                Path::new("/i/oci/layout"),
                Path::new("/d/data-plane.tar")
            )),
            "tar -C /i/oci/layout -cf /d/data-plane.tar ."
        );
        assert_eq!(
            describe(&load_command(kind, Path::new("/d/data-plane.tar"), "ptah-1-35")),
            "/c/kind load image-archive /d/data-plane.tar --name ptah-1-35"
        );
        assert_eq!(
            describe(&delete_command(kind, "x")),
            "/c/kind delete cluster --name x"
        );
        assert_eq!(describe(&nodes_command(kind, "x")), "/c/kind get nodes --name x");
        assert_eq!(
            describe(&kubeconfig_command(kind, "x")),
            "/c/kind get kubeconfig --name x"
        );
    }

    #[test]
    fn nodes_pull_the_registry_host_from_its_container() {
        let tls = hosts_toml("127.0.0.1:40000", "ptah-1-35-registry:5000", Some("/etc/ca.crt"));
        assert!(tls.contains("server = \"https://127.0.0.1:40000\""), "{tls}");
        assert!(
            tls.contains("[host.\"https://ptah-1-35-registry:5000\"]"),
            "{tls}"
        );
        assert!(tls.contains("ca = \"/etc/ca.crt\""), "{tls}");
        let plain = hosts_toml("127.0.0.1:40001", "ptah-1-35-registry-plain:5000", None);
        assert!(
            plain.contains("[host.\"http://ptah-1-35-registry-plain:5000\"]"),
            "{plain}"
        );
        assert!(!plain.contains("ca ="), "{plain}");
    }
}
