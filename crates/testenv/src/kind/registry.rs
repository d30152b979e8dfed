//! The TLS registry's files: a throw-away CA and a server certificate for the registry
//! container's name (how nodes and Pods reach it), `localhost` and 127.0.0.1 (how the host
//! reaches its published port), issued by services/tls.rs; a bcrypt htpasswd line;
//! and the health probe.

use std::{fs, path::Path, process::Command};

use anyhow::Context;
use ptah_testservices::Password;

use super::{containers::REGISTRY_USER, secrets::write_private};
use crate::services::{process, tls};

/// The server certificate's subject alternative names.
pub fn sans(container: &str) -> Vec<String> {
    vec![
        container.to_owned(),
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
    ]
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
    let pki = tls::issue_for("ptah-operator kind registry CA", sans(container))?;
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
        let pki = tls::issue_for("ca", sans("ptah-1-35-registry")).expect("issue");
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
