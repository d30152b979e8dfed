//! The pod relay: lets Pods of the full tier reach the API server and the test services, which
//! listen on 127.0.0.1.
//!
//! Pods live on the CNI bridge `ptahcni0` (10.244.77.0/24) whose gateway, 10.244.77.1, is this
//! host. The relay listens on the gateway address on the same ports as the services and copies
//! every connection to 127.0.0.1:<port>, so a Pod reaches PostgreSQL at `10.244.77.1:<pg port>`,
//! the API server at `10.244.77.1:<apiserver port>` (the `kubernetes` Service's endpoint)
//! and the TLS registry at `10.244.77.1:<registry port>` (its certificate has that IP as a SAN).
//!
//! `cargo xtask cluster up` (full tier) and `cargo xtask cluster relay` start it detached from
//! a copy of this executable under `target/cluster/pod-relay/` (a rebuild of ptah-testenv never pulls
//! the binary from under it); `cargo xtask cluster down` stops it. The bridge only exists once the
//! first Pod started, so the listeners bind with `IP_FREEBIND`, which lets them bind the gateway
//! address before it is assigned.
//!
//! `target/cluster/pod-endpoints.env` (mode 0600) says where Pods find the services:
//! `export PTAH_POD_GATEWAY='10.244.77.1'`, `PTAH_POD_PG_URL`, `PTAH_POD_PG_ADMIN_URL`,
//! `PTAH_POD_MARIADB_URL`, `PTAH_POD_MARIADB_ADMIN_URL` (the services' URLs with the gateway as
//! host), `PTAH_POD_REGISTRY` (`10.244.77.1:<tls port>`, verified with `PTAH_TEST_REGISTRY_CA`),
//! `PTAH_POD_PLAIN_REGISTRY`; with the fault proxy up, the same through Toxiproxy:
//! `PTAH_POD_PG_PROXY_URL`, `PTAH_POD_MARIADB_PROXY_URL`, `PTAH_POD_REGISTRY_PROXY`,
//! `PTAH_POD_PLAIN_REGISTRY_PROXY`.

use std::{
    fs,
    net::{IpAddr, Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::{Context, bail};
use ptah_testservices::TestServices;
use tokio::net::{TcpListener, TcpStream};

use crate::services::{envfile, process};

/// The bridge gateway, the host's address on the pod network (`POD_SUBNET` in cluster/node.rs).
pub const GATEWAY: Ipv4Addr = Ipv4Addr::new(10, 244, 77, 1);
/// The endpoints file under `target/cluster/`.
pub const ENDPOINTS_FILE: &str = "pod-endpoints.env";
/// The relay's directory under `target/cluster/` (pid, log, ports, its executable).
const DIR: &str = "pod-relay";
/// The name of the relay's copy of this executable, which recognises its process.
const PROGRAM: &str = "ptah-pod-relay";
/// Written by the relay once every listener is bound.
const READY_FILE: &str = "ready";
/// The ports the running relay forwards, one per line.
const PORTS_FILE: &str = "ports";

/// Arguments of the relay process itself (`cargo xtask cluster relay-serve`, hidden).
#[derive(clap::Args)]
pub struct ServeArgs {
    /// The relay's directory (its marker in the command line).
    #[arg(long)]
    dir: PathBuf,
    /// The address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(GATEWAY))]
    listen: IpAddr,
    /// A port to forward from the listen address to 127.0.0.1 (repeatable).
    #[arg(long = "port", required = true)]
    ports: Vec<u16>,
}

fn dir(cluster_root: &Path) -> PathBuf {
    cluster_root.join(DIR)
}

/// The PIDs of relays started from `cluster_root`.
pub fn running(cluster_root: &Path) -> Vec<u32> {
    process::find(PROGRAM, &dir(cluster_root))
}

/// Starts the relay (or keeps one forwarding the same ports) for the API server's port (the
/// endpoint of the `kubernetes` Service, see cluster/proxy.rs) and the test services' ports, and
/// writes the endpoints file. Without test services it relays the API server alone and removes a
/// stale endpoints file.
pub fn up(cluster_root: &Path, apiserver_port: u16) -> anyhow::Result<()> {
    let endpoints_file = cluster_root.join(ENDPOINTS_FILE);
    let services = TestServices::load();
    let mut ports = vec![apiserver_port];
    match &services {
        Ok(services) => ports.extend(service_ports(services)?),
        Err(err) => eprintln!("    services not up: the relay forwards the API server only ({err})"),
    }
    let dir = dir(cluster_root);
    let wanted = render_ports(&ports);
    let pids = running(cluster_root);
    if !pids.is_empty() && fs::read_to_string(dir.join(PORTS_FILE)).ok().as_deref() == Some(&wanted) {
        eprintln!("    pod relay running (pid {}) on {GATEWAY}: kept", pids[0]);
    } else {
        stop(cluster_root)?;
        start(&dir, &ports)?;
        fs::write(dir.join(PORTS_FILE), &wanted).context("cannot record the relay's ports")?;
    }
    match services {
        Ok(services) => write_env(&endpoints_file, &endpoints(&services)?),
        Err(_) => match fs::remove_file(&endpoints_file) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                Err(err).with_context(|| format!("cannot remove {}", endpoints_file.display()))
            }
            _ => Ok(()),
        },
    }
}

