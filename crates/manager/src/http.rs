//! `/healthz`, `/readyz` and `/metrics`, served by every replica, leader or not.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context as _;
use axum::{Router, extract::State, http::StatusCode, routing::get};
use ptah_telemetry::Metrics;
use tokio::sync::watch;

#[derive(Clone)]
struct Shared {
    metrics: Arc<Metrics>,
    ready: watch::Receiver<bool>,
}

/// Serves until `stop` turns true.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    ready: watch::Receiver<bool>,
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

/// Ready once the execution binding is known and the controller (or standby) loop runs.
async fn readyz(State(s): State<Shared>) -> (StatusCode, &'static str) {
    if *s.ready.borrow() {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "starting")
    }
}

async fn metrics_text(State(s): State<Shared>) -> (StatusCode, String) {
    match s.metrics.encode() {
        Ok(text) => (StatusCode::OK, text),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
