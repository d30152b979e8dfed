//! `cargo xtask services up|down|env`: real PostgreSQL, MariaDB and OCI registries for tests.
//!
//! The servers run as ordinary background processes listening on 127.0.0.1 only, on
//! non-default ports. Their state (data, pid files, certificates, logs, passwords) lives in a
//! directory outside the clone, so that a CI clone in any folder works and a fresh clone finds
//! nothing stale; the workspace only receives `target/services.env`. Toxiproxy runs in front of
//! them all (see [`toxiproxy`]).

pub mod apt;
pub mod envfile;
mod mariadb;
pub mod ports;
mod postgres;
pub mod process;
mod registry;
pub mod secret;
pub mod tls;
mod toxiproxy;

use std::{
    fs,
    os::unix::fs::{DirBuilderExt, PermissionsExt},
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::step::{step, workspace_root};

/// The command that starts everything; error messages tell people to run it.
pub const UP_COMMAND: &str = "cargo xtask services up";

/// The file in a service dir recording the port it was started with.
const PORT_FILE: &str = "port";

/// Arguments of `cargo xtask services`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
    #[command(flatten)]
    config: Config,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Install what is missing, start (or keep) every service and write target/services.env.
    Up,
    /// Stop the services `up` started and remove target/services.env.
    Down,
    /// Print target/services.env: `eval "$(cargo xtask services env)"`.
    Env,
}

/// Where state lives and which loopback ports the services use.
#[derive(clap::Args)]
struct Config {
    /// State directory (data, pid files, certificates, logs, passwords), outside the clone.
    /// Default: /var/tmp/ptah-services/<hash of the workspace path>.
    #[arg(long, env = "PTAH_SERVICES_DIR", global = true)]
    dir: Option<PathBuf>,
    /// PostgreSQL port on 127.0.0.1.
    #[arg(long, env = "PTAH_SERVICES_PG_PORT", default_value_t = 55432, global = true)]
    pg_port: u16,
    /// MariaDB port on 127.0.0.1.
    #[arg(
        long,
        env = "PTAH_SERVICES_MYSQL_PORT",
        default_value_t = 53306,
        global = true
    )]
    mysql_port: u16,
    /// TLS + basic-auth registry port on 127.0.0.1.
    #[arg(
        long,
        env = "PTAH_SERVICES_REGISTRY_PORT",
        default_value_t = 55443,
        global = true
    )]
    registry_port: u16,
    /// Plain-HTTP registry (no auth) port on 127.0.0.1.
    #[arg(
        long,
        env = "PTAH_SERVICES_REGISTRY_PLAIN_PORT",
        default_value_t = 55000,
        global = true
    )]
    registry_plain_port: u16,
    /// Toxiproxy's API port on 127.0.0.1; its proxies (PostgreSQL, MariaDB, TLS registry, plain
    /// registry) take the next four ports.
    #[arg(
        long,
        env = "PTAH_SERVICES_TOXIPROXY_PORT",
        default_value_t = 58474,
        global = true
    )]
    toxiproxy_port: u16,
}

/// Runs `cargo xtask services`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let services = Services::new(&args.config)?;
    match args.action {
        Action::Up => services.up(),
        Action::Down => services.down(),
        Action::Env => services.print_env(),
    }
}

/// One managed server process.
trait Service {
    /// Directory name under the state dir, and the label in the output.
    fn name(&self) -> &'static str;
    /// The service's own directory (wiped before a fresh start).
    fn dir(&self) -> &Path;
    /// The loopback port it listens on.
    fn port(&self) -> u16;
    /// Every loopback port it listens on (reserved, and checked free before a start).
    fn ports(&self) -> Vec<u16> {
        vec![self.port()]
    }
    /// The program expected in /proc/PID/cmdline of the recorded PID.
    fn program(&self) -> &'static str;
    /// A path that must appear in the recorded process's command line (its data dir or config).
    fn cmdline_marker(&self) -> PathBuf;
    /// The signal that stops it cleanly.
    fn stop_signal(&self) -> &'static str {
        "TERM"
    }
    /// Creates the service from an empty directory, starts it, records its PID, and returns
    /// once it is ready.
    fn start(&self) -> anyhow::Result<()>;
    /// The health probe: does it answer, with the recorded credentials, as expected?
    fn healthy(&self) -> bool;
    /// The `export` lines it contributes to the env file.
    fn env(&self) -> anyhow::Result<Vec<(&'static str, String)>>;
}

