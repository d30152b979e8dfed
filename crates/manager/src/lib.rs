//! The manager process: the execution binding, leader election, the PtahSchema controller while
//! leading, and the health and metrics endpoints and admission webhooks every replica serves.
//!
//! The manager never connects to a database and never reads a Secret: every database operation
//! is a Job whose Pod holds the credential.

mod args;
mod http;
mod leader;
pub mod results;
mod webhook;

use std::sync::Arc;

use anyhow::Context as _;
pub use args::Args;
use ptah_api::shared::PinnedImage;
use ptah_controller::{schema::Binding, shell};
use tokio::sync::watch;
use tracing::info;

/// Runs the manager until SIGTERM or SIGINT.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let metrics = Arc::new(ptah_telemetry::Metrics::new());
    let client = counted_client(metrics.clone()).await?;
    let mut binding = binding(&client, &args).await?;
    info!(epoch = %binding.epoch.as_str(), executor = %binding.executor_image.as_str(), "execution binding");
    let (ready_tx, ready_rx) = watch::channel(false);
    // Without a certificate directory no webhooks are configured, so readiness does not wait for them.
    let (webhooks_tx, webhooks_rx) = watch::channel(!args.webhook_cert_dir.is_dir());
    let (stop_tx, stop_rx) = watch::channel(false);
    let server = tokio::spawn(http::serve(
        args.http_addr,
        metrics.clone(),
        http::Readiness {
            controller: ready_rx,
            webhooks: webhooks_rx,
        },
        stop_rx.clone(),
    ));
    let webhooks = tokio::spawn(webhook::serve(
        client.clone(),
        args.clone(),
        webhooks_tx,
        stop_rx.clone(),
    ));
    // Durable result delivery waits for the rotator's material; meanwhile the replica is live but
    // not ready.
    let delivery = results::start(client.clone(), &args, stop_rx.clone()).await?;
    binding.result_endpoint = delivery.as_ref().map(|d| d.endpoint.clone());
    let config = shell::ManagerConfig {
        coordination_namespace: args.coordination_namespace.clone(),
        identity: args.identity.clone(),
        watch_namespace: args.watch_namespace.clone(),
    };
    let leading = tokio::spawn(leader::lead(
        client,
        args.clone(),
        binding,
        config,
        leader::Shared {
            metrics,
            result_ca: delivery.as_ref().map(|d| d.ca_bundle.clone()),
        },
        ready_tx,
        stop_rx,
    ));
    shutdown_signal().await;
    info!("shutting down");
    let _ = stop_tx.send(true);
    leading.await.context("the leader task panicked")??;
    server.await.context("the HTTP server panicked")??;
    webhooks.await.context("the webhook server panicked")??;
    if let Some(d) = delivery {
        d.task.await.context("the result receiver panicked")?;
    }
    Ok(())
}

/// The client of the inferred configuration, counting every request it sends by verb
/// (`ptah_kube_api_requests_total`).
async fn counted_client(metrics: Arc<ptah_telemetry::Metrics>) -> anyhow::Result<kube::Client> {
    let config = kube::Config::infer()
        .await
        .context("reading the Kubernetes client configuration")?;
    let count = tower::util::MapRequestLayer::new(move |req: ::http::Request<kube::client::Body>| {
        let uri = req.uri();
        metrics.api_request(ptah_telemetry::Verb::of(
            req.method().as_str(),
            uri.path(),
            uri.query(),
        ));
        req
    });
    Ok(kube::client::ClientBuilder::try_from(config)
        .context("connecting to the Kubernetes API")?
        .with_layer(&count)
        .build())
}

async fn binding(client: &kube::Client, args: &Args) -> anyhow::Result<Binding> {
    let inputs = ptah_controllerstate::BindingInputs {
        controller_state_version: ptah_controllerstate::CONTROLLER_STATE_VERSION,
        ptah_version: args.ptah_version.clone(),
        executor_image: args.executor_image.clone(),
        runner_protocol_version: i64::from(ptah_dataplane::PROTOCOL_VERSION),
    };
    let state = ptah_controllerstate::ensure(client.clone(), &args.coordination_namespace, inputs)
        .await
        .context(
            "reading the manager state (refusing to start over state this manager does not understand)",
        )?;
    Ok(Binding {
        epoch: state.epoch,
        controller_state_version: state.inputs.controller_state_version,
        ptah_version: state.inputs.ptah_version,
        executor_image: PinnedImage::parse(&args.executor_image)
            .context("--executor-image must be pinned by digest")?,
        runner_image: PinnedImage::parse(&args.runner_image)
            .context("--runner-image must be pinned by digest")?,
        runner_protocol_version: state.inputs.runner_protocol_version,
        controller_image: args.controller_image.clone(),
        controller_revision: args.controller_revision.clone(),
        result_endpoint: None,
    })
}

async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}
