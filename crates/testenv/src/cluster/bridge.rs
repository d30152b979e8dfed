//! A pod bridge with a MAC address of its own.
//!
//! A Linux bridge whose address was never set takes the lowest MAC among its ports, so every Pod
//! whose veth joins or leaves may change it. A running Pod keeps the gateway's old MAC in its
//! neighbour cache, and its frames go to a port instead of the host until the entry is probed
//! again: a connection to the gateway (the API server, the databases and registries through the
//! pod relay) gets no answer for tens of seconds. Setting the address pins it (the kernel stops
//! following the ports), so the bridge is made before the CNI plugin first needs it, which then
//! uses it as it is.

use std::process::Command;

use crate::step::run;

/// Node 1's bridge (`ptahcni0`) MAC: locally administered, unicast.
pub(super) const HOST_MAC: &str = "02:70:74:61:68:01";
/// The isolation worker's bridge (`ptahcni1`) MAC.
pub(super) const ISOLATION_MAC: &str = "02:70:74:61:68:02";

/// Creates the bridge `name` if it is missing, in `netns` or the host's namespace, pins its MAC
/// to `mac` and brings it up.
pub(super) fn pin(netns: Option<&str>, name: &str, mac: &str) -> anyhow::Result<()> {
    let ip = || {
        let mut cmd = Command::new("ip");
        if let Some(ns) = netns {
            cmd.args(["-n", ns]);
        }
        cmd
    };
    let exists = ip()
        .args(["link", "show", "dev", name])
        .output()
        .is_ok_and(|o| o.status.success());
    if !exists {
        run(ip().args(["link", "add", name, "type", "bridge"]))?;
    }
    run(ip().args(["link", "set", "dev", name, "address", mac]))?;
    run(ip().args(["link", "set", "dev", name, "up"]))
}
