//! A deliberately lying plain-HTTP registry on loopback, for what a real distribution server
//! never does: serve manifest bytes that do not match the digest asked for, an endless manifest,
//! or a blob longer than its descriptor. It answers `/v2/` with 200, any manifest GET with `manifest`, any blob
//! GET with `blob`, and records every request path.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicU64, Ordering},
};

use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpListener,
};

/// What the lying registry serves.
#[derive(Clone, Default)]
pub struct Script {
    /// Body of every manifest GET.
    pub manifest: Vec<u8>,
    /// `Docker-Content-Digest` sent with the manifest, if any.
    pub manifest_digest_header: Option<String>,
    /// Body of every blob GET.
    pub blob: Vec<u8>,
    /// Instead of `manifest`: an endless body without a length, until the client hangs up.
    pub endless_manifest: bool,
    /// Instead of `manifest`: this `Content-Length` and then a body that never comes.
    pub declared_manifest: Option<u64>,
}

/// A running lying registry.
pub struct Tamper {
    /// `127.0.0.1:PORT`.
    pub host: String,
    /// Request paths seen so far.
    pub seen: Arc<Mutex<Vec<String>>>,
    /// Bytes of endless manifest the client accepted before hanging up.
    pub sent: Arc<AtomicU64>,
}

impl Tamper {
    /// Starts serving `script` on an ephemeral loopback port.
    pub async fn start(script: Script) -> Tamper {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let host = listener.local_addr().expect("addr").to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicU64::new(0));
        let log = seen.clone();
        let counter = sent.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let script = script.clone();
                let log = log.clone();
                let counter = counter.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let mut len = 0;
                    while !buf[..len].windows(4).any(|w| w == b"\r\n\r\n") && len < buf.len() {
                        match socket.read(&mut buf[len..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => len += n,
                        }
                    }
                    let head = String::from_utf8_lossy(&buf[..len]).into_owned();
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                    log.lock().expect("log").push(path.clone());
                    if path.contains("/manifests/") && script.endless_manifest {
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nConnection: close\r\n\r\n";
                        if socket.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        let chunk = vec![b' '; 64 * 1024];
                        // 4 GiB at most, so a client that never stops still ends the test.
                        for _ in 0..65_536 {
                            if socket.write_all(&chunk).await.is_err() {
                                return;
                            }
                            counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                        }
                        return;
                    }
                    if path.contains("/manifests/")
                        && let Some(length) = script.declared_manifest
                    {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nContent-Length: {length}\r\n\r\n"
                        );
                        let _ = socket.write_all(head.as_bytes()).await;
                        // Hold the connection open: a client that waits for the body hangs.
                        let _ = socket.read(&mut buf).await;
                        return;
                    }
                    let (content_type, body, digest) = if path.contains("/manifests/") {
                        (
                            "application/vnd.oci.image.manifest.v1+json",
                            script.manifest.clone(),
                            script.manifest_digest_header.clone(),
                        )
                    } else if path.contains("/blobs/") {
                        ("application/octet-stream", script.blob.clone(), None)
                    } else {
                        ("application/json", b"{}".to_vec(), None)
                    };
                    let mut response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
                        body.len()
                    );
                    if let Some(digest) = digest {
                        response.push_str(&format!("Docker-Content-Digest: {digest}\r\n"));
                    }
                    response.push_str("\r\n");
                    let _ = socket.write_all(response.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Tamper { host, seen, sent }
    }

    /// The request paths seen so far.
    pub fn paths(&self) -> Vec<String> {
        self.seen.lock().expect("log").clone()
    }
}
