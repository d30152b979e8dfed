//! containerd as both nodes run it: its configuration, the registry it trusts, and the host state
//! its containers leave behind (runc containers, shims, mounts, namespaces, cgroups).

use std::{fs, net::Ipv4Addr, path::Path, process::Command};

use crate::{images, services::process, step::output};

/// containerd 1.6 configuration: state under target/cluster, CRI with the local pause image,
/// `restrict_oom_score_adj` (root lacks CAP_SYS_RESOURCE here), Debian's CNI plugins.
pub(super) fn containerd_config(dir: &Path) -> String {
    let d = dir.display();
    format!(
        r#"version = 2
root = "{d}/root"
state = "{d}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "{d}/containerd.sock"

[ttrpc]
  address = "{d}/containerd.sock.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  restrict_oom_score_adj = true
  sandbox_image = "{pause}"
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{d}/cni-conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "{d}/runc-root"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "{d}/certs.d"
"#,
        pause = images::PAUSE_IMAGE
    )
}

/// The network namespaces under /run/netns now.
pub(super) fn netns_names() -> Vec<String> {
    fs::read_dir("/run/netns")
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Deletes the containers left in runc's `runc_root` (one directory per containerd namespace)
/// and kills the shims of the containerd at `socket`; `what` names that containerd in the log.
pub(super) fn remove_containers(runc_root: &Path, socket: &Path, what: &str) -> anyhow::Result<()> {
    for namespace in fs::read_dir(runc_root).into_iter().flatten().flatten() {
        let root = namespace.path();
        let listed =
            output(Command::new("runc").arg("--root").arg(&root).args(["list", "-q"])).unwrap_or_default();
        for id in listed.lines().filter(|l| !l.is_empty()) {
            let _ = Command::new("runc")
                .arg("--root")
                .arg(&root)
                .args(["delete", "--force", id])
                .output();
        }
    }
    for pid in process::find("containerd-shim-runc-v2", socket) {
        process::stop(pid, "KILL")?;
        eprintln!("    stopped {what} shim pid {pid}");
    }
    Ok(())
}

/// Unmounts every mount point under `root`, deepest first.
pub(super) fn unmount_under(root: &Path) -> anyhow::Result<()> {
    let Ok(info) = fs::read_to_string("/proc/self/mountinfo") else {
        return Ok(());
    };
    // /proc/self/mountinfo names resolved paths: a workspace reached through a symlink would
    // otherwise match nothing and leave its mounts behind.
    let root = fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let prefix = root.display().to_string();
    let mut points: Vec<String> = info
        .lines()
        .filter_map(|line| line.split(' ').nth(4).map(str::to_owned))
        .filter(|p| p.starts_with(&prefix))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for point in points {
        let _ = Command::new("umount").args(["-l", &point]).output();
        eprintln!("    unmounted {point}");
    }
    Ok(())
}

/// `rmdir` of a cgroup tree, leaves first; a cgroup with processes stays.
pub(super) fn remove_empty_cgroups(dir: &Path) {
    if !dir.is_dir() {
        return;
    }
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_cgroups(&entry.path());
        }
    }
    let _ = fs::remove_dir(dir);
}

/// Makes containerd trust the TLS registry of `cargo xtask services` (its CA, via
/// `certs.d/<host>/hosts.toml`) when the services are up; pods pass its credentials as an
/// image pull secret.
///
/// `via`: the address where this containerd reaches the registry's port instead of the host's
/// loopback, tried first. The isolation worker's containerd runs in a network namespace of its
/// own, where `127.0.0.1` is not the host: without it, every image of the local registry
/// (the data-plane image the operation Pods run) failed there with `connection refused`. The
/// pod relay forwards the port at the gateway, and the registry's certificate names it.
pub(super) fn trust_services_registry(certs_d: &Path, via: Option<Ipv4Addr>) -> anyhow::Result<()> {
    let Ok(services) = ptah_testservices::TestServices::load() else {
        eprintln!("    services not up: no registry to trust (run `cargo xtask services up` first)");
        return Ok(());
    };
    let registry = services.registry;
    let dir = certs_d.join(&registry.host);
    fs::create_dir_all(&dir)?;
    let ca = registry.ca_path.display();
    let mut hosts = format!("server = \"https://{}\"\n", registry.host);
    if let Some(via) = via {
        let port = registry
            .host
            .rsplit_once(':')
            .map(|(_, port)| port)
            .ok_or_else(|| anyhow::anyhow!("the registry address {} has no port", registry.host))?;
        hosts.push_str(&format!(
            "\n[host.\"https://{via}:{port}\"]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = \"{ca}\"\n"
        ));
    }
    hosts.push_str(&format!(
        "\n[host.\"https://{host}\"]\n  capabilities = [\"pull\", \"resolve\", \"push\"]\n  ca = \"{ca}\"\n",
        host = registry.host
    ));
    fs::write(dir.join("hosts.toml"), hosts)?;
    match via {
        Some(via) => eprintln!(
            "    containerd trusts https://{} at {via} (CA {ca})",
            registry.host
        ),
        None => eprintln!("    containerd trusts https://{} (CA {ca})", registry.host),
    }
    Ok(())
}
