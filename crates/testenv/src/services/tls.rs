//! A throw-away CA and a server certificate for 127.0.0.1, localhost and the pod network's
//! gateway (rcgen, ECDSA P-256): Pods reach the registry through the pod relay at that address
//! and verify it by IP.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, date_time_ymd,
};

/// PEM texts of a CA certificate and a server certificate + key it signed.
pub struct ServerPki {
    /// The CA certificate clients trust.
    pub ca_pem: String,
    /// The server certificate.
    pub cert_pem: String,
    /// The server's PKCS#8 private key.
    pub key_pem: String,
}

/// The server certificate's subject alternative names. A registry whose certificate was issued
/// for another list is reissued (`Registry::healthy` compares them).
pub fn sans() -> Vec<String> {
    vec![
        "127.0.0.1".to_owned(),
        "localhost".to_owned(),
        crate::cluster::relay::GATEWAY.to_string(),
    ]
}

/// Issues a fresh CA and a server certificate for [`sans`].
pub fn issue() -> anyhow::Result<ServerPki> {
    issue_for("ptah-operator test services CA", sans())
}

/// Issues a fresh CA named `ca_name` and a server certificate for `sans`, both valid from last
/// year to two years ahead.
pub fn issue_for(ca_name: &str, sans: Vec<String>) -> anyhow::Result<ServerPki> {
    let year = current_year();
    let mut ca = CertificateParams::default();
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.not_before = date_time_ymd(year - 1, 1, 1);
    ca.not_after = date_time_ymd(year + 2, 1, 1);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?).context("cannot sign the CA")?;

    let mut server = CertificateParams::new(sans)?;
    server.distinguished_name.push(DnType::CommonName, "localhost");
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.use_authority_key_identifier_extension = true;
    server.not_before = date_time_ymd(year - 1, 1, 1);
    server.not_after = date_time_ymd(year + 2, 1, 1);
    let key = KeyPair::generate()?;
    let cert = server
        .signed_by(&key, &ca)
        .context("cannot sign the server certificate")?;
    Ok(ServerPki {
        ca_pem: ca.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// The SANs of the database servers' certificates: `localhost` and the pod network's gateway,
/// but not `127.0.0.1`, so that dialling by address is a real wrong-host case for tests.
pub fn database_sans() -> Vec<String> {
    vec!["localhost".to_owned(), crate::cluster::relay::GATEWAY.to_string()]
}

/// Issues a CA and a database server certificate into `dir` as `ca.pem`, `server.pem` and
/// `server.key` (mode 0600).
pub fn write_database_pki(dir: &std::path::Path, ca_name: &str) -> anyhow::Result<()> {
    let pki = issue_for(ca_name, database_sans())?;
    std::fs::write(dir.join("ca.pem"), pki.ca_pem)?;
    std::fs::write(dir.join("server.pem"), pki.cert_pem)?;
    super::secret::write(&dir.join("server.key"), &pki.key_pem)
}

/// The current UTC year, close enough for a validity window that spans years.
fn current_year() -> i32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // 365.2425 days per year.
    let years = secs / 31_556_952;
    1970 + i32::try_from(years).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_pem_ca_certificate_and_key() {
        let pki = issue().expect("issue");
        assert!(pki.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_ne!(pki.ca_pem, pki.cert_pem);
        assert!(sans().contains(&"10.244.77.1".to_owned()));
    }

    #[test]
    fn the_year_is_plausible() {
        let year = current_year();
        assert!((2025..2200).contains(&year), "{year}");
    }
}
