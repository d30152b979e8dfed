//! The isolation worker's network: a namespace of its own, joined to the host by a routed veth
//! pair, and the /etc/hosts line by which the API server finds its kubelet.
//!
//! ```text
//! host: ptahcni0 10.244.77.1/24 (node 1's pods, the pod relay)   ptahiso0 10.244.79.1/30
//!        route 10.244.78.0/24 via 10.244.79.2                          |
//! netns ptah-isolation: eth0 10.244.79.2/30, default via 10.244.79.1; ptahcni1 10.244.78.1/24
//! ```
//!
//! Routing, not NAT, joins the two pod subnets, so a Pod on either node sees the other's real
//! address; the host's services and the API server are reached, as from node 1, at the bridge
//! gateway through the pod relay.

use std::{fs, path::Path, process::Command};

use anyhow::Context;

use super::{HOST_IP, KUBELET_HEALTHZ_PORT, KUBELET_PORT, NETNS, POD_SUBNET, VETH_HOST};
use crate::{
    cluster::{bridge, node::BRIDGE, pki, proxy, relay::GATEWAY},
    step::{output, run},
};

/// The hosts file the API server resolves the node name through.
pub(super) const HOSTS: &str = "/etc/hosts";
/// Ends the line `up` adds to [`HOSTS`]; `down` removes every line that ends so.
pub(super) const HOSTS_MARKER: &str =
    "# ptah-operator isolation worker: `cargo xtask cluster down` removes this line";

/// `ip -n NETNS ARGS`.
fn ip_in(args: &[&str]) -> anyhow::Result<()> {
    run(Command::new("ip").args(["-n", NETNS]).args(args))
}

/// Does the named network namespace exist?
pub(super) fn netns_exists() -> bool {
    Path::new("/run/netns").join(NETNS).exists()
}

/// Builds the namespace, the veth pair, addresses, routes both ways, the forwarding sysctls and
/// the hosts line. Expects none of them to exist ([`remove`] first).
pub(super) fn create() -> anyhow::Result<()> {
    ensure_host_bridge()?;
    // Node 1's pods and node 2's pods talk through the host: it must forward. Node 1 recorded
    // the value before the cluster and restores it on `down`.
    fs::write("/proc/sys/net/ipv4/ip_forward", "1").context("cannot enable ip_forward")?;
    run(Command::new("ip").args(["netns", "add", NETNS]))?;
    run(Command::new("ip").args([
        "link", "add", VETH_HOST, "type", "veth", "peer", "name", "eth0", "netns", NETNS,
    ]))?;
    run(Command::new("ip").args(["addr", "add", &format!("{HOST_IP}/30"), "dev", VETH_HOST]))?;
    run(Command::new("ip").args(["link", "set", VETH_HOST, "up"]))?;
    ip_in(&["link", "set", "lo", "up"])?;
    ip_in(&[
        "addr",
        "add",
        &format!("{}/30", pki::ISOLATION_NODE_IP),
        "dev",
        "eth0",
    ])?;
    ip_in(&["link", "set", "eth0", "up"])?;
    ip_in(&["route", "add", "default", "via", HOST_IP])?;
    run(Command::new("ip").args([
        "route",
        "add",
        POD_SUBNET,
        "via",
        pki::ISOLATION_NODE_IP,
        "dev",
        VETH_HOST,
    ]))?;
    // A new namespace starts with forwarding off; its bridge routes its pods' traffic. Its
    // reserved ports are its own too: keep the node's listening ports out of the ephemeral range,
    // as `up` does on the host.
    let mut ports: Vec<String> = [KUBELET_PORT, KUBELET_HEALTHZ_PORT]
        .into_iter()
        .chain(proxy::PORTS)
        .map(|p| p.to_string())
        .collect();
    ports.sort();
    run(Command::new("ip").args(["netns", "exec", NETNS, "sysctl", "-qw", "net.ipv4.ip_forward=1"]))?;
    bridge::pin(Some(NETNS), super::BRIDGE, bridge::ISOLATION_MAC)?;
    run(Command::new("ip")
        .args(["netns", "exec", NETNS, "sysctl", "-qw"])
        .arg(format!("net.ipv4.ip_local_reserved_ports={}", ports.join(","))))?;
    let hosts = fs::read_to_string(HOSTS).with_context(|| format!("cannot read {HOSTS}"))?;
    fs::write(HOSTS, with_entry(&hosts)).with_context(|| format!("cannot write {HOSTS}"))
}

