//! TLS to databases on the one rustls stack (ring provider): the trust roots, the verifier each
//! mode asks for, and the reading of a failed handshake into a typed reason.
//!
//! Modes follow libpq and the MySQL client: `require` encrypts without checking the certificate,
//! unless a CA bundle is given, and then the chain is checked as in `verify-ca`; `verify-ca`
//! checks the chain only; `verify-full` checks the chain and that the certificate names the host.
//! Without a CA bundle the verifying modes trust the public web PKI roots (`webpki-roots`).

use std::{fs, path::Path, sync::Arc};

use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    client::{
        WebPkiServerVerifier,
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    },
    crypto::CryptoProvider,
};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime, pem::PemObject};

use crate::{Error, TlsMode};

/// The CA bundle's PEM certificates, read once so that a bad file is refused before connecting.
#[derive(Clone)]
pub(crate) struct Roots {
    store: Arc<RootCertStore>,
    /// The file's PEM bytes, for drivers that take the bundle themselves; `None`: public roots.
    pub(crate) pem: Option<Vec<u8>>,
}

impl Roots {
    /// No roots at all, for a plaintext session that checks nothing.
    pub(crate) fn none() -> Roots {
        Roots {
            store: Arc::new(RootCertStore::empty()),
            pem: None,
        }
    }

    /// The bundle at `path`, or the public web PKI roots when there is none.
    pub(crate) fn load(path: Option<&Path>) -> Result<Roots, Error> {
        let Some(path) = path else {
            let store = RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            return Ok(Roots {
                store: Arc::new(store),
                pem: None,
            });
        };
        let refuse = |reason: String| Error::TlsCaFile {
            path: path.display().to_string(),
            reason,
        };
        let pem = fs::read(path).map_err(|e| refuse(e.to_string()))?;
        let mut store = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| refuse(format!("not PEM: {e}")))?;
            store
                .add(cert)
                .map_err(|e| refuse(format!("not a usable CA certificate: {e}")))?;
        }
        if store.is_empty() {
            return Err(refuse("it holds no PEM certificate".to_owned()));
        }
        Ok(Roots {
            store: Arc::new(store),
            pem: Some(pem),
        })
    }

    /// Whether the bundle came from a file (rather than the public roots).
    pub(crate) fn is_bundle(&self) -> bool {
        self.pem.is_some()
    }
}

/// What a mode checks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Checks {
    /// The chain must lead to a trusted root.
    pub(crate) chain: bool,
    /// The certificate must name the host that was dialled.
    pub(crate) name: bool,
}

impl Checks {
    /// The checks of `mode`; `None` for plaintext.
    pub(crate) fn of(mode: TlsMode, roots: &Roots) -> Option<Checks> {
        match mode {
            TlsMode::Disable => None,
            TlsMode::Require => Some(Checks {
                chain: roots.is_bundle(),
                name: false,
            }),
            TlsMode::VerifyCa => Some(Checks {
                chain: true,
                name: false,
            }),
            TlsMode::VerifyFull => Some(Checks {
                chain: true,
                name: true,
            }),
        }
    }
}

/// A rustls client configuration that checks what `checks` asks for.
pub(crate) fn client_config(roots: &Roots, checks: Checks, target: &str) -> Result<ClientConfig, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let inner = WebPkiServerVerifier::builder_with_provider(roots.store.clone(), provider.clone())
        .build()
        .map_err(|e| Error::Tls {
            target: target.to_owned(),
            message: format!("cannot build the certificate verifier: {e}"),
        })?;
    let verifier = ModeVerifier {
        inner,
        checks,
        provider: provider.clone(),
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls {
            target: target.to_owned(),
            message: e.to_string(),
        })?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(config)
}

/// WebPKI verification with the chain or the name check switched off by mode. The handshake
/// signature is always verified, so even `require` proves the server holds the key it presents.
#[derive(Debug)]
struct ModeVerifier {
    inner: Arc<WebPkiServerVerifier>,
    checks: Checks,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for ModeVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if !self.checks.chain {
            return Ok(ServerCertVerified::assertion());
        }
        match self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // WebPKI checks the chain before the name, so a name error means the chain held.
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.checks.name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Why a TLS handshake failed, read off a driver error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The certificate does not chain to a trusted root (or is expired, revoked, malformed).
    Untrusted(String),
    /// The chain holds but the certificate names other hosts; `presented` lists them.
    Hostname {
        /// The names the certificate carries, as WebPKI lists them.
        presented: Vec<String>,
    },
    /// Another TLS failure (protocol, alert).
    Other(String),
}

/// The rustls error somewhere in `err`'s source chain, if any. `io::Error` hides its inner error
/// from `source()`, so it is opened by hand.
pub(crate) fn failure(err: &(dyn std::error::Error + 'static)) -> Option<Failure> {
    let mut next = Some(err);
    while let Some(current) = next {
        let rustls = current.downcast_ref::<rustls::Error>().or_else(|| {
            current
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(rustls) = rustls {
            return Some(classify(rustls));
        }
        next = current.source();
    }
    None
}

fn classify(err: &rustls::Error) -> Failure {
    match err {
        rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext { presented, .. }) => {
            Failure::Hostname {
                presented: presented.clone(),
            }
        }
        rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => Failure::Hostname {
            presented: Vec::new(),
        },
        rustls::Error::InvalidCertificate(other) => Failure::Untrusted(other.to_string()),
        other => Failure::Other(other.to_string()),
    }
}

/// A name the certificate carries, from WebPKI's listing (`DnsName("db.example")`,
/// `IpAddress(10.0.0.1)`), for dialling it by that name.
pub(crate) fn presented_name(presented: &[String]) -> Option<String> {
    presented.iter().find_map(|entry| {
        let inner = entry
            .strip_prefix("DnsName(")
            .or_else(|| entry.strip_prefix("IpAddress("))?
            .strip_suffix(')')?;
        let name = inner.trim_matches('"');
        (!name.is_empty() && !name.contains('*')).then(|| name.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presented_names_are_read_from_webpki_listing() {
        let listed = vec![
            "DnsName(\"*.example\")".to_owned(),
            "DnsName(\"localhost\")".to_owned(),
        ];
        assert_eq!(presented_name(&listed).as_deref(), Some("localhost"));
        let ip = vec!["IpAddress(10.0.0.1)".to_owned()];
        assert_eq!(presented_name(&ip).as_deref(), Some("10.0.0.1"));
        assert_eq!(presented_name(&["Uri(\"x\")".to_owned()]), None);
    }

    #[test]
    fn a_name_error_inside_an_io_error_is_found() {
        let rustls = rustls::Error::InvalidCertificate(CertificateError::NotValidForName);
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, rustls);
        assert_eq!(
            failure(&io),
            Some(Failure::Hostname {
                presented: Vec::new()
            })
        );
        let untrusted = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        assert!(matches!(failure(&untrusted), Some(Failure::Untrusted(_))));
        let plain = std::io::Error::other("connection reset");
        assert_eq!(failure(&plain), None);
    }

    #[test]
    fn a_missing_or_empty_bundle_is_refused_with_its_path() {
        let dir = std::env::temp_dir().join(format!("ptah-tls-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("scratch dir");
        let empty = dir.join("empty.pem");
        fs::write(&empty, "no certificate here\n").expect("write");
        for path in [dir.join("missing.pem"), empty] {
            let err = Roots::load(Some(&path)).err().expect("refused");
            assert!(matches!(err, Error::TlsCaFile { .. }), "{err}");
            assert!(err.to_string().contains(&path.display().to_string()), "{err}");
        }
        assert!(!Roots::load(None).expect("public roots").is_bundle());
    }
}
