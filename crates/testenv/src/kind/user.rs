//! The unprivileged user of a kind cluster, made the way a person gets one: a key and a
//! certificate signing request generated here (rcgen, CN [`USER_NAME`], no organisation, so no
//! group but `system:authenticated`), a `certificates.k8s.io/v1` CertificateSigningRequest for
//! the `kubernetes.io/kube-apiserver-client` signer, `kubectl certificate approve`, and the issued
//! `status.certificate` written into `user.kubeconfig` with the cluster's CA.

use std::{
    path::Path,
    process::Command,
    thread::sleep,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use base64::{Engine, engine::general_purpose::STANDARD};
use rcgen::{CertificateParams, DnType, KeyPair};
use serde_json::{Value, json};

use super::secrets::write_private;
use crate::{
    cluster::{kubeconfig, pki::USER_NAME},
    services::process,
    step::output,
};

/// The CertificateSigningRequest's name.
pub const CSR_NAME: &str = USER_NAME;
/// The signer that issues client certificates the API server accepts.
pub const SIGNER: &str = "kubernetes.io/kube-apiserver-client";
/// The certificate's lifetime; `provide` issues a fresh one each time it runs.
const EXPIRATION_SECONDS: u64 = 7 * 24 * 3600;

/// A private key and the CSR it signed (no `Debug`: it holds the key).
pub struct Request {
    /// The PKCS#8 private key.
    pub key_pem: String,
    /// The PKCS#10 request.
    pub csr_pem: String,
}

/// Generates a key (ECDSA P-256) and a CSR with CN [`USER_NAME`].
pub fn request() -> anyhow::Result<Request> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    params.distinguished_name.push(DnType::CommonName, USER_NAME);
    let csr = params.serialize_request(&key).context("cannot sign the CSR")?;
    Ok(Request {
        key_pem: key.serialize_pem(),
        csr_pem: csr.pem().context("cannot encode the CSR")?,
    })
}

/// The CertificateSigningRequest object for `csr_pem`.
pub fn csr_object(csr_pem: &str) -> Value {
    json!({
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": CSR_NAME},
        "spec": {
            "request": STANDARD.encode(csr_pem),
            "signerName": SIGNER,
            "expirationSeconds": EXPIRATION_SECONDS,
            "usages": ["digital signature", "client auth"],
        },
    })
}

/// `kubectl --kubeconfig=<admin> <args…>`.
pub fn kubectl(program: &Path, admin: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.arg(format!("--kubeconfig={}", admin.display())).args(args);
    cmd
}

/// The commands of the flow, in order: delete a previous request, create (object on stdin),
/// approve, and read the issued certificate.
pub fn flow_commands(program: &Path, admin: &Path) -> [Command; 4] {
    [
        kubectl(program, admin, &["delete", "csr", CSR_NAME, "--ignore-not-found"]),
        kubectl(program, admin, &["create", "-f", "-"]),
        kubectl(program, admin, &["certificate", "approve", CSR_NAME]),
        kubectl(
            program,
            admin,
            &["get", "csr", CSR_NAME, "-o", "jsonpath={.status.certificate}"],
        ),
    ]
}

/// Decodes `status.certificate` (base64 PEM); `None` while it is still empty.
pub fn decode_certificate(text: &str) -> anyhow::Result<Option<String>> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let pem = String::from_utf8(
        STANDARD
            .decode(text)
            .context("status.certificate is not base64")?,
    )
    .context("status.certificate is not text")?;
    if !pem.starts_with("-----BEGIN CERTIFICATE-----") {
        bail!("status.certificate is not a PEM certificate");
    }
    Ok(Some(pem))
}

