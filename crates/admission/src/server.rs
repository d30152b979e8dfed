//! The HTTP side: five routes over one axum router, served over rustls by a small accept loop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::review::{Verdict, decode, respond};
use crate::{Admission, AdmissionError};

/// Mutating approval webhook (PtahSchemaApproval and the migration kinds, CREATE).
pub const ROUTE_MUTATE_APPROVALS: &str = "/mutate/v1/approvals";
/// Validating approval webhook (CREATE/UPDATE).
pub const ROUTE_VALIDATE_APPROVALS: &str = "/validate/v1/approvals";
/// Mutating spec-writer webhook (PtahSchema/PtahMigration CREATE/UPDATE).
pub const ROUTE_SPEC_WRITER: &str = "/mutate/v1/spec-writer";
/// Validating operation-Pod intent webhook.
pub const ROUTE_OPERATION_PODS: &str = "/validate/v1/operation-pods";
/// Validating write guard of manager-owned objects.
pub const ROUTE_MANAGER_OWNED: &str = "/validate/v1/manager-owned";
/// The largest AdmissionReview body accepted (an 8 MiB plan never passes through a webhook;
/// a review of a large Pod or ConfigMap fits comfortably).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How long a client gets to finish the TLS handshake before its connection is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug)]
enum Hook {
    MutateApprovals,
    ValidateApprovals,
    SpecWriter,
    OperationPods,
    ManagerOwned,
}

async fn review(admission: &Admission, hook: Hook, body: &[u8]) -> Response {
    let started = Instant::now();
    let request = match decode(body) {
        Ok(request) => request,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let verdict = match hook {
        Hook::MutateApprovals => admission.mutate_approval(&request).await,
        Hook::ValidateApprovals => admission.validate_approval(&request).await,
        Hook::SpecWriter => admission.mutate_spec_writer(&request).await,
        Hook::OperationPods => admission.validate_operation_pod(&request).await,
        Hook::ManagerOwned => admission.validate_manager_owned(&request),
    };
    if let Verdict::Deny(message) = &verdict {
        tracing::info!(
            hook = ?hook,
            kind = %request.kind.kind,
            name = %request.name,
            namespace = request.namespace.as_deref().unwrap_or_default(),
            user = request.user_info.username.as_deref().unwrap_or_default(),
            %message,
            "admission refused"
        );
    }
    let out = respond(&request, verdict);
    tracing::debug!(hook = ?hook, request = %request.uid, elapsed_us = started.elapsed().as_micros() as u64, "admission reviewed");
    match serde_json::to_vec(&out) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot encode the review: {e}"),
        )
            .into_response(),
    }
}

fn route(hook: Hook) -> axum::routing::MethodRouter<Admission> {
    post(
        move |State(admission): State<Admission>, body: Bytes| async move {
            review(&admission, hook, &body).await
        },
    )
}

/// The router of the five webhooks, with the body bounded by [`MAX_BODY_BYTES`].
pub fn router(admission: Admission) -> Router {
    Router::new()
        .route(ROUTE_MUTATE_APPROVALS, route(Hook::MutateApprovals))
        .route(ROUTE_VALIDATE_APPROVALS, route(Hook::ValidateApprovals))
        .route(ROUTE_SPEC_WRITER, route(Hook::SpecWriter))
        .route(ROUTE_OPERATION_PODS, route(Hook::OperationPods))
        .route(ROUTE_MANAGER_OWNED, route(Hook::ManagerOwned))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(admission)
}

/// Serves `router` over TLS on `listener` until `stop` turns true; then closes the listener and
/// every open connection, so a stopped server is unreachable at once (the API server then fails
/// closed rather than reusing a kept-alive connection).
pub async fn serve(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    router: Router,
    mut stop: watch::Receiver<bool>,
) -> Result<(), AdmissionError> {
    let acceptor = TlsAcceptor::from(tls);
    let mut connections = JoinSet::new();
    tracing::info!(addr = ?listener.local_addr().ok(), "admission webhooks serving");
    loop {
        if *stop.borrow() {
            break;
        }
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.changed() => continue,
            // Reap finished connections so the set does not grow with every request.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Per-connection failures (e.g. too many open files) must not end the server.
                tracing::warn!(error = %e, "accepting a webhook connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(router.clone());
        connections.spawn(async move {
            let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "webhook connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
    tracing::info!("admission webhooks stopped");
    Ok(())
}