struct Services {
    state_dir: PathBuf,
    env_file: PathBuf,
    all: Vec<Box<dyn Service>>,
}

impl Services {
    fn new(config: &Config) -> anyhow::Result<Self> {
        let root = workspace_root();
        let state_dir = match &config.dir {
            Some(dir) => absolute(dir)?,
            None => default_state_dir(&root),
        };
        let all: Vec<Box<dyn Service>> = vec![
            Box::new(postgres::Postgres::new(&state_dir, config.pg_port)),
            Box::new(mariadb::MariaDb::new(&state_dir, config.mysql_port)),
            Box::new(registry::Registry::tls(&state_dir, config.registry_port)),
            Box::new(registry::Registry::plain(&state_dir, config.registry_plain_port)),
            // Last: it fronts the others.
            Box::new(toxiproxy::Toxiproxy::new(
                &state_dir,
                config.toxiproxy_port,
                [
                    config.pg_port,
                    config.mysql_port,
                    config.registry_port,
                    config.registry_plain_port,
                ],
            )),
        ];
        Ok(Self {
            state_dir,
            env_file: root.join("target").join("services.env"),
            all,
        })
    }

    fn up(&self) -> anyhow::Result<()> {
        let started = Instant::now();
        if !process::is_root() {
            bail!("`{UP_COMMAND}` must run as root (it uses apt-get and runuser)");
        }
        step("packages", apt::ensure_installed)?;
        step(&format!("state dir {}", self.state_dir.display()), || {
            self.prepare_state_dir()
        })?;
        let _lock = self.lock()?;
        ports::reserve(&self.all.iter().flat_map(|s| s.ports()).collect::<Vec<_>>());
        for service in &self.all {
            let label = format!("{} on 127.0.0.1:{}", service.name(), service.port());
            step(&label, || ensure(service.as_ref()))?;
        }
        step(&format!("write {}", self.env_file.display()), || self.write_env())?;
        eprintln!(
            "services up in {:.2}s; load them with: eval \"$(cargo xtask services env)\"",
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    fn down(&self) -> anyhow::Result<()> {
        let started = Instant::now();
        let _lock = if self.state_dir.is_dir() {
            Some(self.lock()?)
        } else {
            None
        };
        for service in self.all.iter().rev() {
            step(&format!("stop {}", service.name()), || stop(service.as_ref()))?;
        }
        match fs::remove_file(&self.env_file) {
            Ok(()) => eprintln!("removed {}", self.env_file.display()),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(err).with_context(|| format!("cannot remove {}", self.env_file.display()));
            }
        }
        eprintln!("services down in {:.2}s", started.elapsed().as_secs_f64());
        Ok(())
    }

    fn print_env(&self) -> anyhow::Result<()> {
        let text = match fs::read_to_string(&self.env_file) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => bail!(
                "the test services are not up ({} does not exist): run `{UP_COMMAND}`",
                self.env_file.display()
            ),
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", self.env_file.display()));
            }
        };
        let stopped: Vec<&str> = self
            .all
            .iter()
            .filter(|s| process::recorded(s.dir(), s.program(), &s.cmdline_marker()).is_none())
            .map(|s| s.name())
            .collect();
        if !stopped.is_empty() {
            bail!(
                "the test services are not running ({} stopped): run `{UP_COMMAND}`",
                stopped.join(", ")
            );
        }
        print!("{text}");
        Ok(())
    }

    /// Creates the state dir so that the `postgres` user can traverse it (mode 0755).
    fn prepare_state_dir(&self) -> anyhow::Result<()> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o755)
            .create(&self.state_dir)
            .with_context(|| format!("cannot create {}", self.state_dir.display()))?;
        fs::set_permissions(&self.state_dir, fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot chmod {}", self.state_dir.display()))?;
        Ok(())
    }

    /// Serialises concurrent `up`/`down` runs on the same state dir.
    fn lock(&self) -> anyhow::Result<fs::File> {
        let path = self.state_dir.join("lock");
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

    fn write_env(&self) -> anyhow::Result<()> {
        let mut vars = vec![("PTAH_SERVICES_DIR", self.state_dir.to_string_lossy().into_owned())];
        for service in &self.all {
            vars.extend(service.env()?);
        }
        envfile::write(&self.env_file, &vars)
    }
}

