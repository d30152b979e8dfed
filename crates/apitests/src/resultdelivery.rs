//! Durable result delivery in the e2e suites (docs/security.md, "Durable result delivery"):
//! which path a suite's manager takes, and for a manager run on the host the key material and
//! flags that the chart's cert rotator and Service provide in a release.
//!
//! `PTAH_E2E_RESULT_DELIVERY` is `durable` (the default, as the chart's `resultDelivery.enabled`)
//! or `log`, the weaker path through Pod logs that a release with delivery disabled takes; any
//! other value fails the suite naming the variable.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};

use crate::workspace_root;

/// The variable that picks the path.
pub const MODE_ENV: &str = "PTAH_E2E_RESULT_DELIVERY";

/// Whether this run's managers deliver results durably.
pub fn durable() -> bool {
    match std::env::var(MODE_ENV).ok().as_deref() {
        Some("log") => false,
        None | Some("") | Some("durable") => true,
        Some(other) => panic!("{MODE_ENV}={other:?}: use `durable` or `log`"),
    }
}

/// The chart values of this run's releases of this checkout's chart.
pub fn chart_sets() -> Vec<String> {
    if durable() {
        vec!["resultDelivery.enabled=true".to_owned()]
    } else {
        Vec::new()
    }
}

/// The flags of a manager run on the host for `name`, delivering durably when `durable`: Pods
/// reach its receiver at the pod network's gateway (`gateway`, an address on this host), on a free
/// port, with a result CA and a serving certificate for that address written under
/// `target/e2e/result-tls/<name>`. Empty on the log path.
pub fn host_manager_args(name: &str, gateway: &str, durable: bool) -> Vec<String> {
    if !durable {
        return Vec::new();
    }
    let dir = workspace_root().join("target/e2e/result-tls").join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    write_material(&dir, gateway);
    let port = std::net::TcpListener::bind("0.0.0.0:0")
        .and_then(|l| l.local_addr())
        .expect("a free port for the result receiver")
        .port();
    vec![
        format!("--result-endpoint={gateway}:{port}"),
        format!("--result-server-name={gateway}"),
        format!("--result-tls-dir={}", dir.display()),
        format!("--result-addr=0.0.0.0:{port}"),
    ]
}

/// What `ptah-cert-rotator` writes: `ca.crt`, `ca.key`, and a serving pair for `server_name` (a
/// DNS name or an IP address).
pub fn write_material(dir: &Path, server_name: &str) -> PathBuf {
    let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca.self_signed(&ca_key).expect("ca");
    let issuer = Issuer::new(ca, &ca_key);
    let leaf_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).expect("key");
    let leaf = CertificateParams::new(vec![server_name.to_owned()])
        .expect("params")
        .signed_by(&leaf_key, &issuer)
        .expect("leaf");
    for (file, text) in [
        ("ca.crt", ca_cert.pem()),
        ("ca.key", ca_key.serialize_pem()),
        ("tls.crt", leaf.pem()),
        ("tls.key", leaf_key.serialize_pem()),
    ] {
        std::fs::write(dir.join(file), text).unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()));
    }
    dir.to_owned()
}
