//! The fixed loopback ports of the services and the cluster lie inside the kernel's ephemeral
//! range (32768–60999 by default), so any outgoing connection of the machine may be handed one of
//! them as its local port. A kubelet once failed to start because a test's database connection
//! held 127.0.0.1:56250. Reserving the ports (`ip_local_reserved_ports`) keeps the kernel from
//! handing them out while they can still be bound explicitly.

use std::fs;

const SYSCTL: &str = "/proc/sys/net/ipv4/ip_local_reserved_ports";

/// Adds `ports` to the kernel's reserved ports. Best effort: where the sysctl cannot be written
/// (not root, a read-only /proc), it says so and carries on.
pub fn reserve(ports: &[u16]) {
    let current = fs::read_to_string(SYSCTL).unwrap_or_default();
    let Some(merged) = merged(&current, ports) else {
        return;
    };
    if let Err(err) = fs::write(SYSCTL, &merged) {
        eprintln!(
            "    note: cannot reserve ports {ports:?} in {SYSCTL} ({err}); an outgoing connection may take one"
        );
    }
}

/// The reserved list with `ports` added, or `None` when every port is already in it.
fn merged(current: &str, ports: &[u16]) -> Option<String> {
    let ranges: Vec<(u16, u16)> = current
        .trim()
        .split(',')
        .filter_map(|part| {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
        })
        .collect();
    let missing: Vec<String> = ports
        .iter()
        .filter(|p| !ranges.iter().any(|(a, b)| (a..=b).contains(p)))
        .map(u16::to_string)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = current
        .trim()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    parts.extend(missing);
    Some(parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ports_not_yet_reserved_are_added() {
        assert_eq!(merged("", &[56250, 55432]).as_deref(), Some("56250,55432"));
        assert_eq!(
            merged("56248-56259\n", &[56250, 56443]).as_deref(),
            Some("56248-56259,56443")
        );
        assert_eq!(merged("56248-56259,56443", &[56250, 56443]), None);
    }
}
