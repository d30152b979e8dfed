//! The full tier's processes: kube-controller-manager, kube-scheduler, and the node.

use std::{fs, path::Path, time::Duration};

use anyhow::bail;

use super::{Cluster, Proc, kubeconfig, pki};
use crate::{k8s::Component, step::step};

/// kube-controller-manager's secure port on 127.0.0.1.
const CONTROLLER_MANAGER_PORT: u16 = 56257;
/// kube-scheduler's secure port on 127.0.0.1.
const SCHEDULER_PORT: u16 = 56259;

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
            "--service-cluster-ip-range=10.96.0.0/16".to_owned(),
            "--profiling=false".to_owned(),
        ],
        env: Vec::new(),
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
        marker: dir,
        timeout: Duration::from_secs(60),
    }
}

/// The full tier's processes, in start order.
pub(super) fn procs(cluster: &Cluster) -> Vec<Proc> {
    vec![controller_manager(cluster), scheduler(cluster)]
}

/// `https://127.0.0.1:PORT/healthz` answers `ok` (anonymous access is allowed there).
fn healthz(port: u16) -> bool {
    std::process::Command::new("curl")
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

/// Starts whatever of the full tier is not running yet.
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
    bail!("the kubelet (containerd, runc, CNI) is not wired yet: the full tier stops at the scheduler")
}

/// Undoes what the node changed on the host (none yet).
pub(super) fn clean_host(_cluster: &Cluster) -> anyhow::Result<()> {
    Ok(())
}
