//! Parse the Secret's files into the facts a decision needs; pure, and total over any bytes.

use std::{collections::BTreeSet, fmt, net::IpAddr};

use rcgen::KeyPair;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};
use x509_parser::{certificate::X509Certificate, extensions::GeneralName, prelude::FromDer as _};

use crate::{San, TlsFiles};

/// One of the Secret's four files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `tls.crt`.
    TlsCrt,
    /// `tls.key`.
    TlsKey,
    /// `ca.crt`.
    CaCrt,
    /// `ca.key`.
    CaKey,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::TlsCrt => crate::TLS_CRT,
            Field::TlsKey => crate::TLS_KEY,
            Field::CaCrt => crate::CA_CRT,
            Field::CaKey => crate::CA_KEY,
        })
    }
}

/// What is wrong with the Secret's contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    /// The key is absent or empty.
    Missing(Field),
    /// The file holds no parseable PEM certificate or key.
    Unparseable(Field),
    /// `tls.key` is not the private key of `tls.crt`.
    ServingKeyMismatch,
    /// No certificate in `ca.crt` signed `tls.crt`.
    ServingNotSignedByBundle,
    /// `ca.key` matches no certificate in `ca.crt`.
    CaKeyMatchesNoCa,
    /// The serving certificate has expired: nothing in the Secret is worth keeping trusted.
    ServingExpired,
}

impl fmt::Display for Defect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Defect::Missing(field) => write!(f, "{field} is missing"),
            Defect::Unparseable(field) => write!(f, "{field} is not parseable PEM"),
            Defect::ServingKeyMismatch => f.write_str("tls.key does not belong to tls.crt"),
            Defect::ServingNotSignedByBundle => f.write_str("no CA in ca.crt signed tls.crt"),
            Defect::CaKeyMatchesNoCa => f.write_str("ca.key belongs to no certificate in ca.crt"),
            Defect::ServingExpired => f.write_str("the serving certificate has expired"),
        }
    }
}

/// One CA certificate of the bundle.
#[derive(Clone, Debug)]
pub(crate) struct CaCert {
    /// Its DER.
    pub der: Vec<u8>,
    /// Validity start, Unix seconds.
    pub not_before: i64,
    /// Validity end, Unix seconds.
    pub not_after: i64,
}

/// The serving certificate's facts.
#[derive(Clone, Debug)]
pub(crate) struct Leaf {
    /// Validity start, Unix seconds.
    pub not_before: i64,
    /// Validity end, Unix seconds.
    pub not_after: i64,
    /// Its SANs.
    pub sans: BTreeSet<San>,
    /// Index in the bundle of the CA whose signature it carries.
    pub issuer: usize,
}

/// The parsed Secret: bundle, serving certificate, and which CA `ca.key` can sign as.
#[derive(Clone, Debug)]
pub(crate) struct Inspection {
    /// `ca.crt`, in order.
    pub bundle: Vec<CaCert>,
    /// Index in the bundle of the CA `ca.key` belongs to, or why there is none.
    pub signing: Result<usize, Defect>,
    /// `tls.crt`.
    pub leaf: Leaf,
}

fn present(bytes: &Option<Vec<u8>>, field: Field) -> Result<&[u8], Defect> {
    match bytes {
        Some(b) if !b.is_empty() => Ok(b),
        _ => Err(Defect::Missing(field)),
    }
}

fn certificates(bytes: &[u8], field: Field) -> Result<Vec<Vec<u8>>, Defect> {
    let certs: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(bytes)
        .map(|c| c.map(|c| c.as_ref().to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|_| Defect::Unparseable(field))?;
    // Every block must also be a certificate x509-parser accepts, or later reads would fail.
    if certs.is_empty() || certs.iter().any(|der| X509Certificate::from_der(der).is_err()) {
        return Err(Defect::Unparseable(field));
    }
    Ok(certs)
}

/// Parses a PEM private key (PKCS#8, SEC1 or PKCS#1) into a key rcgen can sign with.
pub(crate) fn key_pair(bytes: &[u8], field: Field) -> Result<KeyPair, Defect> {
    let der = PrivateKeyDer::from_pem_slice(bytes).map_err(|_| Defect::Unparseable(field))?;
    KeyPair::try_from(&der).map_err(|_| Defect::Unparseable(field))
}

fn parse(der: &[u8]) -> Option<X509Certificate<'_>> {
    X509Certificate::from_der(der).ok().map(|(_, c)| c)
}

fn sans_of(cert: &X509Certificate<'_>) -> BTreeSet<San> {
    let Ok(Some(ext)) = cert.subject_alternative_name() else {
        return BTreeSet::new();
    };
    ext.value
        .general_names
        .iter()
        .filter_map(|name| match name {
            GeneralName::DNSName(d) => Some(San::Dns(d.to_ascii_lowercase())),
            GeneralName::IPAddress(b) => match b.len() {
                4 => <[u8; 4]>::try_from(*b).ok().map(|a| San::Ip(IpAddr::from(a))),
                16 => <[u8; 16]>::try_from(*b).ok().map(|a| San::Ip(IpAddr::from(a))),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Parses and cross-checks the files; any inconsistency that makes the serving pair untrustworthy is a `Defect`.
pub(crate) fn inspect(files: &TlsFiles) -> Result<Inspection, Defect> {
    let bundle_ders = certificates(present(&files.ca_crt, Field::CaCrt)?, Field::CaCrt)?;
    let leaf_ders = certificates(present(&files.tls_crt, Field::TlsCrt)?, Field::TlsCrt)?;
    let leaf_key = key_pair(present(&files.tls_key, Field::TlsKey)?, Field::TlsKey)?;

    let leaf_der = leaf_ders.first().ok_or(Defect::Unparseable(Field::TlsCrt))?;
    let leaf = parse(leaf_der).ok_or(Defect::Unparseable(Field::TlsCrt))?;
    if leaf.public_key().subject_public_key.data.as_ref() != leaf_key.public_key_raw() {
        return Err(Defect::ServingKeyMismatch);
    }
    let bundle: Vec<(CaCert, X509Certificate<'_>)> = bundle_ders
        .iter()
        .filter_map(|der| {
            let cert = parse(der)?;
            let facts = CaCert {
                der: der.clone(),
                not_before: cert.validity().not_before.timestamp(),
                not_after: cert.validity().not_after.timestamp(),
            };
            Some((facts, cert))
        })
        .collect();
    let issuer = bundle
        .iter()
        .position(|(_, ca)| {
            leaf.issuer() == ca.subject() && leaf.verify_signature(Some(ca.public_key())).is_ok()
        })
        .ok_or(Defect::ServingNotSignedByBundle)?;
    let signing = match present(&files.ca_key, Field::CaKey).and_then(|b| key_pair(b, Field::CaKey)) {
        Err(defect) => Err(defect),
        Ok(ca_key) => bundle
            .iter()
            .position(|(_, ca)| ca.public_key().subject_public_key.data.as_ref() == ca_key.public_key_raw())
            .ok_or(Defect::CaKeyMatchesNoCa),
    };
    Ok(Inspection {
        signing,
        leaf: Leaf {
            not_before: leaf.validity().not_before.timestamp(),
            not_after: leaf.validity().not_after.timestamp(),
            sans: sans_of(&leaf),
            issuer,
        },
        bundle: bundle.into_iter().map(|(facts, _)| facts).collect(),
    })
}
