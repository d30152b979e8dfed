//! One HTTPS POST over a fresh connection, bounded in what it reads back.

use std::sync::Arc;

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::{Request, body::Bytes};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use tokio::net::TcpStream;

use crate::{ClientError, Endpoint};

/// The most bytes of an answer read (an enrolment answer is about 1 KiB).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

fn unavailable(what: &str, e: impl std::fmt::Display) -> ClientError {
    ClientError::Unavailable(format!("{what}: {e}"))
}

/// POSTs `body` to `path`; returns the status and the answer's bytes.
pub async fn post(
    endpoint: &Endpoint,
    tls: Arc<ClientConfig>,
    path: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
) -> Result<(u16, Bytes), ClientError> {
    let tcp = TcpStream::connect(&endpoint.address)
        .await
        .map_err(|e| unavailable("connect", e))?;
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(endpoint.server_name.clone(), tcp)
        .await
        .map_err(|e| unavailable("TLS", e))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| unavailable("HTTP", e))?;
    tokio::spawn(connection);
    let mut request = Request::post(path).header("host", endpoint.address.as_str());
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| ClientError::Local(e.to_string()))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| unavailable("HTTP", e))?;
    let status = response.status().as_u16();
    let answer = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|e| unavailable("answer", e))?
        .to_bytes();
    Ok((status, answer))
}
