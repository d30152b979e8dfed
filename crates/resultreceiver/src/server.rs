//! The receiver's HTTPS side: TLS 1.3 only, a client certificate from the result CA optional at
//! the handshake (enrolment has none yet) and required by the delivery route, served by a small
//! accept loop that hands each request its connection's source address and client certificate.

use std::{sync::Arc, time::Duration};

use axum::{Extension, Router, extract::DefaultBodyLimit, routing::post};
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    service::TowerToHyperService,
};
use rustls::{RootCertStore, ServerConfig, server::ResolvesServerCert, server::WebPkiClientVerifier};
use rustls_pki_types::CertificateDer;
use tokio::{net::TcpListener, sync::watch, task::JoinSet};
use tokio_rustls::TlsAcceptor;

use ptah_resultdelivery::wire::{MAX_ENROL_BYTES, ROUTE_ENROL, ROUTE_RESULTS};

use crate::{
    Backend,
    routes::{Peer, Receiver, deliver, enrol},
};

/// What one client may take from the receiver. A client holds a connection only as long as it
/// keeps to these, so a slow or stuck Pod cannot starve the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open connections at most; a connection beyond is closed at once.
    pub connections: usize,
    /// How long a client gets to finish the TLS handshake.
    pub handshake: Duration,
    /// How long a client gets to send a request's headers.
    pub headers: Duration,
    /// How long one connection may live, its requests and bodies included (an 8 MiB plan
    /// crosses a cluster network in well under a second).
    pub connection: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: 64,
            handshake: Duration::from_secs(10),
            headers: Duration::from_secs(10),
            connection: Duration::from_secs(120),
        }
    }
}

/// Why the receiver cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A trusted CA certificate was refused.
    #[error("the result CA bundle is unusable: {0}")]
    Trust(String),
    /// rustls refused the configuration.
    #[error("the TLS configuration is refused: {0}")]
    Tls(#[from] rustls::Error),
}

/// TLS 1.3 (ring) with `serving`'s certificate; a client certificate is verified against
/// `trusted` (the result CA bundle, old and new during a rotation) when presented.
pub fn server_config(
    trusted: &[CertificateDer<'static>],
    serving: Arc<dyn ResolvesServerCert>,
) -> Result<Arc<ServerConfig>, ServeError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for ca in trusted {
        roots
            .add(ca.clone())
            .map_err(|e| ServeError::Trust(e.to_string()))?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .map_err(|e| ServeError::Trust(e.to_string()))?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_client_cert_verifier(verifier)
        .with_cert_resolver(serving);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The two routes, each with its own body bound.
pub fn router<B: Backend>(receiver: Receiver<B>) -> Router {
    Router::new()
        .route(
            ROUTE_ENROL,
            post(enrol::<B>).layer(DefaultBodyLimit::max(MAX_ENROL_BYTES)),
        )
        .route(
            ROUTE_RESULTS,
            post(deliver::<B>).layer(DefaultBodyLimit::max(ptah_resultdelivery::MAX_BODY_BYTES)),
        )
        .with_state(receiver)
}

/// Serves `router` on `listener` within `limits` until `stop` turns true, then closes the
/// listener and every open connection.
pub async fn serve(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    router: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let acceptor = TlsAcceptor::from(tls);
    let mut connections = JoinSet::new();
    tracing::info!(addr = ?listener.local_addr().ok(), "result receiver serving");
    loop {
        if *stop.borrow() {
            break;
        }
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.changed() => continue,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, addr) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a result connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if connections.len() >= limits.connections {
            tracing::warn!(%addr, limit = limits.connections, "result receiver at its connection limit; connection closed");
            drop(stream);
            continue;
        }
        let acceptor = acceptor.clone();
        let router = router.clone();
        connections.spawn(async move {
            let tls = match tokio::time::timeout(limits.handshake, acceptor.accept(stream)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => return tracing::debug!(%addr, error = %e, "result TLS handshake failed"),
                Err(_) => return tracing::debug!(%addr, "result TLS handshake timed out"),
            };
            let certificate = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .map(|c| c.clone().into_owned());
            let service = TowerToHyperService::new(router.layer(Extension(Peer { addr, certificate })));
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.headers)
                .serve_connection(TokioIo::new(tls), service);
            match tokio::time::timeout(limits.connection, served).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!(%addr, error = %e, "result connection ended with an error"),
                Err(_) => tracing::debug!(%addr, "result connection outlived its limit and was closed"),
            }
        });
    }
    drop(listener);
    connections.shutdown().await;
    tracing::info!("result receiver stopped");
}
