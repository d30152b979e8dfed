//! `cargo xtask cluster up|down|status`: a real single-node Kubernetes on loopback.
//!
//! * `--tier api` (T3): etcd and kube-apiserver at the matrix minor, with PKI generated here,
//!   service-account signing keys, `Node,RBAC` authorization and the default admission plugins
//!   (plus NodeRestriction).
//! * `--tier full` (T4): plus kube-controller-manager, kube-scheduler and a kubelet (see
//!   [`node`]), kube-proxy for Services with the `kubernetes` Service's endpoint on the bridge
//!   gateway (see [`proxy`]), and the pod relay.
//! * `--nodes 2`: plus the isolation worker, a second kubelet with its own containerd and
//!   kube-proxy in a network namespace of its own, labelled and tainted for the `data-plane`
//!   suite (see `isolation`); [`faults`] cuts it off and freezes it. `down` removes it and fails
//!   when anything of it is left on the host.
//!
//! kube-apiserver runs with `--enable-aggregator-routing=true` in both tiers: admission webhooks
//! behind a Service are called on a Pod IP. `up` restarts a running API server alone (etcd and
//! PKI kept) when its flags changed.
//!
//! Everything lives in `target/cluster/`: `pki/`, one directory per process (log, pid, data),
//! `admin.kubeconfig` (system:masters), `user.kubeconfig` (an unprivileged person,
//! [`pki::USER_NAME`]) and `cluster.json` (what runs). Processes are started detached, recorded
//! by PID and recognised by a path of theirs in their command line, with the helpers of
//! `cargo xtask services`; `up` keeps a healthy cluster of the same version and tier, and `down`
//! stops whatever was started from this directory, zombies counting as stopped.

mod bridge;
mod control_plane;
pub mod faults;
mod foreign;
mod isolation;
pub mod kubeconfig;
mod node;
pub mod pki;
mod proc;
mod proxy;
pub mod relay;
mod runtime;

use std::{fs, path::PathBuf, time::Instant};

use anyhow::{Context, bail};
use proc::Proc;
use serde_json::{Value, json};

use crate::{
    k8s::{Binaries, Component, Matrix},
    services::process,
    step::{step, workspace_root},
};

/// The command that starts the API tier; error messages tell people to run it.
pub const UP_API_COMMAND: &str = "cargo xtask cluster up --tier api";

/// Arguments of `cargo xtask cluster`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
    #[command(flatten)]
    config: Config,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Build what is missing, start (or keep) the cluster and write the kubeconfigs.
    Up {
        /// `api`: etcd + kube-apiserver; `full`: plus controller manager, scheduler and kubelet.
        #[arg(long, value_enum, default_value_t = Tier::Full)]
        tier: Tier,
        /// `2` adds the isolation worker (full tier only); `up` never stops a running one.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        nodes: u8,
    },
    /// Stop everything `up` started and undo its host changes.
    Down,
    /// Print what runs, the kubeconfig paths and the memory of each process.
    Status,
    /// Start (or keep) the relay that lets Pods reach the test services on the bridge gateway,
    /// and write target/cluster/pod-endpoints.env; `up --tier full` does this too.
    Relay,
    /// The relay process itself, started detached by `relay`.
    #[command(hide = true)]
    RelayServe(relay::ServeArgs),
}

/// How much of Kubernetes runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Tier {
    /// etcd + kube-apiserver.
    Api,
    /// The API tier plus kube-controller-manager, kube-scheduler and a kubelet.
    Full,
}

impl Tier {
    fn name(self) -> &'static str {
        match self {
            Tier::Api => "api",
            Tier::Full => "full",
        }
    }
}

/// Ports and the Kubernetes minor.
#[derive(clap::Args)]
struct Config {
    /// The Kubernetes minor (`1.36`) from matrix/kubernetes.json; default: its default minor.
    #[arg(long, env = "PTAH_CLUSTER_KUBERNETES", global = true)]
    kubernetes: Option<String>,
    /// kube-apiserver's secure port on 127.0.0.1.
    #[arg(
        long,
        env = "PTAH_CLUSTER_APISERVER_PORT",
        default_value_t = 56443,
        global = true
    )]
    apiserver_port: u16,
    /// etcd's client port on 127.0.0.1 (the peer port is the next one).
    #[arg(long, env = "PTAH_CLUSTER_ETCD_PORT", default_value_t = 52379, global = true)]
    etcd_port: u16,
}

