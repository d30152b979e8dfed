//! Faults on the isolation worker (`cargo xtask cluster up --nodes 2`), for the data-plane tests.
//!
//! [`IsolationNode::load`] reads the node from `cluster.json`; each fault returns a [`Fault`]
//! whose [`Fault::undo`] ends it (dropping it undoes it too, so a failed assertion does not
//! leave the node cut off for the next test):
//!
//! * [`IsolationNode::cut_api_server`]: nftables in the node's namespace drop its traffic to
//!   the API server (kubelet, kube-proxy and Pods alike) and the API server's to its kubelet
//!   (logs, exec); the Node goes `NotReady` after the controller manager's grace period, and
//!   log reads of its Pods hang.
//! * [`IsolationNode::freeze_kubelet`]: SIGSTOP to its kubelet (SIGCONT on undo); its Pods run
//!   on, unobserved.
//! * [`IsolationNode::cut_databases`] (and [`IsolationNode::cut_ports`]): nftables drop the
//!   node's traffic to the test services' PostgreSQL and MariaDB ports (and the fault proxy's
//!   in front of them).
//!
//! The rules sit in the node's own namespace, in tables named `ptah_fault_…`, so they touch
//! nothing of the host or of node 1; `cargo xtask cluster down` deletes the namespace with them.
//! Drops, not rejects: a partition is silence, and a connection in flight hangs as it would.

