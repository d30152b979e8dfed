//! The isolation worker (`cargo xtask cluster up --nodes 2`): a second kubelet with its own
//! containerd and kube-proxy, all three in the network namespace `ptah-isolation`, registered
//! as node `ptah-isolation` with the same API server, labelled and tainted
//! `operator.ptah.run/isolation=true(:NoSchedule)` like the kind provider's isolation worker.
//!
//! Everything it keeps lives under `target/cluster/isolation/` (containerd's root, state, runc
//! root and CNI leases; the kubelet's root and Pod logs); its Pods' cgroups under
//! `/ptah-isolation` in every v1 hierarchy. [`net`] builds its network; [`inventory`] lists what
//! it left on the host after `down`, which fails when anything is. The faults the tests inject
//! into it are in `cluster::faults`.

mod config;
pub(super) mod inventory;
mod net;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Cluster, Proc, kubeconfig, node, pki, proxy, relay::GATEWAY, runtime};
use crate::{
    images,
    k8s::Component,
    kind::config::ISOLATION_LABEL,
    services::apt,
    step::{run, step},
};

/// The network namespace the node's three processes run in.
pub const NETNS: &str = "ptah-isolation";
/// The host's end of the veth pair.
const VETH_HOST: &str = "ptahiso0";
/// The host's address on the veth pair (the node's is `pki::ISOLATION_NODE_IP`).
const HOST_IP: &str = "10.244.79.1";
/// The node's pod subnet, routed by the host to the node.
pub(super) const POD_SUBNET: &str = "10.244.78.0/24";
/// The node's CNI bridge, inside its namespace.
const BRIDGE: &str = "ptahcni1";
/// The cgroup (in every v1 hierarchy) under which its kubelet puts Pods.
const CGROUP_ROOT: &str = "ptah-isolation";
/// The kubelet's API port on the node's address.
pub(super) const KUBELET_PORT: u16 = 56250;
/// The kubelet's healthz port on 127.0.0.1 inside the namespace.
const KUBELET_HEALTHZ_PORT: u16 = 56248;
/// The directory under `target/cluster/`.
const DIR: &str = "isolation";
/// How long the node may take to become Ready after its kubelet started.
const READY_TIMEOUT: Duration = Duration::from_secs(180);

fn dir(cluster: &Cluster) -> PathBuf {
    cluster.root.join(DIR)
}

fn containerd_dir(cluster: &Cluster) -> PathBuf {
    dir(cluster).join("containerd")
}

fn containerd_socket(cluster: &Cluster) -> PathBuf {
    containerd_dir(cluster).join("containerd.sock")
}

fn containerd(cluster: &Cluster) -> Proc {
    let config = containerd_dir(cluster).join("config.toml");
    Proc {
        name: "isolation/containerd",
        program: PathBuf::from("/usr/bin/containerd"),
        args: vec![format!("--config={}", config.display())],
        env: Vec::new(),
        marker: config,
        timeout: Duration::from_secs(30),
        netns: Some(NETNS),
    }
}

fn kubelet(cluster: &Cluster) -> Proc {
    let dir = dir(cluster).join("kubelet");
    Proc {
        name: "isolation/kubelet",
        program: cluster.bins.path(Component::Kubelet),
        args: vec![
            format!("--cert-dir={}", dir.display()),
            format!("--config={}", dir.join("config.yaml").display()),
            format!("--kubeconfig={}", dir.join("kubeconfig").display()),
            format!("--root-dir={}", dir.join("root").display()),
            format!("--hostname-override={}", pki::ISOLATION_NODE_NAME),
            format!("--node-ip={}", pki::ISOLATION_NODE_IP),
            format!("--node-labels={ISOLATION_LABEL}=true"),
            "--v=1".to_owned(),
        ],
        env: Vec::new(),
        marker: dir,
        timeout: Duration::from_secs(90),
        netns: Some(NETNS),
    }
}

fn kube_proxy(cluster: &Cluster) -> Proc {
    let config = dir(cluster).join("kube-proxy").join("config.yaml");
    Proc {
        name: "isolation/kube-proxy",
        program: cluster.bins.path(Component::KubeProxy),
        args: vec![format!("--config={}", config.display()), "--v=1".to_owned()],
        env: Vec::new(),
        marker: config,
        timeout: Duration::from_secs(60),
        netns: Some(NETNS),
    }
}

