//! Kubeconfig files with the CA and the client certificate embedded (so they can be copied).

use std::{fs, os::unix::fs::OpenOptionsExt, path::Path};

use anyhow::Context;
use base64::{Engine, engine::general_purpose::STANDARD};

/// Renders a kubeconfig for `server` as `user`, with PEM texts embedded as base64.
pub fn render(server: &str, user: &str, ca_pem: &str, cert_pem: &str, key_pem: &str) -> String {
    format!(
        "# Written by `cargo xtask cluster up`.\n\
         apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: ptah-local\n  \
           cluster:\n    \
             server: {server}\n    \
             certificate-authority-data: {ca}\n\
         users:\n\
         - name: {user}\n  \
           user:\n    \
             client-certificate-data: {cert}\n    \
             client-key-data: {key}\n\
         contexts:\n\
         - name: {user}@ptah-local\n  \
           context:\n    \
             cluster: ptah-local\n    \
             user: {user}\n\
         current-context: {user}@ptah-local\n",
        ca = STANDARD.encode(ca_pem),
        cert = STANDARD.encode(cert_pem),
        key = STANDARD.encode(key_pem),
    )
}

/// Writes a kubeconfig for the `name` identity of the PKI in `pki` to `path` (mode 0600).
pub fn write(path: &Path, server: &str, user: &str, pki: &Path, name: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let read = |file: String| {
        let path = pki.join(file);
        fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))
    };
    let text = render(
        server,
        user,
        &read(format!("{}.crt", super::pki::CA))?,
        &read(format!("{name}.crt"))?,
        &read(format!("{name}.key"))?,
    );
    let _ = fs::remove_file(path);
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    out.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeds_base64_pem_and_names_one_context() {
        let text = render("https://127.0.0.1:1", "me", "CA", "CERT", "KEY");
        let yaml: serde_json::Value = serde_saphyr::from_str(&text).expect("yaml");
        assert_eq!(yaml["clusters"][0]["cluster"]["server"], "https://127.0.0.1:1");
        assert_eq!(
            yaml["clusters"][0]["cluster"]["certificate-authority-data"],
            STANDARD.encode("CA")
        );
        assert_eq!(
            yaml["users"][0]["user"]["client-key-data"],
            STANDARD.encode("KEY")
        );
        assert_eq!(yaml["current-context"], "me@ptah-local");
        assert_eq!(yaml["contexts"][0]["context"]["user"], "me");
    }
}
