//! Services in the full tier: kube-proxy (iptables mode) and the `kubernetes` Service's endpoint.
//!
//! The API server listens on 127.0.0.1 only, and `--endpoint-reconciler-type=none` keeps it from
//! publishing that address (Endpoints validation refuses loopback). The full tier therefore
//! publishes the `kubernetes` Service's endpoint itself: the bridge gateway (10.244.77.1) at the
//! API server's port, where the pod relay copies connections to 127.0.0.1. kube-proxy turns the
//! ClusterIP (10.96.0.1:443) into that endpoint, so a Pod's in-cluster configuration
//! (`KUBERNETES_SERVICE_HOST`/`PORT`, injected by the kubelet) reaches the API server, verified by
//! the apiserver certificate's 10.96.0.1 SAN. `down` removes kube-proxy's rules with
//! `kube-proxy --cleanup`.

use std::{fs, path::PathBuf, process::Command, time::Duration};

use anyhow::Context;
use serde_json::json;

use super::{Cluster, Proc, kubeconfig, pki};
use crate::{
    cluster::relay::GATEWAY,
    k8s::Component,
    step::{output, step},
};

/// kube-proxy's healthz port on 127.0.0.1.
pub(super) const HEALTHZ_PORT: u16 = 56256;
/// kube-proxy's metrics port on 127.0.0.1.
const METRICS_PORT: u16 = 56249;
/// kube-proxy's fixed ports (reserved from the ephemeral range).
pub(crate) const PORTS: [u16; 2] = [HEALTHZ_PORT, METRICS_PORT];
/// The Service IP range of the API server and the controller manager.
pub(super) const SERVICE_CIDR: &str = "10.96.0.0/16";
/// The field manager of the `kubernetes` EndpointSlice.
const FIELD_MANAGER: &str = "ptah-xtask";

fn dir(cluster: &Cluster) -> PathBuf {
    cluster.root.join("kube-proxy")
}

/// The kube-proxy process.
pub(super) fn proc(cluster: &Cluster) -> Proc {
    let config = dir(cluster).join("config.yaml");
    Proc {
        name: "kube-proxy",
        program: cluster.bins.path(Component::KubeProxy),
        args: vec![format!("--config={}", config.display()), "--v=1".to_owned()],
        env: Vec::new(),
        netns: None,
        marker: config,
        timeout: Duration::from_secs(60),
    }
}

/// KubeProxyConfiguration: iptables mode for the pod subnet, loopback-only health and metrics,
/// and no sysctl changes (conntrack sizes, `route_localnet`) that `down` would have to undo.
pub(super) fn config(kubeconfig: &str, node: &str, cluster_cidr: &str) -> String {
    format!(
        r#"apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {kubeconfig}
hostnameOverride: {node}
mode: iptables
clusterCIDR: {cluster_cidr}
healthzBindAddress: 127.0.0.1:{HEALTHZ_PORT}
metricsBindAddress: 127.0.0.1:{METRICS_PORT}
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
nodePortAddresses: ["primary"]
"#,
    )
}

/// `http://127.0.0.1:<healthz>/healthz` answers 200.
fn healthy() -> bool {
    Command::new("curl")
        .args(["-sf", "--max-time", "2"])
        .arg(format!("http://127.0.0.1:{HEALTHZ_PORT}/healthz"))
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Starts kube-proxy unless it runs, and publishes the `kubernetes` Service's endpoint.
pub(super) fn up(cluster: &Cluster, cluster_cidr: &str) -> anyhow::Result<()> {
    let proxy = proc(cluster);
    if proxy.running(&cluster.root).is_none() {
        step("kube-proxy (iptables mode)", || {
            let dir = dir(cluster);
            fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
            // A PKI written before kube-proxy joined the cluster has no certificate for it; the
            // admin identity stands in until the next fresh `up`.
            let identity = if cluster.pki().join(format!("{}.crt", pki::KUBE_PROXY)).is_file() {
                pki::KUBE_PROXY
            } else {
                eprintln!("    the PKI predates kube-proxy: it uses the admin identity until a fresh `up`");
                pki::ADMIN
            };
            let kubeconfig_path = dir.join("kubeconfig");
            kubeconfig::write(
                &kubeconfig_path,
                &cluster.server(),
                "system:kube-proxy",
                &cluster.pki(),
                identity,
            )?;
            fs::write(
                dir.join("config.yaml"),
                config(
                    &kubeconfig_path.display().to_string(),
                    pki::NODE_NAME,
                    cluster_cidr,
                ),
            )?;
            proxy.start(&cluster.root, healthy).map(|_| ())
        })?;
    }
    step(
        &format!(
            "Service kubernetes -> {GATEWAY}:{} (pod relay)",
            cluster.apiserver_port
        ),
        || publish_apiserver_endpoint(cluster),
    )
}

/// The `kubernetes` EndpointSlice: the gateway at the API server's port (server-side apply).
fn endpoint_slice(port: u16) -> serde_json::Value {
    json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": "kubernetes",
            "namespace": "default",
            "labels": {
                "kubernetes.io/service-name": "kubernetes",
                "endpointslice.kubernetes.io/managed-by": FIELD_MANAGER,
            },
        },
        "addressType": "IPv4",
        "endpoints": [{"addresses": [GATEWAY.to_string()], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
    })
}

fn publish_apiserver_endpoint(cluster: &Cluster) -> anyhow::Result<()> {
    let pki = cluster.pki();
    let body = endpoint_slice(cluster.apiserver_port).to_string();
    let url = format!(
        "{}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes?fieldManager={FIELD_MANAGER}&force=true",
        cluster.server()
    );
    output(
        Command::new("curl")
            .args(["-sSf", "--max-time", "10", "-X", "PATCH", "--cacert"])
            .arg(pki.join("ca.crt"))
            .arg("--cert")
            .arg(pki.join("admin.crt"))
            .arg("--key")
            .arg(pki.join("admin.key"))
            .args([
                "-H",
                "Content-Type: application/apply-patch+yaml",
                "--data-binary",
                &body,
            ])
            .arg(url),
    )
    .map(|_| ())
    .context("cannot apply the kubernetes EndpointSlice")
}

/// Removes kube-proxy's iptables and nftables rules when this cluster ever ran it.
pub(super) fn clean_host(cluster: &Cluster) -> anyhow::Result<()> {
    let program = cluster.bins.path(Component::KubeProxy);
    if !dir(cluster).is_dir() || !program.is_file() {
        return Ok(());
    }
    output(Command::new(&program).arg("--cleanup")).context("kube-proxy --cleanup failed")?;
    eprintln!("    removed kube-proxy's rules (kube-proxy --cleanup)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubernetes_endpoint_is_the_gateway_and_the_config_touches_no_sysctl() {
        let slice = endpoint_slice(56443);
        assert_eq!(slice["endpoints"][0]["addresses"][0], "10.244.77.1");
        assert_eq!(slice["ports"][0]["port"], 56443);
        assert_eq!(
            slice["metadata"]["labels"]["kubernetes.io/service-name"],
            "kubernetes"
        );
        let text = config("/k", "localhost", "10.244.77.0/24");
        for line in [
            "mode: iptables",
            "clusterCIDR: 10.244.77.0/24",
            "maxPerCore: 0",
            "localhostNodePorts: false",
            "kubeconfig: /k",
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
    }
}