use std::{
    fs,
    io::Write,
    net::Ipv4Addr,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use serde_json::Value;

use crate::services::process;

/// Why a fault could not be made or undone.
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    /// No cluster state, or a cluster without the isolation worker.
    #[error("no isolation worker in {0}: run `cargo xtask cluster up --nodes 2`")]
    NoIsolationNode(PathBuf),
    /// The cluster state names the node without a field this needs.
    #[error("the isolation object of {path} lacks {field}")]
    State {
        /// The state file.
        path: PathBuf,
        /// The missing field.
        field: &'static str,
    },
    /// The node's kubelet is not running.
    #[error("the isolation worker's kubelet is not running (no live kubelet recorded in {0})")]
    KubeletNotRunning(PathBuf),
    /// A command (nft, kill) failed.
    #[error("`{command}` failed: {detail}")]
    Command {
        /// The command line.
        command: String,
        /// Its stderr, or why it could not start.
        detail: String,
    },
    /// The test services' env file could not be read (it names the database ports).
    #[error("the test services: {0}")]
    Services(#[from] ptah_testservices::Error),
    /// A test service URL has no port.
    #[error("no port in the {0} URL of the test services")]
    NoPort(&'static str),
}

/// The isolation worker, as `cluster.json` describes it.
#[derive(Clone, Debug)]
pub struct IsolationNode {
    /// The Node's name.
    pub node_name: String,
    /// Its network namespace (`/run/netns/<netns>`).
    pub netns: String,
    /// The bridge gateway where it reaches the API server and the services (the pod relay).
    pub gateway: Ipv4Addr,
    /// The API server's port at the gateway.
    pub apiserver_port: u16,
    /// Its kubelet's API port.
    pub kubelet_port: u16,
    kubelet_dir: PathBuf,
}

impl IsolationNode {
    /// Reads `cluster_dir/cluster.json` (the workspace's is `target/cluster`).
    pub fn load(cluster_dir: &Path) -> Result<Self, FaultError> {
        let path = cluster_dir.join("cluster.json");
        let state: Value = fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .ok_or_else(|| FaultError::NoIsolationNode(path.clone()))?;
        let node = state
            .get("isolation")
            .ok_or_else(|| FaultError::NoIsolationNode(path.clone()))?;
        let text = |field: &'static str| {
            node[field]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| FaultError::State {
                    path: path.clone(),
                    field,
                })
        };
        let port = |field: &'static str| {
            node[field]
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .ok_or_else(|| FaultError::State {
                    path: path.clone(),
                    field,
                })
        };
        Ok(Self {
            node_name: text("nodeName")?,
            netns: text("netns")?,
            gateway: text("gateway")?.parse().map_err(|_| FaultError::State {
                path: path.clone(),
                field: "gateway",
            })?,
            apiserver_port: port("apiserverPort")?,
            kubelet_port: port("kubeletPort")?,
            kubelet_dir: PathBuf::from(text("kubeletDir")?),
        })
    }

    /// `ip netns exec <netns> <program>`: a command run inside the node's namespace (probes).
    pub fn in_netns(&self, program: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.netns, program]);
        cmd
    }

    /// Does a TCP connection from inside the node's namespace to `addr:port` open within
    /// `timeout`?
    pub fn can_connect(&self, addr: Ipv4Addr, port: u16, timeout: Duration) -> bool {
        self.in_netns("timeout")
            .arg(format!("{}", timeout.as_secs_f64()))
            .args(["bash", "-c", &format!("exec 3<>/dev/tcp/{addr}/{port}")])
            .stdin(Stdio::null())
            .output()
            .is_ok_and(|out| out.status.success())
    }

    /// Cuts the node off from the API server, both ways (see the module documentation).
    pub fn cut_api_server(&self) -> Result<Fault, FaultError> {
        self.nft_fault(
            API_TABLE,
            &api_cut_rules(self.gateway, self.apiserver_port, self.kubelet_port),
        )
    }

    /// Freezes the node's kubelet with SIGSTOP; undo sends SIGCONT.
    pub fn freeze_kubelet(&self) -> Result<Fault, FaultError> {
        let pid = process::recorded(&self.kubelet_dir, "kubelet", &self.kubelet_dir)
            .ok_or_else(|| FaultError::KubeletNotRunning(self.kubelet_dir.clone()))?;
        signal(pid, "STOP")?;
        Ok(Fault {
            undo: Undo::Continue { pid },
            undone: false,
        })
    }

    /// Cuts the node off from the test services' PostgreSQL and MariaDB: their ports, and the
    /// fault proxy's in front of them when it runs (the pod relay serves each at the gateway
    /// under the same port, and a Service may name them).
    pub fn cut_databases(&self) -> Result<Fault, FaultError> {
        let services = ptah_testservices::TestServices::load()?;
        let port = |url: &str, name: &'static str| {
            url::Url::parse(url)
                .ok()
                .and_then(|u| u.port())
                .ok_or(FaultError::NoPort(name))
        };
        let mut ports = vec![
            port(services.postgres.url.expose(), "PostgreSQL")?,
            port(services.mysql.url.expose(), "MariaDB")?,
        ];
        if let Some(proxy) = &services.fault_proxy {
            for (address, name) in [
                (&proxy.postgres, "PostgreSQL proxy"),
                (&proxy.mysql, "MariaDB proxy"),
            ] {
                let port = address.rsplit_once(':').and_then(|(_, p)| p.parse().ok());
                ports.push(port.ok_or(FaultError::NoPort(name))?);
            }
        }
        self.cut_ports(&ports)
    }

    /// Drops the node's TCP traffic to `ports` on any address (after Service translation).
    pub fn cut_ports(&self, ports: &[u16]) -> Result<Fault, FaultError> {
        self.nft_fault(PORTS_TABLE, &port_cut_rules(PORTS_TABLE, ports))
    }

    fn nft_fault(&self, table: &'static str, rules: &str) -> Result<Fault, FaultError> {
        nft(&self.netns, rules)?;
        Ok(Fault {
            undo: Undo::DeleteTable {
                netns: self.netns.clone(),
                table,
            },
            undone: false,
        })
    }
}

/// The nftables table of the API server cut.
const API_TABLE: &str = "ptah_fault_api";
/// The nftables table of the port (database) cut.
const PORTS_TABLE: &str = "ptah_fault_ports";

/// A fault in force; [`Fault::undo`] (or drop) ends it.
#[must_use = "dropping a Fault undoes it at once"]
#[derive(Debug)]
pub struct Fault {
    undo: Undo,
    undone: bool,
}

#[derive(Debug)]
enum Undo {
    DeleteTable { netns: String, table: &'static str },
    Continue { pid: u32 },
}

impl Fault {
    /// Ends the fault: deletes its nftables table, or resumes the kubelet.
    pub fn undo(mut self) -> Result<(), FaultError> {
        self.undone = true;
        self.run_undo()
    }

