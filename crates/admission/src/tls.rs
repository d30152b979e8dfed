//! The serving certificate, re-read from `tls.crt`/`tls.key` when the files change.
//!
//! Kubernetes updates a mounted Secret by swapping a symlink, and a rotator writing plain files
//! may be caught half-way; so a change is adopted only when both files parse and the key matches
//! the certificate, and until then the last good pair keeps serving.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::watch;

use crate::AdmissionError;

/// The certificate chain file in the certificate directory.
pub const CERT_FILE: &str = "tls.crt";
/// The private key file in the certificate directory.
pub const KEY_FILE: &str = "tls.key";

#[derive(Debug)]
struct Current {
    key: Arc<CertifiedKey>,
    // The bytes last looked at (good or not), so an unchanged bad pair is not re-parsed and re-logged.
    seen: (Vec<u8>, Vec<u8>),
}

/// A certificate resolver serving the last good pair from a directory.
#[derive(Debug)]
pub struct ReloadingCert {
    dir: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Current>,
}

fn read(path: &Path) -> Result<Vec<u8>, AdmissionError> {
    std::fs::read(path).map_err(|source| AdmissionError::Read {
        path: path.to_owned(),
        source,
    })
}

fn parse(
    dir: &Path,
    provider: &CryptoProvider,
    cert: &[u8],
    key: &[u8],
) -> Result<CertifiedKey, AdmissionError> {
    let invalid = |why: String| AdmissionError::InvalidCertificate {
        dir: dir.to_owned(),
        why,
    };
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("{CERT_FILE}: {e}")))?;
    if chain.is_empty() {
        return Err(invalid(format!("{CERT_FILE} holds no certificate")));
    }
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| invalid(format!("{KEY_FILE}: {e}")))?;
    let certified = CertifiedKey::from_der(chain, key, provider)
        .map_err(|e| invalid(format!("the key does not fit the certificate: {e}")))?;
    Ok(certified)
}

impl ReloadingCert {
    /// Loads `dir/tls.crt` and `dir/tls.key`; fails when they are missing or invalid.
    pub fn load(dir: &Path) -> Result<Arc<Self>, AdmissionError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let cert = read(&dir.join(CERT_FILE))?;
        let key = read(&dir.join(KEY_FILE))?;
        let certified = parse(dir, &provider, &cert, &key)?;
        Ok(Arc::new(ReloadingCert {
            dir: dir.to_owned(),
            provider,
            current: RwLock::new(Current {
                key: Arc::new(certified),
                seen: (cert, key),
            }),
        }))
    }

    /// Re-reads the files; returns whether a new pair was adopted. Unreadable or invalid files
    /// leave the current pair in place and are reported as the error.
    pub fn reload(&self) -> Result<bool, AdmissionError> {
        let cert = read(&self.dir.join(CERT_FILE))?;
        let key = read(&self.dir.join(KEY_FILE))?;
        {
            let current = self
                .current
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if current.seen.0 == cert && current.seen.1 == key {
                return Ok(false);
            }
        }
        let parsed = parse(&self.dir, &self.provider, &cert, &key);
        let mut current = self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        current.seen = (cert, key);
        current.key = Arc::new(parsed?);
        Ok(true)
    }

    /// Polls the files every `every` until `stop` turns true, logging each adoption or refusal.
    pub async fn watch(self: Arc<Self>, every: Duration, mut stop: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.changed() => {}
            }
            if *stop.borrow() {
                return;
            }
            match self.reload() {
                Ok(true) => tracing::info!(dir = %self.dir.display(), "webhook serving certificate reloaded"),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "webhook certificate not reloaded; serving the previous one")
                }
            }
        }
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let current = self
            .current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(current.key.clone())
    }
}

/// A TLS 1.2/1.3 server configuration (ring) offering HTTP/1.1 with `resolver`'s certificate.
pub fn server_config(resolver: Arc<ReloadingCert>) -> Result<Arc<ServerConfig>, AdmissionError> {
    let mut config = ServerConfig::builder_with_provider(resolver.provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
