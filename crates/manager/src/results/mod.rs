//! Durable result delivery in the manager (docs/security.md, "Durable result delivery"): where
//! operation Pods reach this replica's receiver, and the receiver itself, restarted on the new
//! material whenever `ptah-cert-rotator` rotates it. Every replica serves it, leader or not: the
//! Service may route a Pod to any of them.

mod backend;
mod material;
mod sweep;

pub use backend::Cluster;
pub use sweep::sweep;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Service;
use kube::Api;
use ptah_controller::operation::observed::ResultEndpoint;
use ptah_resultreceiver::{routes::Receiver, server};
use tokio::sync::watch;
use tracing::{info, warn};

use crate::Args;

/// How often the material's files are checked for a rotation.
const MATERIAL_POLL: Duration = Duration::from_secs(5);

/// The name of the manager Service's port operation Pods deliver to.
pub const RESULTS_PORT_NAME: &str = "results";

/// Durable delivery as this replica runs it.
pub struct Delivery {
    /// Where operation Pods connect.
    pub endpoint: ResultEndpoint,
    /// The CA bundle handed to operation Pods, kept current.
    pub ca_bundle: watch::Receiver<String>,
    /// The receiver, until `stop`.
    pub task: tokio::task::JoinHandle<()>,
}

/// Where operation Pods reach the receiver: `--result-endpoint` as given, or the ClusterIP and
/// `results` port of `--result-service` (no cluster DNS needed), named `<name>.<namespace>.svc`.
async fn endpoint(client: &kube::Client, args: &Args) -> anyhow::Result<Option<ResultEndpoint>> {
    if let Some(endpoint) = &args.result_endpoint {
        let server_name = args
            .result_server_name
            .clone()
            .context("--result-endpoint needs --result-server-name")?;
        return Ok(Some(ResultEndpoint {
            endpoint: endpoint.clone(),
            server_name,
        }));
    }
    let Some(service) = &args.result_service else {
        return Ok(None);
    };
    let (namespace, name) = service
        .split_once('/')
        .context("--result-service is <namespace>/<name>")?;
    let api: Api<Service> = Api::namespaced(client.clone(), namespace);
    let svc = api
        .get(name)
        .await
        .with_context(|| format!("reading the Service {service}"))?;
    let spec = svc.spec.context("the Service has no spec")?;
    let ip = spec
        .cluster_ip
        .filter(|ip| !ip.is_empty() && ip != "None")
        .context("the Service has no cluster IP")?;
    let port = spec
        .ports
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.name.as_deref() == Some(RESULTS_PORT_NAME))
        .with_context(|| format!("the Service {service} has no port named {RESULTS_PORT_NAME}"))?
        .port;
    let host = if ip.contains(':') { format!("[{ip}]") } else { ip };
    Ok(Some(ResultEndpoint {
        endpoint: format!("{host}:{port}"),
        server_name: format!("{name}.{namespace}.svc"),
    }))
}

/// Starts the receiver when durable delivery is configured (`--result-tls-dir` exists and an
/// endpoint is named); waits for the rotator's material first. `None`: results travel through
/// Pod logs.
pub async fn start(
    client: kube::Client,
    args: &Args,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<Option<Delivery>> {
    let dir = args.result_tls_dir.clone();
    let Some(endpoint) = endpoint(&client, args).await? else {
        info!("no result endpoint configured: results travel through Pod logs");
        return Ok(None);
    };
    anyhow::ensure!(
        dir.is_dir(),
        "durable result delivery is configured but {} does not exist",
        dir.display()
    );
    let first = loop {
        match material::load(&dir) {
            Ok(m) => break m,
            Err(e) => {
                warn!(dir = %dir.display(), error = format!("{e:#}"), "waiting for the result TLS material")
            }
        }
        tokio::select! {
            _ = stop.wait_for(|s| *s) => anyhow::bail!("stopped while waiting for the result TLS material"),
            _ = tokio::time::sleep(MATERIAL_POLL) => {}
        }
    };
    let (bundle_tx, ca_bundle) = watch::channel(first.bundle_pem.clone());
    info!(endpoint = %endpoint.endpoint, server_name = %endpoint.server_name, addr = %args.result_addr, "durable result delivery on");
    // The first listener is bound before this returns, so the receiver takes connections as soon
    // as the manager dispatches.
    let backend = Arc::new(backend::Cluster::new(client.clone()));
    let (first_switch, first_stop) = watch::channel(false);
    let first_server = listen(args.result_addr, &first, backend.clone(), first_stop).await?;
    let sweeping = tokio::spawn(sweep::run(client, stop.clone()));
    let serving = tokio::spawn(serve_rotating(
        Serving {
            addr: args.result_addr,
            dir,
            backend,
            bundle: bundle_tx,
        },
        first,
        (tokio::spawn(first_server), first_switch),
        stop,
    ));
    let task = tokio::spawn(async move {
        let _ = serving.await;
        let _ = sweeping.await;
    });
    Ok(Some(Delivery {
        endpoint,
        ca_bundle,
        task,
    }))
}

/// What the receiver is served with, beside its material.
struct Serving {
    addr: SocketAddr,
    dir: std::path::PathBuf,
    backend: Arc<backend::Cluster>,
    bundle: watch::Sender<String>,
}

/// A running receiver and the switch that stops it.
type Running = (tokio::task::JoinHandle<()>, watch::Sender<bool>);

/// Keeps `running` (serving `material`) until the material changes on disk, then serves the new
/// one; until `stop`.
async fn serve_rotating(
    serving: Serving,
    mut material: material::Material,
    running: Running,
    mut stop: watch::Receiver<bool>,
) {
    let mut current = Some(running);
    loop {
        let changed = loop {
            tokio::select! {
                _ = stop.wait_for(|s| *s) => break None,
                _ = tokio::time::sleep(MATERIAL_POLL) => {}
            }
            if current.is_none() || material::fingerprint(&serving.dir) != Some(material.fingerprint) {
                match material::load(&serving.dir) {
                    Ok(m) => break Some(m),
                    Err(e) => warn!(
                        error = format!("{e:#}"),
                        "the rotated result TLS material is not loadable yet"
                    ),
                }
            }
        };
        if let Some((task, switch)) = current.take() {
            let _ = switch.send(true);
            let _ = task.await;
        }
        let Some(m) = changed else { return };
        info!("result TLS material rotated; the receiver serves the new one");
        let _ = serving.bundle.send(m.bundle_pem.clone());
        material = m;
        let (switch, switched) = watch::channel(false);
        match listen(serving.addr, &material, serving.backend.clone(), switched).await {
            Ok(server) => current = Some((tokio::spawn(server), switch)),
            Err(e) => warn!(
                error = format!("{e:#}"),
                "the result receiver cannot serve; retrying"
            ),
        }
    }
}

async fn listen(
    addr: SocketAddr,
    material: &material::Material,
    backend: Arc<backend::Cluster>,
    stop: watch::Receiver<bool>,
) -> anyhow::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    let tls = server::server_config(&material.trusted, material.serving.clone())?;
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }?;
    // A restart after a rotation binds the address its predecessor just released.
    socket.set_reuseaddr(true)?;
    socket
        .bind(addr)
        .with_context(|| format!("binding the result receiver to {addr}"))?;
    let listener = socket.listen(1024)?;
    let router = server::router(Receiver {
        backend,
        ca: material.ca.clone(),
    });
    Ok(server::serve(
        listener,
        tls,
        router,
        server::Limits::default(),
        stop,
    ))
}