    fn run_undo(&self) -> Result<(), FaultError> {
        match &self.undo {
            Undo::DeleteTable { netns, table } => nft(netns, &format!("delete table inet {table}\n")),
            Undo::Continue { pid } => signal(*pid, "CONT"),
        }
    }
}

impl Drop for Fault {
    fn drop(&mut self) {
        if !self.undone {
            // Best effort: a panicking test must not leave the node partitioned or frozen.
            if let Err(err) = self.run_undo() {
                eprintln!("cannot undo fault {:?}: {err}", self.undo);
            }
        }
    }
}

/// Runs an nft script inside `netns`.
fn nft(netns: &str, script: &str) -> Result<(), FaultError> {
    let command = format!("ip netns exec {netns} nft -f -");
    let failed = |detail: String| FaultError::Command {
        command: command.clone(),
        detail,
    };
    let mut child = Command::new("ip")
        .args(["netns", "exec", netns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(script.as_bytes())
            .map_err(|e| failed(e.to_string()))?;
    }
    let out = child.wait_with_output().map_err(|e| failed(e.to_string()))?;
    if !out.status.success() {
        return Err(failed(String::from_utf8_lossy(&out.stderr).trim().to_owned()));
    }
    Ok(())
}

fn signal(pid: u32, name: &str) -> Result<(), FaultError> {
    let out = Command::new("kill")
        .args(["-s", name, &pid.to_string()])
        .output()
        .map_err(|e| FaultError::Command {
            command: format!("kill -s {name} {pid}"),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(FaultError::Command {
            command: format!("kill -s {name} {pid}"),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(())
}

/// A table replaced whole: `add` + `delete` first makes the script idempotent.
fn table(name: &str, chains: &str) -> String {
    format!("add table inet {name}\ndelete table inet {name}\ntable inet {name} {{\n{chains}}}\n")
}

/// Drops, in the node's namespace, what it sends to the API server at the gateway (its own
/// processes: output; its Pods: forward; both after Service DNAT, whose nat hooks run earlier)
/// and what reaches its kubelet's port (the API server's log and exec requests).
fn api_cut_rules(gateway: Ipv4Addr, apiserver_port: u16, kubelet_port: u16) -> String {
    let to_api = format!("ip daddr {gateway} tcp dport {apiserver_port} drop");
    table(
        API_TABLE,
        &format!(
            "  chain output {{ type filter hook output priority -10; policy accept; {to_api}; }}\n  \
               chain forward {{ type filter hook forward priority -10; policy accept; {to_api}; }}\n  \
               chain input {{ type filter hook input priority -10; policy accept; tcp dport {kubelet_port} drop; }}\n"
        ),
    )
}

/// Drops what the node (its processes and its Pods) sends to `ports` on any address.
fn port_cut_rules(name: &str, ports: &[u16]) -> String {
    let set: Vec<String> = ports.iter().map(u16::to_string).collect();
    let drop = format!("tcp dport {{ {} }} drop", set.join(", "));
    table(
        name,
        &format!(
            "  chain output {{ type filter hook output priority -10; policy accept; {drop}; }}\n  \
               chain forward {{ type filter hook forward priority -10; policy accept; {drop}; }}\n"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_cut_drops_both_directions_and_replaces_its_table() {
        let rules = api_cut_rules(Ipv4Addr::new(10, 244, 77, 1), 56443, 56250);
        assert!(rules.starts_with(
            "add table inet ptah_fault_api\ndelete table inet ptah_fault_api\ntable inet ptah_fault_api {"
        ));
        assert_eq!(
            rules.matches("ip daddr 10.244.77.1 tcp dport 56443 drop").count(),
            2
        );
        assert!(rules.contains("hook output"));
        assert!(rules.contains("hook forward"));
        assert!(rules.contains("hook input priority -10; policy accept; tcp dport 56250 drop;"));
    }

    #[test]
    fn the_port_cut_names_every_port_in_one_set() {
        let rules = port_cut_rules("t", &[55432, 53306]);
        assert_eq!(rules.matches("tcp dport { 55432, 53306 } drop").count(), 2);
        assert!(!rules.contains("hook input"));
    }

    #[test]
    fn a_cluster_without_the_isolation_worker_says_how_to_start_it() {
        let dir = std::env::temp_dir().join(format!("ptah-faults-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("dir");
        fs::write(dir.join("cluster.json"), r#"{"tier": "full"}"#).expect("write");
        let err = IsolationNode::load(&dir).expect_err("no node").to_string();
        assert!(err.contains("--nodes 2"), "{err}");
        fs::write(
            dir.join("cluster.json"),
            r#"{"isolation": {"nodeName": "n", "netns": "ns", "gateway": "10.0.0.1",
                "apiserverPort": 1, "kubeletPort": 2, "kubeletDir": "/k"}}"#,
        )
        .expect("write");
        let node = IsolationNode::load(&dir).expect("node");
        assert_eq!(
            (node.netns.as_str(), node.apiserver_port, node.kubelet_port),
            ("ns", 1, 2)
        );
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