fn start(dir: &Path, ports: &[u16]) -> anyhow::Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("cannot wipe {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let exe = dir.join(PROGRAM);
    let me = std::env::current_exe().context("cannot find this executable")?;
    fs::copy(&me, &exe).with_context(|| format!("cannot copy {} to {}", me.display(), exe.display()))?;
    let mut cmd = std::process::Command::new(&exe);
    cmd.args(["cluster", "relay-serve"])
        .arg(format!("--dir={}", dir.display()));
    for port in ports {
        cmd.arg(format!("--port={port}"));
    }
    let log = dir.join("log");
    let pid = process::spawn_detached(&cmd, &log, dir)?;
    let ready = dir.join(READY_FILE);
    process::wait_ready("pod relay", pid, Duration::from_secs(10), &log, || ready.exists())?;
    eprintln!("    pod relay (pid {pid}) on {GATEWAY} ports {ports:?} -> 127.0.0.1");
    Ok(())
}

/// Stops every relay started from `cluster_root`.
pub fn stop(cluster_root: &Path) -> anyhow::Result<()> {
    for pid in running(cluster_root) {
        process::stop(pid, "TERM")?;
        eprintln!("    pod-relay: stopped pid {pid}");
    }
    process::forget(&dir(cluster_root))
}

/// The loopback ports of the services: PostgreSQL, MariaDB, the TLS and the plain registry.
fn service_ports(services: &TestServices) -> anyhow::Result<Vec<u16>> {
    let url_port = |url: &str| -> anyhow::Result<u16> {
        url::Url::parse(url)?
            .port()
            .with_context(|| format!("no port in a service URL of {}", services_env()))
    };
    let host_port = |host: &str| -> anyhow::Result<u16> {
        host.rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .with_context(|| format!("no port in registry {host:?}"))
    };
    let mut ports = vec![
        url_port(services.postgres.url.expose())?,
        url_port(services.mysql.url.expose())?,
        host_port(&services.registry.host)?,
        host_port(&services.plain_registry)?,
    ];
    // Toxiproxy's proxies listen on loopback like the services: Pods reach them the same way.
    if let Some(proxy) = &services.fault_proxy {
        for address in [
            &proxy.postgres,
            &proxy.mysql,
            &proxy.registry,
            &proxy.plain_registry,
        ] {
            ports.push(host_port(address)?);
        }
    }
    Ok(ports)
}

fn services_env() -> &'static str {
    ptah_testservices::ENV_FILE
}