/// Runs `cargo xtask cluster`.
pub fn run(args: Args) -> anyhow::Result<()> {
    // The relay process needs nothing of the cluster's configuration.
    if let Action::RelayServe(serve) = args.action {
        return relay::serve(serve);
    }
    let cluster = Cluster::new(&args.config)?;
    match args.action {
        Action::Up { tier, nodes } => cluster.up(tier, nodes),
        Action::Down => cluster.down(),
        Action::Status => cluster.status(),
        Action::Relay => cluster.relay(),
        Action::RelayServe(_) => Ok(()),
    }
}

struct Cluster {
    root: PathBuf,
    matrix: Matrix,
    bins: Binaries,
    apiserver_port: u16,
    etcd_port: u16,
}

impl Cluster {
    fn new(config: &Config) -> anyhow::Result<Self> {
        let workspace = workspace_root();
        let matrix = Matrix::load(&workspace)?;
        let minor = matrix.select(config.kubernetes.as_deref())?.clone();
        let bins = Binaries::new(&minor, &matrix)?;
        Ok(Self {
            root: workspace.join("target").join("cluster"),
            matrix,
            bins,
            apiserver_port: config.apiserver_port,
            etcd_port: config.etcd_port,
        })
    }

    fn pki(&self) -> PathBuf {
        self.root.join("pki")
    }

    fn server(&self) -> String {
        format!("https://127.0.0.1:{}", self.apiserver_port)
    }

    fn state_file(&self) -> PathBuf {
        self.root.join("cluster.json")
    }

    fn read_state(&self) -> Option<Value> {
        serde_json::from_str(&fs::read_to_string(self.state_file()).ok()?).ok()
    }

