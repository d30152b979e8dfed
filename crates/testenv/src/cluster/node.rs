//! The full tier's processes: kube-controller-manager, kube-scheduler, and the node.

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use serde_json::Value;

use super::{Cluster, Proc, kubeconfig, pki, runtime};
use crate::{
    images,
    k8s::Component,
    services::apt,
    step::{run, step},
};

/// kube-controller-manager's secure port on 127.0.0.1.
const CONTROLLER_MANAGER_PORT: u16 = 56257;
/// kube-scheduler's secure port on 127.0.0.1.
const SCHEDULER_PORT: u16 = 56259;
/// The kubelet's API port on 127.0.0.1 (logs and exec go there).
const KUBELET_PORT: u16 = 56250;
/// The kubelet's healthz port on 127.0.0.1.
const KUBELET_HEALTHZ_PORT: u16 = 56248;
/// Every fixed port the node's programs listen on (reserved from the ephemeral range).
pub(crate) const PORTS: [u16; 4] = [
    CONTROLLER_MANAGER_PORT,
    SCHEDULER_PORT,
    KUBELET_PORT,
    KUBELET_HEALTHZ_PORT,
];
/// The CNI bridge this node creates (removed by `down`).
pub(super) const BRIDGE: &str = "ptahcni0";
/// The pod subnet on that bridge.
pub(super) const POD_SUBNET: &str = "10.244.77.0/24";
/// The cgroup (in every v1 hierarchy) under which the kubelet puts pods.
const CGROUP_ROOT: &str = "ptah";
/// The kubelet's `containerLogMaxSize`: far below the 8 MiB a plan may take, so a suite whose
/// results travelled through Pod logs would lose them to rotation, and durable delivery shows it
/// loses nothing.
pub(super) const CONTAINER_LOG_MAX_SIZE: &str = "1Mi";
/// Debian packages of the node.
const PACKAGES: &[&str] = &[
    "containerd",
    "runc",
    "containernetworking-plugins",
    "busybox-static",
];

fn controller_manager(cluster: &Cluster) -> Proc {
    let dir = cluster.root.join("kube-controller-manager");
    let pki = cluster.pki();
    let file = |name: &str| pki.join(name).display().to_string();
    Proc {
        name: "kube-controller-manager",
        program: cluster.bins.path(Component::KubeControllerManager),
        args: vec![
            format!("--cert-dir={}", dir.display()),
            format!("--kubeconfig={}", dir.join("kubeconfig").display()),
            format!("--authentication-kubeconfig={}", dir.join("kubeconfig").display()),
            format!("--authorization-kubeconfig={}", dir.join("kubeconfig").display()),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={CONTROLLER_MANAGER_PORT}"),
            "--leader-elect=false".to_owned(),
            "--use-service-account-credentials=true".to_owned(),
            format!("--service-account-private-key-file={}", file("sa.key")),
            format!("--root-ca-file={}", file("ca.crt")),
            format!("--cluster-signing-cert-file={}", file("ca.crt")),
            "--controllers=*,-bootstrapsigner,-tokencleaner,-csrsigning".to_owned(),
            format!("--service-cluster-ip-range={}", super::proxy::SERVICE_CIDR),
            "--profiling=false".to_owned(),
        ],
        env: Vec::new(),
        netns: None,
        marker: dir,
        timeout: Duration::from_secs(60),
    }
}

fn scheduler(cluster: &Cluster) -> Proc {
    let dir = cluster.root.join("kube-scheduler");
    Proc {
        name: "kube-scheduler",
        program: cluster.bins.path(Component::KubeScheduler),
        args: vec![
            format!("--cert-dir={}", dir.display()),
            format!("--kubeconfig={}", dir.join("kubeconfig").display()),
            format!("--authentication-kubeconfig={}", dir.join("kubeconfig").display()),
            format!("--authorization-kubeconfig={}", dir.join("kubeconfig").display()),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={SCHEDULER_PORT}"),
            "--leader-elect=false".to_owned(),
            "--profiling=false".to_owned(),
        ],
        env: Vec::new(),
        netns: None,
        marker: dir,
        timeout: Duration::from_secs(60),
    }
}

fn containerd_dir(cluster: &Cluster) -> PathBuf {
    cluster.root.join("containerd")
}

fn containerd_socket(cluster: &Cluster) -> PathBuf {
    containerd_dir(cluster).join("containerd.sock")
}

fn containerd(cluster: &Cluster) -> Proc {
    let config = containerd_dir(cluster).join("config.toml");
    Proc {
        name: "containerd",
        program: PathBuf::from("/usr/bin/containerd"),
        args: vec![format!("--config={}", config.display())],
        env: Vec::new(),
        netns: None,
        marker: config,
        timeout: Duration::from_secs(30),
    }
}

