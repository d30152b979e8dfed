//! Issue CAs and serving certificates (rcgen, ECDSA P-256), and turn an action into the Secret's new files.

use std::{collections::BTreeSet, fmt};

use jiff::Timestamp;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
    KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, SanType,
};
use rustls_pki_types::{CertificateDer, pem::PemObject as _};
use x509_parser::time::ASN1Time;

use crate::{
    Action, CertRotationError, Defect, RotationConfig, San, TlsFiles,
    decide::{BACKDATE, secs},
    inspect::{Field, inspect, key_pair},
    material::certificates_pem,
};

/// A certificate and its private key, both PEM; `Debug` never prints the key.
#[derive(Clone)]
pub struct KeyedCert {
    /// The certificate, one PEM block.
    pub cert_pem: Vec<u8>,
    /// The private key, PKCS#8 PEM.
    pub key_pem: Vec<u8>,
}

impl fmt::Debug for KeyedCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyedCert")
            .field("cert_pem_bytes", &self.cert_pem.len())
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

fn asn1_time(t: Timestamp) -> Result<ASN1Time, CertRotationError> {
    ASN1Time::from_timestamp(t.as_second())
        .map_err(|e| CertRotationError::Config(format!("{t} cannot be a certificate time: {e}")))
}

fn validity(
    params: &mut CertificateParams,
    not_before: Timestamp,
    not_after: Timestamp,
) -> Result<(), CertRotationError> {
    if not_after <= not_before {
        return Err(CertRotationError::Config(format!(
            "a certificate valid from {not_before} must end after it, not at {not_after}"
        )));
    }
    params.not_before = asn1_time(not_before)?.to_datetime();
    params.not_after = asn1_time(not_after)?.to_datetime();
    Ok(())
}

fn keyed(cert: &rcgen::Certificate, key: &KeyPair) -> KeyedCert {
    KeyedCert {
        cert_pem: cert.pem().into_bytes(),
        key_pem: key.serialize_pem().into_bytes(),
    }
}

/// A self-signed CA valid from `not_before` to `not_after` that may sign end-entity certificates only.
pub fn issue_ca(not_before: Timestamp, not_after: Timestamp) -> Result<KeyedCert, CertRotationError> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    // A distinct subject per CA keeps old and new apart in logs and in the API server's chain building.
    let mut dn = DistinguishedName::new();
    dn.push(
        DnType::CommonName,
        format!("ptah-operator-webhook-ca-{}", not_before.as_second()),
    );
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut params, not_before, not_after)?;
    let cert = params.self_signed(&key)?;
    Ok(keyed(&cert, &key))
}

/// A serving certificate for `sans`, signed by `ca`, valid from `not_before` to `not_after`.
pub fn issue_serving(
    ca: &KeyedCert,
    sans: &BTreeSet<San>,
    not_before: Timestamp,
    not_after: Timestamp,
) -> Result<KeyedCert, CertRotationError> {
    let ca_key = key_pair(&ca.key_pem, Field::CaKey).map_err(|d| CertRotationError::Config(d.to_string()))?;
    let ca_der = CertificateDer::from_pem_slice(&ca.cert_pem)
        .map_err(|_| CertRotationError::Config(Defect::Unparseable(Field::CaCrt).to_string()))?;
    let issuer = Issuer::from_ca_cert_der(&ca_der, &ca_key)?;
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.subject_alt_names = sans
        .iter()
        .map(|san| match san {
            San::Dns(name) => Ok(SanType::DnsName(name.clone().try_into()?)),
            San::Ip(ip) => Ok(SanType::IpAddress(*ip)),
        })
        .collect::<Result<_, rcgen::Error>>()?;
    let mut dn = DistinguishedName::new();
    if let Some(San::Dns(first)) = sans.iter().find(|s| matches!(s, San::Dns(_))) {
        dn.push(DnType::CommonName, first.clone());
    }
    params.distinguished_name = dn;
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    validity(&mut params, not_before, not_after)?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok(keyed(&cert, &key))
}