/// Keeps a healthy running service; otherwise stops whatever of it runs, wipes its dir and
/// starts it fresh.
fn ensure(service: &dyn Service) -> anyhow::Result<()> {
    let dir = service.dir();
    let marker = service.cmdline_marker();
    if let Some(pid) = process::recorded(dir, service.program(), &marker) {
        if service.healthy() {
            eprintln!("    running (pid {pid}) and healthy: kept");
            return Ok(());
        }
        if recorded_port(dir) != Some(service.port()) {
            // A new port: make sure it is usable before stopping the running instance.
            ensure_ports_free(service)?;
        }
        eprintln!("    running (pid {pid}) but unhealthy: restarting from scratch");
    }
    for pid in process::find(service.program(), &marker) {
        eprintln!("    stopping pid {pid} (started from {})", dir.display());
        process::stop(pid, service.stop_signal())?;
    }
    ensure_ports_free(service)?;
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("cannot wipe {}", dir.display()))?;
    }
    fs::DirBuilder::new()
        .mode(0o755)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    fs::write(dir.join(PORT_FILE), format!("{}\n", service.port()))
        .with_context(|| format!("cannot write the port file in {}", dir.display()))?;
    service.start()?;
    if !service.healthy() {
        bail!(
            "{} started but fails its health probe; see the logs in {}",
            service.name(),
            dir.display()
        );
    }
    Ok(())
}

/// Fails, naming the port, when anything listens on one of the service's ports.
fn ensure_ports_free(service: &dyn Service) -> anyhow::Result<()> {
    for port in service.ports() {
        process::ensure_port_free(port, service.name())?;
    }
    Ok(())
}

/// The port a service dir was started with.
fn recorded_port(dir: &Path) -> Option<u16> {
    fs::read_to_string(dir.join(PORT_FILE)).ok()?.trim().parse().ok()
}

/// Stops a service: its recorded PID, and any orphan started from its dir whose PID file was
/// lost. A no-op when none runs.
fn stop(service: &dyn Service) -> anyhow::Result<()> {
    let pids = process::find(service.program(), &service.cmdline_marker());
    if pids.is_empty() {
        eprintln!("    not running");
    }
    for pid in pids {
        process::stop(pid, service.stop_signal())?;
        eprintln!("    stopped pid {pid}");
    }
    process::forget(service.dir())
}

/// `/var/tmp/ptah-services/<12 hex digits of sha256(workspace path)>`.
fn default_state_dir(workspace: &Path) -> PathBuf {
    let digest = Sha256::digest(workspace.as_os_str().as_encoded_bytes());
    let short = hex::encode(digest);
    PathBuf::from("/var/tmp/ptah-services").join(&short[..12])
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))
}

/// A database server these services run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// PostgreSQL (Debian's postgresql-15).
    Postgres,
    /// MariaDB, standing in for MySQL (Debian's mariadb-server).
    Mariadb,
}

/// The version the server program reports (`postgres (PostgreSQL) 15.14`).
pub fn server_version(engine: Engine) -> anyhow::Result<String> {
    let program = match engine {
        Engine::Postgres => format!("{}/postgres", postgres::BIN),
        Engine::Mariadb => mariadb::MARIADBD.to_owned(),
    };
    let text = crate::step::output(std::process::Command::new(&program).arg("--version"))?;
    Ok(text.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_state_dir_depends_on_the_workspace_path() {
        let a = default_state_dir(Path::new("/root/clone-a"));
        let b = default_state_dir(Path::new("/root/clone-b"));
        assert_ne!(a, b);
        assert!(a.starts_with("/var/tmp/ptah-services"));
        let leaf = a.file_name().map(|n| n.to_string_lossy().into_owned());
        assert_eq!(leaf.map(|l| l.len()), Some(12));
        assert_eq!(a, default_state_dir(Path::new("/root/clone-a")));
    }
}
