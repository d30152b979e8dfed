//! The TLS registry's files: a throw-away CA and a server certificate for the registry
//! container's name (how nodes and Pods reach it), `localhost` and 127.0.0.1 (how the host
//! reaches its published port), made with rcgen like services/tls.rs; a bcrypt htpasswd line;
//! and the health probe.

use std::{
    fs,
    path::Path,
    process::Command,
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::Context;
use ptah_testservices::Password;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, date_time_ymd,
};

use super::{containers::REGISTRY_USER, secrets::write_private};
use crate::services::process;

/// PEM texts of the CA and the server certificate + key it signed.
pub struct ServerPki {
    /// The CA certificate clients trust.
    pub ca_pem: String,
    /// The server certificate.
    pub cert_pem: String,
    /// The server's private key; `Debug` is not derived for this struct.
    pub key_pem: String,
}

/// The server certificate's subject alternative names.
pub fn sans(container: &str) -> Vec<String> {
    vec![
        container.to_owned(),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
    ]
}

/// Issues a fresh CA and a server certificate for `sans`, valid from last year to two years ahead.
pub fn issue(sans: Vec<String>) -> anyhow::Result<ServerPki> {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let year = 1970 + i32::try_from(secs / 31_556_952).unwrap_or(0);
    let mut ca = CertificateParams::default();
    ca.distinguished_name
        .push(DnType::CommonName, "ptah-operator kind registry CA");
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
        .context("cannot sign the registry's certificate")?;
    Ok(ServerPki {
        ca_pem: ca.pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// `htpasswd -B -i -n ptah` (bcrypt, the password on stdin): the host's when it has one, else
/// the one in the httpd image.
pub fn htpasswd_command(on_host: bool) -> Command {
    let mut cmd = if on_host {
        Command::new("htpasswd")
    } else {
        let mut docker = Command::new("docker");
        docker.args([
            "run",
            "--rm",
            "-i",
            "--entrypoint",
            "htpasswd",
            "httpd:2.4-alpine",
        ]);
        docker
    };
    cmd.args(["-B", "-i", "-n", REGISTRY_USER]);
    cmd
}

/// Writes `ca.pem`, `server.pem`, `server.key` (0600) and `htpasswd` (0600) into `dir`.
pub fn write_files(dir: &Path, container: &str, password: &Password) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let pki = issue(sans(container))?;
    fs::write(dir.join("ca.pem"), &pki.ca_pem).context("cannot write ca.pem")?;
    fs::write(dir.join("server.pem"), &pki.cert_pem).context("cannot write server.pem")?;
    write_private(&dir.join("server.key"), &pki.key_pem)?;
    let on_host = Command::new("htpasswd").arg("-h").output().is_ok();
    let line = process::output_with_stdin(&mut htpasswd_command(on_host), password.expose().as_bytes())
        .context("cannot hash the registry password")?;
    write_private(&dir.join("htpasswd"), &format!("{}\n", line.trim_end()))
}

/// `curl … https://127.0.0.1:<port>/v2/` verified with the CA; the credentials, when given, go
/// on stdin (`-K -`).
pub fn probe_command(ca: &Path, port: u16, with_credentials: bool) -> Command {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "5",
        "--cacert",
    ])
    .arg(ca);
    if with_credentials {
        cmd.args(["-K", "-"]);
    }
    cmd.arg(format!("https://127.0.0.1:{port}/v2/"));
    cmd
}

/// curl's config text carrying the credentials.
pub fn curl_credentials(password: &Password) -> String {
    format!("user = \"{REGISTRY_USER}:{}\"\n", password.expose())
}

/// 200 with the credentials and 401 without.
pub fn healthy(ca: &Path, port: u16, password: &Password) -> bool {
    let status = |with: bool, input: &str| {
        process::output_with_stdin(&mut probe_command(ca, port, with), input.as_bytes()).unwrap_or_default()
    };
    status(true, &curl_credentials(password)) == "200" && status(false, "") == "401"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::describe;

    #[test]
    fn the_certificate_names_the_container_and_the_host_side() {
        assert_eq!(
            sans("ptah-1-35-registry"),
            ["ptah-1-35-registry", "localhost", "127.0.0.1"]
        );
        let pki = issue(sans("ptah-1-35-registry")).expect("issue");
        assert!(pki.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(pki.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
    }

    #[test]
    fn the_password_never_reaches_a_command_line() {
        let password = Password::new("s3cretS3cret");
        for on_host in [true, false] {
            let line = describe(&htpasswd_command(on_host));
            assert!(
                line.contains("htpasswd") && line.ends_with(" -B -i -n ptah"),
                "{line}"
            );
            assert!(!line.contains(password.expose()));
        }
        let probe = describe(&probe_command(Path::new("/d/ca.pem"), 40000, true));
        assert!(
            probe.contains("--cacert /d/ca.pem -K - https://127.0.0.1:40000/v2/"),
            "{probe}"
        );
        assert!(curl_credentials(&password).contains("ptah:s3cretS3cret"));
    }
}