/// Node 1's CNI bridge with the gateway address, made here when node 1 has not started a Pod
/// yet: the isolation worker reaches the pod relay (and so the API server) at the gateway. The
/// bridge plugin accepts an existing bridge and address; node 1's `clean_host` removes it.
fn ensure_host_bridge() -> anyhow::Result<()> {
    bridge::pin(None, BRIDGE, bridge::HOST_MAC)?;
    let addrs = output(Command::new("ip").args(["-4", "-o", "addr", "show", "dev", BRIDGE]))?;
    if !addrs.contains(&format!(" {GATEWAY}/")) {
        run(Command::new("ip").args(["addr", "add", &format!("{GATEWAY}/24"), "dev", BRIDGE]))?;
    }
    Ok(())
}

/// Removes the namespace (with everything inside it: the bridge, kube-proxy's and the faults'
/// rules), the host end of the veth (and so its routes) and the hosts line. Idempotent.
pub(super) fn remove() -> anyhow::Result<()> {
    if netns_exists() {
        run(Command::new("ip").args(["netns", "delete", NETNS]))?;
        eprintln!("    removed network namespace {NETNS}");
    }
    // The kernel frees a namespace (and so the veth peer) asynchronously; delete our end now.
    if Path::new("/sys/class/net").join(VETH_HOST).exists() {
        let _ = Command::new("ip").args(["link", "delete", VETH_HOST]).output();
        eprintln!("    removed veth {VETH_HOST}");
    }
    let hosts = fs::read_to_string(HOSTS).unwrap_or_default();
    if hosts.lines().any(|l| l.ends_with(HOSTS_MARKER)) {
        fs::write(HOSTS, without_entry(&hosts)).with_context(|| format!("cannot write {HOSTS}"))?;
        eprintln!("    removed the {} line from {HOSTS}", pki::ISOLATION_NODE_NAME);
    }
    Ok(())
}

/// The names of the Pod namespaces joined to the isolation namespace (their veth peers live
/// there), so that they can be told from node 1's.
pub(super) fn pod_netns() -> Vec<String> {
    if !netns_exists() {
        return Vec::new();
    }
    output(Command::new("ip").args(["-n", NETNS, "netns", "list-id"]))
        .map(|text| parse_list_id(&text))
        .unwrap_or_default()
}

/// `nsid 1 (iproute2 netns name: cni-…)` lines → the `cni-…` names.
fn parse_list_id(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split("netns name: ").nth(1))
        .map(|name| name.trim_end_matches(')').trim().to_owned())
        .filter(|name| name.starts_with("cni-"))
        .collect()
}

/// `hosts` without our lines, plus one naming the isolation node.
pub(super) fn with_entry(hosts: &str) -> String {
    let mut text = without_entry(hosts);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "{} {} {HOSTS_MARKER}\n",
        pki::ISOLATION_NODE_IP,
        pki::ISOLATION_NODE_NAME
    ));
    text
}

/// `hosts` without the lines [`with_entry`] adds.
pub(super) fn without_entry(hosts: &str) -> String {
    let mut text: String = hosts
        .lines()
        .filter(|l| !l.ends_with(HOSTS_MARKER))
        .map(|l| format!("{l}\n"))
        .collect();
    if !hosts.ends_with('\n') && text.ends_with('\n') && !hosts.is_empty() {
        text.pop();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_line_is_added_once_and_removed_without_touching_the_rest() {
        let hosts = "127.0.0.1 localhost\n127.0.0.1 vm\n";
        let added = with_entry(hosts);
        assert_eq!(
            added,
            format!("{hosts}10.244.79.2 ptah-isolation {HOSTS_MARKER}\n")
        );
        assert_eq!(with_entry(&added), added, "added twice");
        assert_eq!(without_entry(&added), hosts);
        assert_eq!(without_entry(hosts), hosts);
        assert_eq!(without_entry("a b"), "a b");
        assert_eq!(
            with_entry("a b"),
            format!("a b\n10.244.79.2 ptah-isolation {HOSTS_MARKER}\n")
        );
    }

    #[test]
    fn pod_namespaces_are_read_from_the_isolation_namespace_ids() {
        let text =
            "nsid 0  (iproute2 netns name: cni-4f1e-aa)\nnsid 1 \nnsid 2 (iproute2 netns name: other)\n";
        assert_eq!(parse_list_id(text), ["cni-4f1e-aa"]);
    }
}