/// The server and the CA (PEM) of the admin kubeconfig's current cluster.
fn cluster_access(program: &Path, admin: &Path) -> anyhow::Result<(String, String)> {
    let field = |path: &str| -> anyhow::Result<String> {
        let jsonpath = format!("jsonpath={{.clusters[0].cluster.{path}}}");
        let args = ["config", "view", "--raw", "--minify", "-o", jsonpath.as_str()];
        Ok(output(&mut kubectl(program, admin, &args))?.trim().to_owned())
    };
    let server = field("server")?;
    let ca = STANDARD
        .decode(field("certificate-authority-data")?)
        .context("the admin kubeconfig's CA is not base64")?;
    Ok((server, String::from_utf8(ca).context("the CA is not text")?))
}

/// Runs the flow against the cluster of `admin` and writes the user's kubeconfig to `dest`
/// (mode 0600). Returns the API server's address.
pub fn make(program: &Path, admin: &Path, dest: &Path) -> anyhow::Result<String> {
    let request = request()?;
    let [mut delete, mut create, mut approve, mut read] = flow_commands(program, admin);
    output(&mut delete)?;
    let object = serde_json::to_vec(&csr_object(&request.csr_pem))?;
    process::output_with_stdin(&mut create, &object)?;
    output(&mut approve)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let cert_pem = loop {
        if let Some(pem) = decode_certificate(&output(&mut read)?)? {
            break pem;
        }
        if Instant::now() > deadline {
            bail!("CertificateSigningRequest {CSR_NAME} was approved but no certificate was issued in 60 s");
        }
        sleep(Duration::from_secs(1));
    };
    let (server, ca_pem) = cluster_access(program, admin)?;
    let text = kubeconfig::render(&server, USER_NAME, &ca_pem, &cert_pem, &request.key_pem);
    write_private(dest, &text)?;
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step::describe;

    #[test]
    fn the_request_is_a_client_csr_for_the_test_user() {
        let request = request().expect("request");
        assert!(request.csr_pem.starts_with("-----BEGIN CERTIFICATE REQUEST-----"));
        assert!(request.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        let object = csr_object(&request.csr_pem);
        assert_eq!(object["apiVersion"], "certificates.k8s.io/v1");
        assert_eq!(object["kind"], "CertificateSigningRequest");
        assert_eq!(object["metadata"]["name"], USER_NAME);
        assert_eq!(
            object["spec"]["signerName"],
            "kubernetes.io/kube-apiserver-client"
        );
        let usages = object["spec"]["usages"].as_array().expect("usages");
        assert!(usages.contains(&json!("client auth")));
        let sent = STANDARD
            .decode(object["spec"]["request"].as_str().expect("request"))
            .expect("base64");
        assert_eq!(String::from_utf8(sent).expect("pem"), request.csr_pem);
    }

    #[test]
    fn the_flow_creates_approves_and_reads_status_certificate() {
        let lines: Vec<String> = flow_commands(Path::new("kubectl"), Path::new("/d/admin.kubeconfig"))
            .iter()
            .map(describe)
            .collect();
        assert_eq!(
            lines,
            [
                "kubectl --kubeconfig=/d/admin.kubeconfig delete csr ptah-test-user --ignore-not-found",
                "kubectl --kubeconfig=/d/admin.kubeconfig create -f -",
                "kubectl --kubeconfig=/d/admin.kubeconfig certificate approve ptah-test-user",
                "kubectl --kubeconfig=/d/admin.kubeconfig get csr ptah-test-user -o jsonpath={.status.certificate}",
            ]
        );
    }

    #[test]
    fn an_empty_status_means_not_yet_and_garbage_is_refused() {
        assert_eq!(decode_certificate("\n").expect("empty"), None);
        let pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        assert_eq!(
            decode_certificate(&STANDARD.encode(pem)).expect("pem").as_deref(),
            Some(pem)
        );
        assert_eq!(
            decode_certificate("!!").err().map(|e| e.to_string()),
            Some("status.certificate is not base64".to_owned())
        );
        assert_eq!(
            decode_certificate(&STANDARD.encode("hello"))
                .err()
                .map(|e| e.to_string()),
            Some("status.certificate is not a PEM certificate".to_owned())
        );
    }
}
