//! The receiver's key material, from the mounted Secret `ptah-cert-rotator` writes (the webhook
//! Secret's layout): the result CA bundle `ca.crt` (old and new during a rotation), the key of the
//! CA that signs `ca.key`, and the receiver's serving pair `tls.crt`/`tls.key`. The manager holds
//! no Secret permission: it reads files.

use std::{path::Path, sync::Arc};

use anyhow::Context as _;
use ptah_fingerprint::Sha256;
use ptah_resultreceiver::ResultCa;
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};

const FILES: [&str; 4] = ["ca.crt", "ca.key", "tls.crt", "tls.key"];

/// Loaded material.
pub struct Material {
    /// `ca.crt` as mounted: what operation Pods trust the receiver by.
    pub bundle_pem: String,
    /// The same, parsed: what client certificates are verified against.
    pub trusted: Vec<CertificateDer<'static>>,
    /// The CA that signs client certificates.
    pub ca: Arc<ResultCa>,
    /// The serving certificate and key.
    pub serving: Arc<SingleCertAndKey>,
    /// What the four files held, to notice a rotation.
    pub fingerprint: Sha256,
}

/// The sha256 of the four files' contents, `None` while one is missing.
pub fn fingerprint(dir: &Path) -> Option<Sha256> {
    let mut all = Vec::new();
    for file in FILES {
        let bytes = std::fs::read(dir.join(file)).ok()?;
        all.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        all.extend_from_slice(&bytes);
    }
    Some(Sha256::of(&all))
}

fn read(dir: &Path, file: &str) -> anyhow::Result<String> {
    std::fs::read_to_string(dir.join(file)).with_context(|| format!("reading {file}"))
}

/// Loads the material of `dir`.
pub fn load(dir: &Path) -> anyhow::Result<Material> {
    let fingerprint = fingerprint(dir).context("the result TLS directory is incomplete")?;
    let bundle_pem = read(dir, "ca.crt")?;
    let trusted = CertificateDer::pem_slice_iter(bundle_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .context("ca.crt is not a PEM bundle")?;
    anyhow::ensure!(!trusted.is_empty(), "ca.crt holds no certificate");
    let ca = ResultCa::from_bundle(&bundle_pem, &read(dir, "ca.key")?).context("ca.key and ca.crt")?;
    let ca = Arc::new(ca);
    let chain = CertificateDer::pem_slice_iter(read(dir, "tls.crt")?.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .context("tls.crt is not a PEM chain")?;
    let key = PrivateKeyDer::from_pem_slice(read(dir, "tls.key")?.as_bytes()).context("tls.key")?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certified =
        CertifiedKey::from_der(chain, key, &provider).context("tls.key does not match tls.crt")?;
    Ok(Material {
        bundle_pem,
        trusted,
        ca,
        serving: Arc::new(SingleCertAndKey::from(certified)),
        fingerprint,
    })
}
