//! An HTTPS client for the receiver under test, raw enough to send what no runner would.

use std::{net::SocketAddr, sync::Arc};

use http_body_util::{BodyExt as _, Full};
use hyper::{Request, StatusCode, body::Bytes};
use hyper_util::rt::TokioIo;
use ptah_fingerprint::Digest;
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, pem::PemObject as _};
use tokio::net::TcpStream;

/// A client trusting `ca`, presenting `identity` (certificate DER, key PEM) when given.
pub fn client(ca: &CertificateDer<'static>, identity: Option<(Vec<u8>, String)>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone()).expect("root");
    let builder = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("versions")
        .with_root_certificates(roots);
    let config = match identity {
        Some((cert, key)) => builder
            .with_client_auth_cert(
                vec![CertificateDer::from(cert)],
                PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("key"),
            )
            .expect("client auth"),
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// One POST over a fresh TLS connection; the status and body, or the connection's error.
pub async fn post(
    addr: SocketAddr,
    tls: Arc<ClientConfig>,
    path: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> Result<(StatusCode, Bytes), String> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let name = ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| e.to_string())?;
    tokio::spawn(connection);
    let mut request = Request::post(path).header("host", "127.0.0.1");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, bytes))
}

/// The digest header of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    Digest::of(bytes).to_string()
}