    /// Serialises concurrent `up`/`down` runs.
    fn lock(&self) -> anyhow::Result<fs::File> {
        let path = self.root.parent().unwrap_or(&self.root).join("cluster.lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        file.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(file)
    }

    fn up(&self, tier: Tier, nodes: u8) -> anyhow::Result<()> {
        if nodes > 1 && tier != Tier::Full {
            bail!("--nodes 2 needs the full tier");
        }
        if let Some(other) = foreign::kubelet_elsewhere(&self.root).filter(|_| tier == Tier::Full) {
            bail!(
                "a kubelet of another cluster runs ({}): the full tier shares the host's network \
                 with it; bring that cluster down first (the API tier on other ports can run beside it)",
                other.display()
            );
        }
        let started = Instant::now();
        fs::create_dir_all(self.root.parent().unwrap_or(&self.root)).context("cannot create target/")?;
        let _lock = self.lock()?;
        let version = self.bins.kubernetes_version().to_owned();
        let mut ports = vec![self.apiserver_port, self.etcd_port, self.etcd_port + 1];
        ports.extend(node::PORTS);
        ports.extend(proxy::PORTS);
        crate::services::ports::reserve(&ports);

        let mut needed = vec![Component::KubeApiserver, Component::Etcd];
        if tier == Tier::Full {
            needed.extend([
                Component::KubeControllerManager,
                Component::KubeScheduler,
                Component::Kubelet,
                Component::KubeProxy,
            ]);
        }
        step(&format!("binaries for Kubernetes {version}"), || {
            self.bins.ensure(&needed)
        })?;

        let state = self.read_state();
        // A PKI written before the isolation worker existed has no certificates for it.
        let pki_fits = nodes < 2
            || self
                .pki()
                .join(format!("{}.crt", pki::ISOLATION_KUBELET))
                .is_file();
        let same_version = pki_fits
            && state.as_ref().is_some_and(|s| {
                s["version"] == version.as_str() && s["apiserverPort"] == self.apiserver_port
            });
        let api_running = self.etcd().running(&self.root).is_some()
            && self.apiserver().running(&self.root).is_some()
            && self.etcd_healthy()
            && self.apiserver_ready();
        let apiserver = self.apiserver();
        let current_flags = apiserver
            .running(&self.root)
            .is_some_and(|pid| apiserver.runs_these_args(pid));
        if same_version && api_running && current_flags {
            eprintln!("    API tier of {version} running and ready: kept");
        } else if same_version && api_running {
            // Only the flags changed: keep etcd's data and the PKI, so that the objects and
            // credentials of whoever uses the cluster survive.
            step("kube-apiserver with changed flags: restart it alone", || {
                apiserver.stop()?;
                process::ensure_port_free(self.apiserver_port, "kube-apiserver")?;
                apiserver.start(&self.root, || self.apiserver_ready()).map(|_| ())
            })?;
        } else {
            step("stop what runs from target/cluster", || self.stop_all())?;
            step("fresh target/cluster with PKI and kubeconfigs", || self.prepare())?;
            let api_started = Instant::now();
            let etcd = self.etcd();
            step(
                &format!(
                    "etcd {} on 127.0.0.1:{}",
                    self.bins_etcd_version(),
                    self.etcd_port
                ),
                || {
                    process::ensure_port_free(self.etcd_port, "etcd")?;
                    process::ensure_port_free(self.etcd_port + 1, "etcd (peer)")?;
                    etcd.start(&self.root, || self.etcd_healthy()).map(|_| ())
                },
            )?;
            step(
                &format!("kube-apiserver {version} on 127.0.0.1:{}", self.apiserver_port),
                || {
                    process::ensure_port_free(self.apiserver_port, "kube-apiserver")?;
                    apiserver.start(&self.root, || self.apiserver_ready()).map(|_| ())
                },
            )?;
            eprintln!(
                "    API tier ready {:.1}s after etcd started",
                api_started.elapsed().as_secs_f64()
            );
            self.write_state(Tier::Api)?;
        }
        if tier == Tier::Full {
            let full_started = Instant::now();
            node::up(self)?;
            proxy::up(self, node::POD_SUBNET)?;
            eprintln!(
                "    full tier ready {:.1}s after its first component started",
                full_started.elapsed().as_secs_f64()
            );
            self.write_state(Tier::Full)?;
            step("pod relay (API server and test services)", || {
                relay::up(&self.root, self.apiserver_port)
            })?;
            if nodes > 1 {
                isolation::up(self)?;
                self.write_state(Tier::Full)?;
            }
        }
        eprintln!(
            "cluster up ({} tier, Kubernetes {version}) in {:.1}s; kubectl --kubeconfig {}",
            tier.name(),
            started.elapsed().as_secs_f64(),
            self.root.join("admin.kubeconfig").display()
        );
        self.print_memory();
        Ok(())
    }

    fn bins_etcd_version(&self) -> String {
        self.matrix
            .select(Some(self.bins.kubernetes_version()))
            .map(|m| m.etcd.clone())
            .unwrap_or_default()
    }

    /// Wipes `target/cluster/` and writes the PKI and both kubeconfigs.
    fn prepare(&self) -> anyhow::Result<()> {
        if self.root.exists() {
            fs::remove_dir_all(&self.root).with_context(|| format!("cannot wipe {}", self.root.display()))?;
        }
        fs::create_dir_all(&self.root).with_context(|| format!("cannot create {}", self.root.display()))?;
        pki::write_all(&self.pki())?;
        let server = self.server();
        kubeconfig::write(
            &self.root.join("admin.kubeconfig"),
            &server,
            "ptah-admin",
            &self.pki(),
            pki::ADMIN,
        )?;
        kubeconfig::write(
            &self.root.join("user.kubeconfig"),
            &server,
            pki::USER_NAME,
            &self.pki(),
            pki::USER,
        )?;
        Ok(())
    }

    fn write_state(&self, tier: Tier) -> anyhow::Result<()> {
        let state = json!({
            "tier": tier.name(),
            "version": self.bins.kubernetes_version(),
            "server": self.server(),
            "apiserverPort": self.apiserver_port,
            "etcdPort": self.etcd_port,
            "adminKubeconfig": self.root.join("admin.kubeconfig"),
            "userKubeconfig": self.root.join("user.kubeconfig"),
            "userName": pki::USER_NAME,
            "nodeName": pki::NODE_NAME,
        });
        let mut state = state;
        if tier == Tier::Full && isolation::running(self) {
            state["isolation"] = isolation::state(self);
        }
        let text = serde_json::to_string_pretty(&state)?;
        fs::write(self.state_file(), text + "\n").context("cannot write cluster.json")
    }

    /// Every process of every tier, in start order.
    fn all_procs(&self) -> Vec<Proc> {
        let mut procs = vec![self.etcd(), self.apiserver()];
        procs.extend(node::procs(self));
        procs.push(proxy::proc(self));
        procs.extend(isolation::procs(self));
        procs
    }

    fn stop_all(&self) -> anyhow::Result<()> {
        relay::stop(&self.root)?;
        isolation::thaw(self);
        for proc in self.all_procs().iter().rev() {
            proc.stop()?;
        }
        if let Some(other) = foreign::kubelet_elsewhere(&self.root) {
            eprintln!(
                "    the host's network left alone: a kubelet of {} runs (bring that cluster down first)",
                other.display()
            );
            return Ok(());
        }
        isolation::clean_host(self)?;
        node::clean_host(self)?;
        proxy::clean_host(self)
    }

    fn down(&self) -> anyhow::Result<()> {
        let started = Instant::now();
        fs::create_dir_all(self.root.parent().unwrap_or(&self.root)).context("cannot create target/")?;
        let _lock = self.lock()?;
        step("stop the cluster", || self.stop_all())?;
        step("nothing of the isolation worker is left on the host", || {
            let left = isolation::inventory::check(self);
            if left.is_empty() {
                return Ok(());
            }
            bail!(
                "`down` left {} thing(s) of the isolation worker behind:\n  {}",
                left.len(),
                left.join("\n  ")
            )
        })?;
        match fs::remove_file(self.state_file()) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(err).context("cannot remove cluster.json");
            }
            _ => {}
        }
        eprintln!("cluster down in {:.2}s", started.elapsed().as_secs_f64());
        Ok(())
    }

    fn relay(&self) -> anyhow::Result<()> {
        fs::create_dir_all(&self.root).context("cannot create target/cluster")?;
        let _lock = self.lock()?;
        step("pod relay (API server and test services)", || {
            relay::up(&self.root, self.apiserver_port)
        })
    }

    fn status(&self) -> anyhow::Result<()> {
        let Some(state) = self.read_state() else {
            bail!(
                "no cluster: {} does not exist; run `{UP_API_COMMAND}`",
                self.state_file().display()
            );
        };
        println!("{}", serde_json::to_string_pretty(&state)?);
        self.print_memory();
        Ok(())
    }

    /// RSS of each running process, and their sum.
    fn print_memory(&self) {
        let mut total = 0;
        for proc in self.all_procs() {
            if let Some(pid) = proc.running(&self.root) {
                let rss = rss_kib(pid).unwrap_or(0);
                total += rss;
                eprintln!(
                    "    {:<24} pid {pid:<8} RSS {:>7.1} MiB",
                    proc.name,
                    rss as f64 / 1024.0
                );
            }
        }
        eprintln!(
            "    {:<24} {:<12} RSS {:>7.1} MiB",
            "total",
            "",
            total as f64 / 1024.0
        );
    }
}