/// The node's processes, in start order.
pub(super) fn procs(cluster: &Cluster) -> Vec<Proc> {
    vec![containerd(cluster), kubelet(cluster), kube_proxy(cluster)]
}

/// Do all of the node's processes run?
pub(super) fn running(cluster: &Cluster) -> bool {
    procs(cluster).iter().all(|p| p.running(&cluster.root).is_some())
}

/// Resumes a kubelet a test left frozen (`faults`), so that it stops on SIGTERM at once rather
/// than after the grace period and a SIGKILL.
pub(super) fn thaw(cluster: &Cluster) {
    if let Some(pid) = kubelet(cluster).running(&cluster.root) {
        let _ = Command::new("kill")
            .args(["-s", "CONT", &pid.to_string()])
            .output();
    }
}

/// The `isolation` object of `cluster.json`, which `cluster::faults` reads.
pub(super) fn state(cluster: &Cluster) -> Value {
    json!({
        "nodeName": pki::ISOLATION_NODE_NAME,
        "netns": NETNS,
        "nodeIp": pki::ISOLATION_NODE_IP,
        "podSubnet": POD_SUBNET,
        "gateway": GATEWAY.to_string(),
        "apiserverPort": cluster.apiserver_port,
        "kubeletPort": KUBELET_PORT,
        "kubeletDir": kubelet(cluster).dir(&cluster.root),
        "label": format!("{ISOLATION_LABEL}=true"),
    })
}

