//! What a slow or greedy client can take from the receiver: a connection that never finishes its
//! handshake or its headers is closed, and connections beyond the limit are closed at once.

use std::{sync::Arc, time::Duration};

use ptah_resultreceiver::{
    server::Limits,
    testing::{Memory, Running, start_with},
};
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::ServerName;
use tokio::{
    io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

const TIGHT: Limits = Limits {
    connections: 1,
    handshake: Duration::from_millis(300),
    headers: Duration::from_millis(300),
    connection: Duration::from_secs(2),
};

/// Whether the peer closes `stream` within 1.5 s (a read ends, by EOF or error): sooner than
/// the connection's whole lifetime (2 s), so only the limit under test can be what closed it.
async fn closed_by_peer(stream: &mut (impl AsyncRead + Unpin)) -> bool {
    let mut buf = [0u8; 64];
    loop {
        match tokio::time::timeout(Duration::from_millis(1500), stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

async fn receiver() -> Running {
    start_with(Memory::default(), TIGHT).await
}

#[tokio::test]
async fn a_client_that_never_handshakes_is_closed_and_one_over_the_limit_at_once() {
    let running = receiver().await;
    let mut idle = TcpStream::connect(running.addr).await.expect("connect");
    // The idle connection holds the only slot: the next one is closed without a handshake.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut over = TcpStream::connect(running.addr).await.expect("connect");
    let started = tokio::time::Instant::now();
    assert!(
        closed_by_peer(&mut over).await,
        "a connection over the limit stayed open"
    );
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    assert!(
        closed_by_peer(&mut idle).await,
        "a client that never handshakes stayed connected"
    );
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_closed() {
    let running = receiver().await;
    let mut roots = RootCertStore::empty();
    roots.add(running.ca_der.clone()).expect("root");
    let config = ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(running.addr).await.expect("connect");
    let name = ServerName::try_from("127.0.0.1").expect("name");
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("handshake");
    tls.write_all(b"POST /v1/enrol HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .expect("write");
    tls.flush().await.expect("flush");
    assert!(
        closed_by_peer(&mut tls).await,
        "a client that never finished its headers stayed connected"
    );
}