/// `VmRSS` of a process in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_resident_set() {
        let rss = rss_kib(std::process::id()).expect("rss");
        assert!(rss > 100, "{rss} KiB");
        assert_eq!(rss_kib(u32::MAX), None);
    }

    #[test]
    fn every_process_is_recognised_by_a_path_under_target_cluster() {
        let cluster = Cluster::new(&Config {
            kubernetes: None,
            apiserver_port: 1,
            etcd_port: 3,
        })
        .expect("cluster");
        for proc in cluster.all_procs() {
            assert!(proc.marker.starts_with(&cluster.root), "{}", proc.name);
            let marker = proc.marker.display().to_string();
            assert!(
                proc.args.iter().any(|a| a.ends_with(&format!("={marker}"))),
                "{}: no --opt={marker} in {:?}",
                proc.name,
                proc.args
            );
        }
        let apiserver = cluster.apiserver();
        assert!(
            apiserver
                .args
                .contains(&"--authorization-mode=Node,RBAC".to_owned())
        );
        assert!(
            apiserver
                .args
                .contains(&"--etcd-servers=http://127.0.0.1:3".to_owned())
        );
        for flag in [
            "--enable-aggregator-routing=true",
            "--service-cluster-ip-range=10.96.0.0/16",
        ] {
            assert!(apiserver.args.contains(&flag.to_owned()), "{flag}");
        }
        assert!(cluster.all_procs().iter().any(|p| p.name == "kube-proxy"));
    }
}
