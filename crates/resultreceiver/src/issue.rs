//! The short-lived client certificate of one enrolled operation, signed by the result CA.
//!
//! Whatever the CSR asks for is ignored but its key: the certificate names exactly one URI SAN
//! (the binding), may only authenticate a TLS client, and expires with the operation (at most
//! [`MAX_CLIENT_LIFETIME_SECONDS`] after issuance).

use std::fmt;

use jiff::Timestamp;
use ptah_resultdelivery::ResultBinding;
use rcgen::{
    CertificateParams, CertificateSigningRequestParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose,
    IsCa, Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, PublicKeyData as _, SanType,
};
use rustls_pki_types::{CertificateDer, CertificateSigningRequestDer, pem::PemObject as _};

/// The longest life of a client certificate.
pub const MAX_CLIENT_LIFETIME_SECONDS: i64 = 2 * 3600;

/// How far before issuance a certificate is valid, for clocks a little behind.
pub const BACKDATE_SECONDS: i64 = 60;

/// The largest CSR read (a P-256 CSR is about 250 bytes; a few SANs a runner should not ask for fit).
pub const MAX_CSR_BYTES: usize = 4096;

/// The common name every client certificate carries; the binding is in the SAN.
pub const CLIENT_COMMON_NAME: &str = "ptah-result-client";

/// Why a client certificate was not issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    /// The result CA's files do not make a CA and its key.
    #[error("the result CA cannot sign: {0}")]
    Ca(String),
    /// The CSR is larger than [`MAX_CSR_BYTES`].
    #[error("the CSR is {0} bytes, more than {MAX_CSR_BYTES}")]
    CsrTooLarge(usize),
    /// The CSR does not parse or its signature does not verify.
    #[error("the CSR is not a signed certification request")]
    Csr,
    /// The CSR's key is not ECDSA P-256.
    #[error("the CSR's key is not ECDSA P-256")]
    KeyType,
    /// The binding does not make a URI.
    #[error(transparent)]
    Binding(#[from] ptah_resultdelivery::BindingError),
    /// The validity window is empty or not a certificate time.
    #[error("no validity from {now} until {not_after}")]
    Validity {
        /// Issuance time.
        now: Timestamp,
        /// The requested end.
        not_after: Timestamp,
    },
    /// rcgen refused to sign.
    #[error("signing failed: {0}")]
    Sign(String),
}

/// The result CA: its certificate and the key it signs with. `Debug` never prints the key.
pub struct ResultCa {
    issuer: Issuer<'static, KeyPair>,
    cert_der: CertificateDer<'static>,
}

impl fmt::Debug for ResultCa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultCa")
            .field("cert_der_bytes", &self.cert_der.len())
            .field("key", &"<redacted>")
            .finish()
    }
}

impl ResultCa {
    /// Loads the CA from its PEM certificate and PKCS#8 PEM key (the mounted Secret's files).
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, IssueError> {
        let key = KeyPair::from_pem(key_pem).map_err(|e| IssueError::Ca(format!("key: {e}")))?;
        let der = rustls_pki_types::pem::PemObject::from_pem_slice(cert_pem.as_bytes())
            .map_err(|e| IssueError::Ca(format!("certificate: {e}")))?;
        let issuer =
            Issuer::from_ca_cert_der(&der, key).map_err(|e| IssueError::Ca(format!("certificate: {e}")))?;
        Ok(ResultCa {
            issuer,
            cert_der: der,
        })
    }

    /// Loads the CA that signs from a bundle (old and new CAs during a rotation): the certificate
    /// of the bundle whose public key is `key_pem`'s.
    pub fn from_bundle(bundle_pem: &str, key_pem: &str) -> Result<Self, IssueError> {
        let key = KeyPair::from_pem(key_pem).map_err(|e| IssueError::Ca(format!("key: {e}")))?;
        let public = key.der_bytes().to_vec();
        let certs = CertificateDer::pem_slice_iter(bundle_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| IssueError::Ca(format!("bundle: {e}")))?;
        let der = certs
            .into_iter()
            .find(|der| {
                x509_parser::parse_x509_certificate(der).is_ok_and(|(_, cert)| {
                    cert.public_key().subject_public_key.data.as_ref() == public.as_slice()
                })
            })
            .ok_or_else(|| IssueError::Ca("the key belongs to no certificate of the bundle".to_owned()))?;
        let issuer =
            Issuer::from_ca_cert_der(&der, key).map_err(|e| IssueError::Ca(format!("certificate: {e}")))?;
        Ok(ResultCa {
            issuer,
            cert_der: der,
        })
    }

    /// The CA certificate, DER.
    pub fn certificate(&self) -> &CertificateDer<'static> {
        &self.cert_der
    }
}

/// Signs the client certificate of `binding` for the key of `csr`, valid from
/// [`BACKDATE_SECONDS`] before `now` until `not_after` or [`MAX_CLIENT_LIFETIME_SECONDS`] after
/// `now`, whichever comes first.
pub fn issue_client(
    ca: &ResultCa,
    csr: &[u8],
    binding: &ResultBinding,
    now: Timestamp,
    not_after: Timestamp,
) -> Result<CertificateDer<'static>, IssueError> {
    if csr.len() > MAX_CSR_BYTES {
        return Err(IssueError::CsrTooLarge(csr.len()));
    }
    let request = CertificateSigningRequestParams::from_der(&CertificateSigningRequestDer::from(csr))
        .map_err(|_| IssueError::Csr)?;
    let key = &request.public_key;
    // The signature verified with this key; an uncompressed P-256 point is 65 bytes.
    let raw = key.der_bytes();
    if key.algorithm() != &PKCS_ECDSA_P256_SHA256 || raw.len() != 65 || raw.first() != Some(&4) {
        return Err(IssueError::KeyType);
    }
    let uri = binding.to_uri()?;
    let invalid = || IssueError::Validity { now, not_after };
    let end = not_after
        .as_second()
        .min(now.as_second() + MAX_CLIENT_LIFETIME_SECONDS);
    if end <= now.as_second() {
        return Err(invalid());
    }
    let time = |secs: i64| {
        x509_parser::time::ASN1Time::from_timestamp(secs)
            .map(|t| t.to_datetime())
            .map_err(|_| invalid())
    };
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, CLIENT_COMMON_NAME);
    params.distinguished_name = dn;
    params.subject_alt_names = vec![SanType::URI(
        uri.try_into().map_err(|e| IssueError::Sign(format!("{e}")))?,
    )];
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.not_before = time(now.as_second() - BACKDATE_SECONDS)?;
    params.not_after = time(end)?;
    params.use_authority_key_identifier_extension = true;
    let cert = params
        .signed_by(key, &ca.issuer)
        .map_err(|e| IssueError::Sign(e.to_string()))?;
    Ok(cert.der().clone())
}
