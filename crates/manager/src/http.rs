//! `/healthz`, `/readyz` and `/metrics`, served by every replica, leader or not.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context as _;
use axum::{Router, extract::State, http::StatusCode, routing::get};
use ptah_telemetry::Metrics;
use tokio::sync::watch;

#[derive(Clone)]
struct Shared {
    metrics: Arc<Metrics>,
    ready: Readiness,
}

/// What `/readyz` waits for.
#[derive(Clone)]
pub struct Readiness {
    /// The execution binding is known and the leader (or standby) loop runs.
    pub controller: watch::Receiver<bool>,
    /// The webhook server holds a certificate and listens: the webhook Service may route here.
    pub webhooks: watch::Receiver<bool>,
}

/// Serves until `stop` turns true.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    ready: Readiness,
    mut stop: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(Shared { metrics, ready });
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    tracing::info!(%addr, "serving health and metrics");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            let _ = stop.wait_for(|s| *s).await;
        })
        .await
        .context("the HTTP server failed")
}

/// Ready once the controller (or standby) loop runs and, when webhooks are configured, they
/// are served: with `failurePolicy: Fail` a replica that cannot answer must not get traffic.
async fn readyz(State(s): State<Shared>) -> (StatusCode, &'static str) {
    let controller = *s.ready.controller.borrow();
    let webhooks = *s.ready.webhooks.borrow();
    match (controller, webhooks) {
        (true, true) => (StatusCode::OK, "ready"),
        (false, _) => (StatusCode::SERVICE_UNAVAILABLE, "starting"),
        (true, false) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "waiting for the webhook certificate",
        ),
    }
}

async fn metrics_text(State(s): State<Shared>) -> (StatusCode, String) {
    match s.metrics.encode() {
        Ok(text) => (StatusCode::OK, text),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
