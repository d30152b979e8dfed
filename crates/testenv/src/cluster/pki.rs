//! The cluster's PKI, generated in Rust (rcgen, ECDSA P-256): one CA, the API server's serving
//! certificate, client certificates for the admin, an unprivileged user, the controller manager,
//! the scheduler, kube-proxy, the kubelet and the isolation worker's kubelet (client and serving each) and the API server's kubelet client, plus the
//! service-account signing key pair.

use std::{
    fs,
    os::unix::fs::OpenOptionsExt,
    path::Path,
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, date_time_ymd,
};

/// Names under which the files are written in the PKI dir.
pub const CA: &str = "ca";
/// The API server's serving certificate.
pub const APISERVER: &str = "apiserver";
/// The API server's client certificate towards kubelets (logs, exec).
pub const APISERVER_KUBELET_CLIENT: &str = "apiserver-kubelet-client";
/// `system:masters`.
pub const ADMIN: &str = "admin";
/// A person with no group beyond `system:authenticated`.
pub const USER: &str = "user";
/// `system:kube-controller-manager`.
pub const CONTROLLER_MANAGER: &str = "controller-manager";
/// `system:kube-scheduler`.
pub const SCHEDULER: &str = "scheduler";
/// `system:kube-proxy`, which the default RBAC binds to `system:node-proxier`.
pub const KUBE_PROXY: &str = "kube-proxy";
/// `system:node:<node>` in `system:nodes`.
pub const KUBELET: &str = "kubelet";
/// The kubelet's serving certificate.
pub const KUBELET_SERVING: &str = "kubelet-serving";
/// The isolation worker's kubelet: `system:node:<isolation node>` in `system:nodes`.
pub const ISOLATION_KUBELET: &str = "isolation-kubelet";
/// The isolation worker's kubelet serving certificate.
pub const ISOLATION_KUBELET_SERVING: &str = "isolation-kubelet-serving";
/// The service-account signing key (`sa.key`) and its public half (`sa.pub`).
pub const SERVICE_ACCOUNT: &str = "sa";

/// The unprivileged user's name, as RBAC subjects name it.
pub const USER_NAME: &str = "ptah-test-user";
/// The node name the kubelet registers as.
/// `localhost`, so that the API server reaches the loopback-only kubelet by its Hostname address.
pub const NODE_NAME: &str = "localhost";
/// The isolation worker's node name (`cargo xtask cluster up --nodes 2`); the API server finds
/// its kubelet through a line in /etc/hosts (cluster/isolation/net.rs).
pub const ISOLATION_NODE_NAME: &str = "ptah-isolation";
/// The isolation worker's address: its end of the veth pair, where its kubelet listens.
pub const ISOLATION_NODE_IP: &str = "10.244.79.2";

/// One client identity: file name, common name (user), organisations (groups).
struct Client {
    file: &'static str,
    user: String,
    groups: &'static [&'static str],
}