fn kubelet(cluster: &Cluster) -> Proc {
    let dir = cluster.root.join("kubelet");
    Proc {
        name: "kubelet",
        program: cluster.bins.path(Component::Kubelet),
        args: vec![
            format!("--cert-dir={}", dir.display()),
            format!("--config={}", dir.join("config.yaml").display()),
            format!("--kubeconfig={}", dir.join("kubeconfig").display()),
            format!("--root-dir={}", dir.join("root").display()),
            format!("--hostname-override={}", pki::NODE_NAME),
            "--v=1".to_owned(),
        ],
        env: Vec::new(),
        netns: None,
        marker: dir,
        timeout: Duration::from_secs(90),
    }
}

/// The full tier's processes, in start order.
pub(super) fn procs(cluster: &Cluster) -> Vec<Proc> {
    vec![
        controller_manager(cluster),
        scheduler(cluster),
        containerd(cluster),
        kubelet(cluster),
    ]
}

/// `https://127.0.0.1:PORT/healthz` answers `ok` (anonymous access is allowed there).
fn healthz(port: u16) -> bool {
    Command::new("curl")
        .args(["-skf", "--max-time", "2"])
        .arg(format!("https://127.0.0.1:{port}/healthz"))
        .output()
        .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok")
}

fn write_kubeconfig(cluster: &Cluster, dir: &Path, user: &str, identity: &str) -> anyhow::Result<()> {
    fs::create_dir_all(dir)?;
    kubeconfig::write(
        &dir.join("kubeconfig"),
        &cluster.server(),
        user,
        &cluster.pki(),
        identity,
    )
}

fn cni_config() -> String {
    format!(
        r#"{{"cniVersion": "1.0.0", "name": "ptah", "plugins": [
  {{"type": "bridge", "bridge": "{BRIDGE}", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {{"type": "host-local", "ranges": [[{{"subnet": "{POD_SUBNET}"}}]], "routes": [{{"dst": "0.0.0.0/0"}}]}}}},
  {{"type": "loopback"}}
]}}
"#
    )
}

/// KubeletConfiguration for this host: cgroup v1 through cgroupfs (`failCgroupV1: false`),
/// loopback only, webhook authn/authz, no swap check, eviction thresholds that a busy
/// development disk does not trip, and small container logs ([`CONTAINER_LOG_MAX_SIZE`]).
fn kubelet_config(cluster: &Cluster, dir: &Path) -> String {
    let pki = cluster.pki();
    let socket = containerd_socket(cluster);
    format!(
        r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
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
evictionHard: {{"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%"}}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
localStorageCapacityIsolation: false
syncFrequency: 10s
fileCheckFrequency: 10s
volumeStatsAggPeriod: 0s
staticPodPath: {static_pods}
containerLogMaxSize: {CONTAINER_LOG_MAX_SIZE}
containerLogMaxFiles: 2
"#,
        ca = pki.join("ca.crt").display(),
        crt = pki.join("kubelet-serving.crt").display(),
        key = pki.join("kubelet-serving.key").display(),
        socket = socket.display(),
        static_pods = dir.join("manifests").display(),
    )
}

fn ctr(cluster: &Cluster) -> Command {
    let mut cmd = Command::new("ctr");
    cmd.arg("--address").arg(containerd_socket(cluster));
    cmd
}