/// The endpoints file's variables: each service as a Pod reaches it.
fn endpoints(services: &TestServices) -> anyhow::Result<Vec<(&'static str, String)>> {
    let on_gateway = |url: &str| -> anyhow::Result<String> {
        let mut url = url::Url::parse(url)?;
        url.set_host(Some(&GATEWAY.to_string()))?;
        Ok(url.to_string())
    };
    let host_on_gateway = |host: &str| match host.rsplit_once(':') {
        Some((_, port)) => format!("{GATEWAY}:{port}"),
        None => GATEWAY.to_string(),
    };
    let mut vars = vec![
        ("PTAH_POD_GATEWAY", GATEWAY.to_string()),
        ("PTAH_POD_PG_URL", on_gateway(services.postgres.url.expose())?),
        (
            "PTAH_POD_PG_ADMIN_URL",
            on_gateway(services.postgres.admin_url.expose())?,
        ),
        ("PTAH_POD_MARIADB_URL", on_gateway(services.mysql.url.expose())?),
        (
            "PTAH_POD_MARIADB_ADMIN_URL",
            on_gateway(services.mysql.admin_url.expose())?,
        ),
        ("PTAH_POD_REGISTRY", host_on_gateway(&services.registry.host)),
        (
            "PTAH_POD_PLAIN_REGISTRY",
            host_on_gateway(&services.plain_registry),
        ),
    ];
    if let Some(proxy) = &services.fault_proxy {
        vars.extend([
            (
                "PTAH_POD_PG_PROXY_URL",
                on_gateway(services.postgres.url.via(&proxy.postgres).expose())?,
            ),
            (
                "PTAH_POD_MARIADB_PROXY_URL",
                on_gateway(services.mysql.url.via(&proxy.mysql).expose())?,
            ),
            ("PTAH_POD_REGISTRY_PROXY", host_on_gateway(&proxy.registry)),
            (
                "PTAH_POD_PLAIN_REGISTRY_PROXY",
                host_on_gateway(&proxy.plain_registry),
            ),
        ]);
    }
    Ok(vars)
}

fn render_ports(ports: &[u16]) -> String {
    ports.iter().map(|p| format!("{p}\n")).collect()
}

/// Writes the endpoints file (mode 0600: the URLs carry passwords), atomically.
fn write_env(path: &Path, vars: &[(&str, String)]) -> anyhow::Result<()> {
    let header = "# Written by `cargo xtask cluster up|relay`: the test services as Pods reach them.";
    envfile::write_exports(path, header, vars)
}

/// Runs the relay in the foreground until SIGTERM or SIGINT.
pub fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let mut listeners = Vec::new();
        for port in &args.ports {
            let addr = SocketAddr::new(args.listen, *port);
            let listener = bind_freebind(addr).with_context(|| format!("cannot listen on {addr}"))?;
            listeners.push((listener, *port));
        }
        fs::write(args.dir.join(READY_FILE), b"")
            .with_context(|| format!("cannot write the ready file in {}", args.dir.display()))?;
        eprintln!("relay: {} ports {:?} -> 127.0.0.1", args.listen, args.ports);
        for (listener, port) in listeners {
            tokio::spawn(accept_loop(listener, port));
        }
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
        eprintln!("relay: stopping");
        Ok(())
    })
}

/// A listener on `addr`, which may not be assigned to any interface yet (`IP_FREEBIND`).
fn bind_freebind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    use rustix::net::{AddressFamily, SocketFlags, SocketType, sockopt};
    let IpAddr::V4(_) = addr.ip() else {
        bail!("the relay listens on IPv4 only, not {addr}");
    };
    let fd = rustix::net::socket_with(
        AddressFamily::INET,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )?;
    sockopt::set_socket_reuseaddr(&fd, true)?;
    sockopt::set_ip_freebind(&fd, true)?;
    rustix::net::bind(&fd, &addr)?;
    rustix::net::listen(&fd, 128)?;
    Ok(TcpListener::from_std(std::net::TcpListener::from(fd))?)
}