/// Writes the whole PKI into `dir` (created, mode 0700; keys 0600).
pub fn write_all(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let year = current_year();
    let validity = |params: &mut CertificateParams| {
        params.not_before = date_time_ymd(year - 1, 1, 1);
        params.not_after = date_time_ymd(year + 2, 1, 1);
    };

    let mut ca = CertificateParams::default();
    ca.distinguished_name
        .push(DnType::CommonName, "ptah-operator test cluster CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut ca);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate()?).context("cannot sign the CA")?;
    write(dir, &format!("{CA}.crt"), &ca.pem(), 0o644)?;

    let serving = |file: &str, cn: &str, sans: Vec<String>| -> anyhow::Result<()> {
        let mut params = CertificateParams::new(sans)?;
        params.distinguished_name.push(DnType::CommonName, cn);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        validity(&mut params);
        let key = KeyPair::generate()?;
        let cert = params
            .signed_by(&key, &ca)
            .with_context(|| format!("cannot sign {file}"))?;
        write(dir, &format!("{file}.crt"), &cert.pem(), 0o644)?;
        write(dir, &format!("{file}.key"), &key.serialize_pem(), 0o600)
    };
    let apiserver_sans = [
        "127.0.0.1",
        "localhost",
        // The `kubernetes` Service's ClusterIP (the first address of the Service range): Pods'
        // in-cluster configuration connects there (cluster/proxy.rs).
        "10.96.0.1",
        // The bridge gateway, where the pod relay forwards the API server's port: a Pod may
        // also connect there directly.
        "10.244.77.1",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    ];
    serving(
        APISERVER,
        "kube-apiserver",
        apiserver_sans.iter().map(|s| (*s).to_owned()).collect(),
    )?;
    serving(
        KUBELET_SERVING,
        NODE_NAME,
        vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
            NODE_NAME.to_owned(),
        ],
    )?;

    serving(
        ISOLATION_KUBELET_SERVING,
        ISOLATION_NODE_NAME,
        vec![ISOLATION_NODE_IP.to_owned(), ISOLATION_NODE_NAME.to_owned()],
    )?;

    let clients = [
        Client {
            file: ADMIN,
            user: "ptah-admin".to_owned(),
            groups: &["system:masters"],
        },
        Client {
            file: USER,
            user: USER_NAME.to_owned(),
            groups: &[],
        },
        Client {
            file: CONTROLLER_MANAGER,
            user: "system:kube-controller-manager".to_owned(),
            groups: &[],
        },
        Client {
            file: SCHEDULER,
            user: "system:kube-scheduler".to_owned(),
            groups: &[],
        },
        Client {
            file: KUBE_PROXY,
            user: "system:kube-proxy".to_owned(),
            groups: &[],
        },
        Client {
            file: KUBELET,
            user: format!("system:node:{NODE_NAME}"),
            groups: &["system:nodes"],
        },
        Client {
            file: ISOLATION_KUBELET,
            user: format!("system:node:{ISOLATION_NODE_NAME}"),
            groups: &["system:nodes"],
        },
        Client {
            file: APISERVER_KUBELET_CLIENT,
            user: "kube-apiserver-kubelet-client".to_owned(),
            groups: &["system:masters"],
        },
    ];
    for client in clients {
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, &client.user);
        for group in client.groups {
            params.distinguished_name.push(DnType::OrganizationName, *group);
        }
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.use_authority_key_identifier_extension = true;
        validity(&mut params);
        let key = KeyPair::generate()?;
        let cert = params
            .signed_by(&key, &ca)
            .with_context(|| format!("cannot sign {}", client.file))?;
        write(dir, &format!("{}.crt", client.file), &cert.pem(), 0o644)?;
        write(dir, &format!("{}.key", client.file), &key.serialize_pem(), 0o600)?;
    }

    let sa = KeyPair::generate()?;
    write(dir, &format!("{SERVICE_ACCOUNT}.key"), &sa.serialize_pem(), 0o600)?;
    write(
        dir,
        &format!("{SERVICE_ACCOUNT}.pub"),
        &sa.public_key_pem(),
        0o644,
    )?;
    Ok(())
}

fn write(dir: &Path, file: &str, text: &str, mode: u32) -> anyhow::Result<()> {
    use std::io::Write;
    let path = dir.join(file);
    let _ = fs::remove_file(&path);
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    out.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The current UTC year, close enough for a validity window that spans years.
fn current_year() -> i32 {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    1970 + i32::try_from(secs / 31_556_952).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_every_certificate_and_key_with_private_keys_unreadable_to_others() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("ptah-pki-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        write_all(&dir).expect("pki");
        for name in [
            APISERVER,
            ADMIN,
            USER,
            KUBELET,
            KUBELET_SERVING,
            CONTROLLER_MANAGER,
            SCHEDULER,
            KUBE_PROXY,
            ISOLATION_KUBELET,
            ISOLATION_KUBELET_SERVING,
        ] {
            let (crt, key) = (dir.join(format!("{name}.crt")), dir.join(format!("{name}.key")));
            let crt = fs::read_to_string(crt).expect("crt");
            assert!(crt.starts_with("-----BEGIN CERTIFICATE-----"), "{name}");
            let mode = fs::metadata(&key).expect("key").permissions().mode();
            assert_eq!(mode & 0o077, 0, "{name}: {mode:o}");
        }
        let public = fs::read_to_string(dir.join("sa.pub")).expect("sa.pub");
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
        fs::remove_dir_all(&dir).expect("cleanup");
    }
}