/// `curl` inside the namespace: its loopback is not the host's.
fn healthz_in_netns(port: u16) -> bool {
    Command::new("ip")
        .args(["netns", "exec", NETNS, "curl", "-sf", "--max-time", "2"])
        .arg(format!("http://127.0.0.1:{port}/healthz"))
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Starts the node (or keeps it when its processes run and it is Ready), after node 1, kube-proxy
/// and the pod relay, which it reaches the API server through.
pub(super) fn up(cluster: &Cluster) -> anyhow::Result<()> {
    if running(cluster) && node::node_ready(cluster, pki::ISOLATION_NODE_NAME) {
        eprintln!(
            "    isolation worker {} running and Ready: kept",
            pki::ISOLATION_NODE_NAME
        );
        return Ok(());
    }
    if !cluster
        .pki()
        .join(format!("{}.crt", pki::ISOLATION_KUBELET))
        .is_file()
    {
        bail!(
            "the cluster's PKI predates the isolation worker; run `cargo xtask cluster down` and \
             `cargo xtask cluster up --nodes 2`"
        );
    }
    step("stop what is left of the isolation worker", || {
        for proc in procs(cluster).iter().rev() {
            proc.stop()?;
        }
        clean_host(cluster)
    })?;
    step("packages nftables (the faults)", || {
        apt::ensure_packages(&["nftables"])
    })?;
    step(
        &format!("network namespace {NETNS}, veth {VETH_HOST}, routes, /etc/hosts line"),
        net::create,
    )?;
    let runtime = containerd(cluster);
    step("containerd in the namespace, with the local pause image", || {
        let dir = containerd_dir(cluster);
        fs::create_dir_all(dir.join("cni-conf"))?;
        fs::create_dir_all(dir.join("certs.d"))?;
        fs::write(dir.join("config.toml"), runtime::containerd_config(&dir))?;
        fs::write(
            dir.join("cni-conf").join("10-ptah-isolation.conflist"),
            config::cni(&dir.join("ipam")),
        )?;
        runtime::trust_services_registry(&dir.join("certs.d"), Some(GATEWAY))?;
        let ctr = || {
            let mut cmd = Command::new("ctr");
            cmd.arg("--address").arg(containerd_socket(cluster));
            cmd
        };
        runtime.start(&cluster.root, || {
            ctr().arg("version").output().is_ok_and(|o| o.status.success())
        })?;
        let built = images::pause(&dir.join("pause-rootfs"), &dir.join("pause-image"))?;
        run(ctr()
            .args(["-n", "k8s.io", "images", "import"])
            .arg(&built.tarball))
    })?;
    let node = kubelet(cluster);
    let started = step(&format!("kubelet as node {}", pki::ISOLATION_NODE_NAME), || {
        let dir = node.dir(&cluster.root);
        fs::create_dir_all(dir.join("manifests"))?;
        fs::create_dir_all(dir.join("pod-logs"))?;
        write_kubeconfig(
            cluster,
            &dir,
            &format!("system:node:{}", pki::ISOLATION_NODE_NAME),
            pki::ISOLATION_KUBELET,
        )?;
        let text = config::kubelet(&config::KubeletPaths {
            pki: &cluster.pki(),
            socket: &containerd_socket(cluster),
            manifests: &dir.join("manifests"),
            pod_logs: &dir.join("pod-logs"),
        });
        fs::write(dir.join("config.yaml"), text)?;
        for hierarchy in v1_hierarchies() {
            let path = hierarchy.join(CGROUP_ROOT);
            fs::create_dir_all(&path).with_context(|| format!("cannot create {}", path.display()))?;
        }
        let started = Instant::now();
        node.start(&cluster.root, || healthz_in_netns(KUBELET_HEALTHZ_PORT))?;
        Ok(started)
    })?;
    let proxy = kube_proxy(cluster);
    step("kube-proxy in the namespace (iptables mode)", || {
        let dir = proxy.dir(&cluster.root);
        write_kubeconfig(cluster, &dir, "system:kube-proxy", pki::KUBE_PROXY)?;
        let kubeconfig = dir.join("kubeconfig").display().to_string();
        fs::write(
            dir.join("config.yaml"),
            proxy::config(&kubeconfig, pki::ISOLATION_NODE_NAME, POD_SUBNET),
        )?;
        proxy
            .start(&cluster.root, || healthz_in_netns(proxy::HEALTHZ_PORT))
            .map(|_| ())
    })?;
    step(&format!("node {} Ready", pki::ISOLATION_NODE_NAME), || {
        while !node::node_ready(cluster, pki::ISOLATION_NODE_NAME) {
            if started.elapsed() > READY_TIMEOUT {
                bail!(
                    "node {} not Ready {READY_TIMEOUT:?} after its kubelet started; see {}",
                    pki::ISOLATION_NODE_NAME,
                    node.dir(&cluster.root).join("log").display()
                );
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        eprintln!(
            "    node {} Ready {:.1}s after its kubelet started",
            pki::ISOLATION_NODE_NAME,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    })
}

/// A kubeconfig at the bridge gateway (the pod relay forwards it to the API server), the only
/// address of the API server the namespace reaches.
fn write_kubeconfig(cluster: &Cluster, dir: &Path, user: &str, identity: &str) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let server = format!("https://{GATEWAY}:{}", cluster.apiserver_port);
    kubeconfig::write(&dir.join("kubeconfig"), &server, user, &cluster.pki(), identity)
}

/// Every cgroup hierarchy under /sys/fs/cgroup, the v2 `unified` one included: the kubelet
/// makes its cgroup root there too, so cleanup and the inventory look there.
fn hierarchies() -> Vec<PathBuf> {
    fs::read_dir("/sys/fs/cgroup")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("cgroup.procs").exists())
        .collect()
}

/// The cgroup v1 hierarchies, where the kubelet wants its cgroup root to exist before it starts.
fn v1_hierarchies() -> Vec<PathBuf> {
    hierarchies()
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "unified"))
        .collect()
}

/// Undoes what the node made on the host, after its processes stopped: its containers and
/// shims, mounts under its directory, its Pods' namespaces, its own namespace, veth, route and
/// hosts line, and its cgroups.
pub(super) fn clean_host(cluster: &Cluster) -> anyhow::Result<()> {
    let pod_netns = net::pod_netns();
    runtime::remove_containers(
        &containerd_dir(cluster).join("runc-root"),
        &containerd_socket(cluster),
        "isolation containerd",
    )?;
    runtime::unmount_under(&dir(cluster))?;
    for name in pod_netns {
        let path = Path::new("/run/netns").join(&name);
        let _ = Command::new("umount").arg(&path).output();
        let _ = fs::remove_file(&path);
        eprintln!("    removed the isolation worker's Pod namespace {name}");
    }
    net::remove()?;
    for hierarchy in hierarchies() {
        runtime::remove_empty_cgroups(&hierarchy.join(CGROUP_ROOT));
    }
    Ok(())
}