fn plus(t: Timestamp, seconds: i64) -> Timestamp {
    crate::decide::timestamp(t.as_second().saturating_add(seconds))
}

fn new_ca(now: Timestamp, config: &RotationConfig) -> Result<KeyedCert, CertRotationError> {
    issue_ca(plus(now, -secs(BACKDATE)), plus(now, secs(config.ca_validity)))
}

/// A serving certificate under `ca`, ending no later than the CA itself (a chain is only as valid as its root).
fn new_serving(
    ca: &KeyedCert,
    ca_not_after: i64,
    now: Timestamp,
    config: &RotationConfig,
) -> Result<KeyedCert, CertRotationError> {
    let end = now
        .as_second()
        .saturating_add(secs(config.cert_validity))
        .min(ca_not_after);
    issue_serving(
        ca,
        &config.expected_sans(),
        plus(now, -secs(BACKDATE)),
        crate::decide::timestamp(end),
    )
}

/// The Secret's files after carrying out `action` on `current`; `None` when it writes nothing.
///
/// Randomness (keys) lives here, not in [`crate::decide`], so decisions stay reproducible.
pub fn execute(
    action: &Action,
    current: Option<&TlsFiles>,
    now: Timestamp,
    config: &RotationConfig,
) -> Result<Option<TlsFiles>, CertRotationError> {
    let fresh = || -> Result<TlsFiles, CertRotationError> {
        let ca = new_ca(now, config)?;
        let serving = new_serving(&ca, plus(now, secs(config.ca_validity)).as_second(), now, config)?;
        Ok(TlsFiles {
            tls_crt: Some(serving.cert_pem),
            tls_key: Some(serving.key_pem),
            ca_crt: Some(ca.cert_pem),
            ca_key: Some(ca.key_pem),
        })
    };
    if action.starts_over() {
        return fresh().map(Some);
    }
    if !action.writes() {
        return Ok(None);
    }
    let files = current.ok_or(CertRotationError::Inconsistent(
        "a rotation step without a Secret",
    ))?;
    let found = inspect(files)
        .map_err(|_| CertRotationError::Inconsistent("a rotation step on a defective Secret"))?;
    let mut next = files.clone();
    match action {
        Action::StageCa(_) => {
            let ca = new_ca(now, config)?;
            let served_by = found
                .bundle
                .get(found.leaf.issuer)
                .ok_or(CertRotationError::Inconsistent(
                    "serving issuer outside the bundle",
                ))?;
            // Signing CA first; the CA of the certificate being served stays until the switch has propagated.
            let mut bundle = ca.cert_pem.clone();
            bundle.extend(certificates_pem([served_by.der.as_slice()]));
            next.ca_crt = Some(bundle);
            next.ca_key = Some(ca.key_pem);
        }
        Action::ReissueServing(_) => {
            let signing = found
                .signing
                .ok()
                .and_then(|i| found.bundle.get(i))
                .ok_or(CertRotationError::Inconsistent("re-issue without a signing CA"))?;
            let ca = KeyedCert {
                cert_pem: certificates_pem([signing.der.as_slice()]),
                key_pem: files.ca_key.clone().unwrap_or_default(),
            };
            let serving = new_serving(&ca, signing.not_after, now, config)?;
            next.tls_crt = Some(serving.cert_pem);
            next.tls_key = Some(serving.key_pem);
        }
        Action::WithdrawOldCa => {
            let signing = found
                .signing
                .ok()
                .and_then(|i| found.bundle.get(i))
                .ok_or(CertRotationError::Inconsistent("withdrawal without a signing CA"))?;
            next.ca_crt = Some(certificates_pem([signing.der.as_slice()]));
        }
        Action::Create | Action::Recover(_) | Action::Wait { .. } | Action::Keep { .. } => {
            return Err(CertRotationError::Inconsistent("unreachable action"));
        }
    }
    Ok(Some(next))
}
