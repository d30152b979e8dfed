//! What the isolation worker left on the host: `cargo xtask cluster down` fails when this is not
//! empty, so a leak is found the day it is made, not when the next `up` trips over it.
//!
//! [`observe`] reads the host; [`leftovers`] is the pure judgement over that reading.

use std::{fs, path::Path, process::Command};

use super::{
    CGROUP_ROOT, Cluster, NETNS, POD_SUBNET, VETH_HOST, containerd_socket, dir, hierarchies, net, procs,
};
use crate::services::process;

/// One reading of the host, as far as the isolation worker could have changed it.
#[derive(Debug, Default)]
pub(in crate::cluster) struct Observed {
    /// Names under /run/netns.
    pub netns: Vec<String>,
    /// `cni-…` namespaces that existed before the cluster started (node 1 records them).
    pub netns_before: Vec<String>,
    /// Network interfaces of the host.
    pub links: Vec<String>,
    /// `ip route show` of the host.
    pub routes: String,
    /// /proc/self/mountinfo.
    pub mountinfo: String,
    /// The node's cgroup directories that exist.
    pub cgroups: Vec<String>,
    /// /etc/hosts.
    pub hosts: String,
    /// `nft list tables` of the host.
    pub nft_tables: String,
    /// The node's processes (and containerd shims) still alive, as `name pid`.
    pub processes: Vec<String>,
}

/// Reads the host.
pub(in crate::cluster) fn observe(cluster: &Cluster) -> Observed {
    let names = |path: &str| -> Vec<String> {
        fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_owned))
            .collect()
    };
    let stdout = |cmd: &mut Command| {
        cmd.output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let mut processes: Vec<String> = procs(cluster)
        .iter()
        .flat_map(|p| {
            process::find(&p.program_name(), &p.marker)
                .into_iter()
                .map(move |pid| format!("{} {pid}", p.name))
        })
        .collect();
    processes.extend(
        process::find("containerd-shim-runc-v2", &containerd_socket(cluster))
            .into_iter()
            .map(|pid| format!("isolation containerd shim {pid}")),
    );
    let before = fs::read_to_string(cluster.root.join("containerd").join("netns.before")).unwrap_or_default();
    Observed {
        netns: names("/run/netns"),
        netns_before: before.lines().map(str::to_owned).collect(),
        links: names("/sys/class/net"),
        routes: stdout(Command::new("ip").args(["route", "show"])),
        mountinfo: fs::read_to_string("/proc/self/mountinfo").unwrap_or_default(),
        cgroups: hierarchies()
            .into_iter()
            .map(|h| h.join(CGROUP_ROOT))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect(),
        hosts: fs::read_to_string(net::HOSTS).unwrap_or_default(),
        nft_tables: stdout(Command::new("nft").args(["list", "tables"])),
        processes,
    }
}

/// Everything in `seen` the node made and `down` should have removed, one line each; `dir` is
/// the node's directory (`target/cluster/isolation`, resolved).
pub(in crate::cluster) fn leftovers(seen: &Observed, dir: &Path) -> Vec<String> {
    let mut left: Vec<String> = seen.processes.iter().map(|p| format!("process {p}")).collect();
    for name in &seen.netns {
        if name == NETNS || (name.starts_with("cni-") && !seen.netns_before.contains(name)) {
            left.push(format!("network namespace {name}"));
        }
    }
    if seen.links.iter().any(|l| l == VETH_HOST) {
        left.push(format!("veth {VETH_HOST}"));
    }
    let subnet = POD_SUBNET;
    for route in seen
        .routes
        .lines()
        .filter(|r| r.starts_with(subnet) || r.contains(VETH_HOST))
    {
        left.push(format!("route {route}"));
    }
    let dir = dir.display().to_string();
    let netns_mount = format!("/run/netns/{NETNS}");
    for point in seen.mountinfo.lines().filter_map(|l| l.split(' ').nth(4)) {
        if point.starts_with(&dir) || point == netns_mount {
            left.push(format!("mount {point}"));
        }
    }
    left.extend(seen.cgroups.iter().map(|c| format!("cgroup {c}")));
    for line in seen.hosts.lines().filter(|l| l.ends_with(net::HOSTS_MARKER)) {
        left.push(format!("{} line {line:?}", net::HOSTS));
    }
    for table in seen.nft_tables.lines().filter(|t| t.contains("ptah_fault")) {
        left.push(format!("nftables {table}"));
    }
    left
}

/// [`leftovers`] of the host now.
pub(in crate::cluster) fn check(cluster: &Cluster) -> Vec<String> {
    let dir = dir(cluster);
    let dir = fs::canonicalize(&dir).unwrap_or(dir);
    leftovers(&observe(cluster), &dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_host_has_no_leftovers_even_with_foreign_things_on_it() {
        let seen = Observed {
            netns: vec!["cni-old".to_owned(), "someone-else".to_owned()],
            netns_before: vec!["cni-old".to_owned()],
            links: vec!["lo".to_owned(), "eth0".to_owned(), "ptahcni0".to_owned()],
            routes: "default via 192.0.2.1 dev eth0\n10.244.77.0/24 dev ptahcni0 proto kernel\n".to_owned(),
            mountinfo: "36 25 0:32 / /work/main/target/other rw - tmpfs tmpfs rw\n".to_owned(),
            cgroups: Vec::new(),
            hosts: "127.0.0.1 localhost\n".to_owned(),
            nft_tables: "table ip filter\ntable ip nat\n".to_owned(),
            processes: Vec::new(),
        };
        assert_eq!(
            leftovers(&seen, Path::new("/work/main/target/cluster/isolation")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn every_kind_of_leftover_is_named() {
        let seen = Observed {
            netns: vec!["ptah-isolation".to_owned(), "cni-new".to_owned()],
            netns_before: Vec::new(),
            links: vec!["ptahiso0".to_owned()],
            routes: "10.244.78.0/24 via 10.244.79.2 dev ptahiso0\n".to_owned(),
            mountinfo: "36 25 0:32 / /w/target/cluster/isolation/kubelet/root/pods/x rw - tmpfs tmpfs rw\n\
                        37 25 0:4 net:[4026532] /run/netns/ptah-isolation rw - nsfs nsfs rw\n"
                .to_owned(),
            cgroups: vec!["/sys/fs/cgroup/memory/ptah-isolation".to_owned()],
            hosts: format!(
                "127.0.0.1 localhost\n10.244.79.2 ptah-isolation {}\n",
                net::HOSTS_MARKER
            ),
            nft_tables: "table inet ptah_fault_api\n".to_owned(),
            processes: vec!["isolation/kubelet 42".to_owned()],
        };
        let left = leftovers(&seen, Path::new("/w/target/cluster/isolation"));
        for expected in [
            "process isolation/kubelet 42",
            "network namespace ptah-isolation",
            "network namespace cni-new",
            "veth ptahiso0",
            "route 10.244.78.0/24 via 10.244.79.2 dev ptahiso0",
            "mount /w/target/cluster/isolation/kubelet/root/pods/x",
            "mount /run/netns/ptah-isolation",
            "cgroup /sys/fs/cgroup/memory/ptah-isolation",
            "nftables table inet ptah_fault_api",
        ] {
            assert!(left.iter().any(|l| l == expected), "{expected} not in {left:#?}");
        }
        assert!(left.iter().any(|l| l.starts_with("/etc/hosts line")), "{left:#?}");
        assert_eq!(left.len(), 10, "{left:#?}");
    }
}