async fn accept_loop(listener: TcpListener, port: u16) {
    loop {
        match listener.accept().await {
            Ok((mut inbound, peer)) => {
                tokio::spawn(async move {
                    match TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await {
                        Ok(mut outbound) => {
                            // A reset by either side just ends this connection.
                            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                        Err(err) => eprintln!("relay: {peer} -> 127.0.0.1:{port}: {err}"),
                    }
                });
            }
            Err(err) => {
                // Out of descriptors and the like: wait instead of spinning.
                eprintln!("relay: accept on port {port}: {err}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn services() -> TestServices {
        let vars = HashMap::from([
            ("PTAH_TEST_PG_URL", "postgres://app:pw@127.0.0.1:55432/app"),
            (
                "PTAH_TEST_PG_ADMIN_URL",
                "postgres://postgres:apw@127.0.0.1:55432/postgres",
            ),
            ("PTAH_TEST_MYSQL_URL", "mysql://app:pw@127.0.0.1:53306/app"),
            (
                "PTAH_TEST_MYSQL_ADMIN_URL",
                "mysql://root:apw@127.0.0.1:53306/mysql",
            ),
            ("PTAH_TEST_REGISTRY", "127.0.0.1:55443"),
            ("PTAH_TEST_REGISTRY_CA", "/proc/self/status"),
            ("PTAH_TEST_REGISTRY_USERNAME", "ptah"),
            ("PTAH_TEST_REGISTRY_PASSWORD", "rpw"),
            ("PTAH_TEST_REGISTRY_PLAIN", "127.0.0.1:55000"),
            ("PTAH_TEST_TOXIPROXY_URL", "http://127.0.0.1:58474"),
            ("PTAH_TEST_PG_PROXY", "127.0.0.1:58475"),
            ("PTAH_TEST_MYSQL_PROXY", "127.0.0.1:58476"),
            ("PTAH_TEST_REGISTRY_PROXY", "127.0.0.1:58477"),
            ("PTAH_TEST_REGISTRY_PLAIN_PROXY", "127.0.0.1:58478"),
        ]);
        TestServices::load_from(Path::new("/nonexistent/services.env"), |k| {
            vars.get(k).map(|v| (*v).to_owned())
        })
        .expect("services from the environment")
    }

    #[test]
    fn pods_reach_every_service_on_the_gateway_with_the_same_port() {
        let s = services();
        assert_eq!(
            service_ports(&s).expect("ports"),
            [55432, 53306, 55443, 55000, 58475, 58476, 58477, 58478]
        );
        let vars: HashMap<&str, String> = endpoints(&s).expect("endpoints").into_iter().collect();
        assert_eq!(vars["PTAH_POD_PG_URL"], "postgres://app:pw@10.244.77.1:55432/app");
        assert_eq!(
            vars["PTAH_POD_MARIADB_URL"],
            "mysql://app:pw@10.244.77.1:53306/app"
        );
        assert_eq!(vars["PTAH_POD_REGISTRY"], "10.244.77.1:55443");
        assert_eq!(vars["PTAH_POD_PLAIN_REGISTRY"], "10.244.77.1:55000");
        assert_eq!(vars["PTAH_POD_GATEWAY"], "10.244.77.1");
        assert_eq!(
            vars["PTAH_POD_PG_PROXY_URL"],
            "postgres://app:pw@10.244.77.1:58475/app"
        );
        assert_eq!(vars["PTAH_POD_PLAIN_REGISTRY_PROXY"], "10.244.77.1:58478");
    }

    #[test]
    fn the_endpoints_file_is_private_and_shell_quoted() {
        let dir = std::env::temp_dir().join(format!("ptah-relay-test-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("dir");
        let path = dir.join(ENDPOINTS_FILE);
        write_env(&path, &[("A", "x'y".to_owned())]).expect("write");
        let text = fs::read_to_string(&path).expect("read");
        assert!(text.ends_with("export A='x'\\''y'\n"), "{text}");
        let mode = std::os::unix::fs::PermissionsExt::mode(&fs::metadata(&path).expect("meta").permissions());
        assert_eq!(mode & 0o777, 0o600);
        fs::remove_dir_all(&dir).expect("clean");
    }

    #[tokio::test]
    async fn a_freebind_listener_relays_to_loopback() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let echo = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.expect("echo");
        let port = echo.local_addr().expect("addr").port();
        tokio::spawn(async move {
            let (mut s, _) = echo.accept().await.expect("accept");
            let mut buf = [0u8; 4];
            s.read_exact(&mut buf).await.expect("read");
            s.write_all(&buf).await.expect("write");
        });
        // 127.0.0.2 is local too, and distinct from the echo server's address.
        let relay = bind_freebind(SocketAddr::new(Ipv4Addr::new(127, 0, 0, 2).into(), port)).expect("bind");
        tokio::spawn(accept_loop(relay, port));
        let mut client = TcpStream::connect((Ipv4Addr::new(127, 0, 0, 2), port))
            .await
            .expect("connect");
        client.write_all(b"ping").await.expect("send");
        let mut back = [0u8; 4];
        client.read_exact(&mut back).await.expect("echo");
        assert_eq!(&back, b"ping");
        // An address no interface has yet still binds.
        assert!(bind_freebind(SocketAddr::new(Ipv4Addr::new(10, 255, 254, 253).into(), port)).is_ok());
    }
}