/// Is node `name` `Ready`?
pub(super) fn node_ready(cluster: &Cluster, name: &str) -> bool {
    let pki = cluster.pki();
    let out = Command::new("curl")
        .args(["-sf", "--max-time", "3", "--cacert"])
        .arg(pki.join("ca.crt"))
        .arg("--cert")
        .arg(pki.join("admin.crt"))
        .arg("--key")
        .arg(pki.join("admin.key"))
        .arg(format!("{}/api/v1/nodes/{name}", cluster.server()))
        .output();
    let Ok(out) = out else { return false };
    let Ok(node) = serde_json::from_slice::<Value>(&out.stdout) else {
        return false;
    };
    node["status"]["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// Starts whatever of the full tier is not running yet, and waits for the node to be Ready.
pub(super) fn up(cluster: &Cluster) -> anyhow::Result<()> {
    let cm = controller_manager(cluster);
    if cm.running(&cluster.root).is_none() {
        step("kube-controller-manager", || {
            write_kubeconfig(
                cluster,
                &cm.dir(&cluster.root),
                "system:kube-controller-manager",
                pki::CONTROLLER_MANAGER,
            )?;
            cm.start(&cluster.root, || healthz(CONTROLLER_MANAGER_PORT))
                .map(|_| ())
        })?;
    }
    let sched = scheduler(cluster);
    if sched.running(&cluster.root).is_none() {
        step("kube-scheduler", || {
            write_kubeconfig(
                cluster,
                &sched.dir(&cluster.root),
                "system:kube-scheduler",
                pki::SCHEDULER,
            )?;
            sched.start(&cluster.root, || healthz(SCHEDULER_PORT)).map(|_| ())
        })?;
    }
    let runtime = containerd(cluster);
    if runtime.running(&cluster.root).is_none() {
        step("packages containerd runc CNI busybox-static", || {
            apt::ensure_packages(PACKAGES)
        })?;
        step(
            "containerd (CRI, runc, CNI bridge) with the local pause image",
            || {
                let dir = containerd_dir(cluster);
                fs::create_dir_all(dir.join("cni-conf"))?;
                fs::create_dir_all(dir.join("certs.d"))?;
                fs::write(dir.join("config.toml"), runtime::containerd_config(&dir))?;
                fs::write(dir.join("cni-conf").join("10-ptah.conflist"), cni_config())?;
                runtime::trust_services_registry(&dir.join("certs.d"), None)?;
                // Host state to restore on `down`.
                let forward = fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap_or_default();
                fs::write(dir.join("ip_forward.before"), forward.trim())?;
                fs::write(dir.join("netns.before"), runtime::netns_names().join("\n"))?;
                runtime.start(&cluster.root, || {
                    ctr(cluster)
                        .arg("version")
                        .output()
                        .is_ok_and(|o| o.status.success())
                })?;
                let built = images::pause(&dir.join("pause-rootfs"), &dir.join("pause-image"))?;
                run(ctr(cluster)
                    .args(["-n", "k8s.io", "images", "import"])
                    .arg(&built.tarball))?;
                eprintln!("    imported {} ({})", images::PAUSE_IMAGE, built.manifest_digest);
                Ok(())
            },
        )?;
    }
    let node = kubelet(cluster);
    if node.running(&cluster.root).is_none() {
        step(&format!("bridge {BRIDGE} with a fixed MAC"), || {
            super::bridge::pin(None, BRIDGE, super::bridge::HOST_MAC)
        })?;
        step(&format!("kubelet as node {}", pki::NODE_NAME), || {
            let dir = node.dir(&cluster.root);
            write_kubeconfig(
                cluster,
                &dir,
                &format!("system:node:{}", pki::NODE_NAME),
                pki::KUBELET,
            )?;
            fs::create_dir_all(dir.join("manifests"))?;
            fs::write(dir.join("config.yaml"), kubelet_config(cluster, &dir))?;
            // The kubelet wants its cgroup root to exist in every v1 hierarchy.
            for hierarchy in fs::read_dir("/sys/fs/cgroup").into_iter().flatten().flatten() {
                let path = hierarchy.path();
                if path.file_name().is_some_and(|n| n != "unified") && path.join("cgroup.procs").exists() {
                    fs::create_dir_all(path.join(CGROUP_ROOT))
                        .with_context(|| format!("cannot create {}", path.join(CGROUP_ROOT).display()))?;
                }
            }
            node.start(&cluster.root, || healthz_plain(KUBELET_HEALTHZ_PORT))
                .map(|_| ())
        })?;
    }
    step(&format!("node {} Ready", pki::NODE_NAME), || {
        let started = Instant::now();
        while !node_ready(cluster, pki::NODE_NAME) {
            if started.elapsed() > Duration::from_secs(120) {
                bail!(
                    "node {} not Ready after 120s; see {}",
                    pki::NODE_NAME,
                    node.dir(&cluster.root).join("log").display()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Ok(())
    })
}

/// The kubelet's healthz is plain HTTP.
fn healthz_plain(port: u16) -> bool {
    Command::new("curl")
        .args(["-sf", "--max-time", "2"])
        .arg(format!("http://127.0.0.1:{port}/healthz"))
        .output()
        .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "ok")
}

/// Undoes what the node changed on the host, after its processes stopped: containers left by
/// runc, shims, mounts under target/cluster, network namespaces and the bridge it created,
/// `net.ipv4.ip_forward`, and the empty cgroups under `/ptah`.
pub(super) fn clean_host(cluster: &Cluster) -> anyhow::Result<()> {
    let dir = containerd_dir(cluster);
    runtime::remove_containers(&dir.join("runc-root"), &containerd_socket(cluster), "containerd")?;
    runtime::unmount_under(&cluster.root)?;
    if let Ok(before) = fs::read_to_string(dir.join("netns.before")) {
        let before: Vec<&str> = before.lines().collect();
        for name in runtime::netns_names() {
            if name.starts_with("cni-") && !before.contains(&name.as_str()) {
                let path = Path::new("/run/netns").join(&name);
                let _ = Command::new("umount").arg(&path).output();
                let _ = fs::remove_file(&path);
                eprintln!("    removed network namespace {name}");
            }
        }
    }
    if Path::new("/sys/class/net").join(BRIDGE).exists() {
        run(Command::new("ip").args(["link", "delete", BRIDGE]))?;
        eprintln!("    removed bridge {BRIDGE}");
    }
    if let Ok(before) = fs::read_to_string(dir.join("ip_forward.before")) {
        let before = before.trim();
        if before == "0" || before == "1" {
            fs::write("/proc/sys/net/ipv4/ip_forward", before).context("cannot restore ip_forward")?;
        }
    }
    for hierarchy in fs::read_dir("/sys/fs/cgroup").into_iter().flatten().flatten() {
        runtime::remove_empty_cgroups(&hierarchy.path().join(CGROUP_ROOT));
    }
    Ok(())
}
