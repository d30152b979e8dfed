//! The isolation worker's configuration files, as pure functions.

use std::path::Path;

use super::{BRIDGE, CGROUP_ROOT, KUBELET_HEALTHZ_PORT, KUBELET_PORT, POD_SUBNET};
use crate::{
    cluster::{node::CONTAINER_LOG_MAX_SIZE, pki},
    kind::config::ISOLATION_LABEL,
};

/// The CNI network: its own bridge and subnet inside the namespace, and host-local's leases
/// under `ipam_dir` (the default, /var/lib/cni/networks, is shared with node 1).
pub(super) fn cni(ipam_dir: &Path) -> String {
    format!(
        r#"{{"cniVersion": "1.0.0", "name": "ptah-isolation", "plugins": [
  {{"type": "bridge", "bridge": "{BRIDGE}", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {{"type": "host-local", "dataDir": "{ipam}", "ranges": [[{{"subnet": "{POD_SUBNET}"}}]], "routes": [{{"dst": "0.0.0.0/0"}}]}}}},
  {{"type": "loopback"}}
]}}
"#,
        ipam = ipam_dir.display()
    )
}

/// Paths the kubelet configuration names.
pub(super) struct KubeletPaths<'a> {
    /// The cluster PKI.
    pub pki: &'a Path,
    /// containerd's socket.
    pub socket: &'a Path,
    /// Static pods (none; the kubelet wants the directory).
    pub manifests: &'a Path,
    /// Container logs: node 1's kubelet would garbage-collect the directories of Pods it does
    /// not know in the shared default, /var/log/pods.
    pub pod_logs: &'a Path,
}

/// KubeletConfiguration of the isolation worker: node 1's (cgroupfs on cgroup v1, webhook
/// authn/authz, relaxed eviction, small container logs) with its own address, cgroup root, log directory and the
/// isolation taint.
pub(super) fn kubelet(paths: &KubeletPaths<'_>) -> String {
    format!(
        r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {ip}
port: {KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {KUBELET_HEALTHZ_PORT}
authentication:
  anonymous: {{enabled: false}}
  webhook: {{enabled: true}}
  x509: {{clientCAFile: {ca}}}
authorization:
  mode: Webhook
tlsCertFile: {crt}
tlsPrivateKeyFile: {key}
containerRuntimeEndpoint: unix://{socket}
cgroupDriver: cgroupfs
cgroupRoot: /{CGROUP_ROOT}
failCgroupV1: false
failSwapOn: false
resolvConf: /etc/resolv.conf
registerNode: true
registerWithTaints:
- key: {ISOLATION_LABEL}
  value: "true"
  effect: NoSchedule
podLogsDir: {pod_logs}
evictionHard: {{"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"}}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
localStorageCapacityIsolation: false
syncFrequency: 10s
fileCheckFrequency: 10s
volumeStatsAggPeriod: 0s
staticPodPath: {manifests}
containerLogMaxSize: {CONTAINER_LOG_MAX_SIZE}
containerLogMaxFiles: 2
"#,
        ip = pki::ISOLATION_NODE_IP,
        ca = paths.pki.join("ca.crt").display(),
        crt = paths
            .pki
            .join(format!("{}.crt", pki::ISOLATION_KUBELET_SERVING))
            .display(),
        key = paths
            .pki
            .join(format!("{}.key", pki::ISOLATION_KUBELET_SERVING))
            .display(),
        socket = paths.socket.display(),
        pod_logs = paths.pod_logs.display(),
        manifests = paths.manifests.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubelet_is_tainted_and_keeps_its_own_cgroups_and_logs() {
        let text = kubelet(&KubeletPaths {
            pki: Path::new("/p"),
            socket: Path::new("/s.sock"),
            manifests: Path::new("/m"),
            pod_logs: Path::new("/l"),
        });
        let yaml: serde_json::Value = serde_saphyr::from_str(&text).expect("yaml");
        assert_eq!(yaml["address"], "10.244.79.2");
        assert_eq!(yaml["cgroupRoot"], "/ptah-isolation");
        assert_eq!(yaml["podLogsDir"], "/l");
        assert_eq!(yaml["containerRuntimeEndpoint"], "unix:///s.sock");
        assert_eq!(yaml["tlsCertFile"], "/p/isolation-kubelet-serving.crt");
        let taint = &yaml["registerWithTaints"][0];
        assert_eq!(taint["key"], ISOLATION_LABEL);
        assert_eq!(taint["value"], "true");
        assert_eq!(taint["effect"], "NoSchedule");
        let cni: serde_json::Value = serde_json::from_str(&cni(Path::new("/ipam"))).expect("json");
        assert_eq!(cni["plugins"][0]["bridge"], "ptahcni1");
        assert_eq!(
            cni["plugins"][0]["ipam"]["ranges"][0][0]["subnet"],
            "10.244.78.0/24"
        );
        assert_eq!(cni["plugins"][0]["ipam"]["dataDir"], "/ipam");
    }
}
