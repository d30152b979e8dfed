//! Shared helpers for the registry tests: options for the real TLS and plain registries, unique
//! references, raw pushes of hand-built (possibly hostile) manifests, and scratch directories.
#![allow(dead_code)]

pub mod tamper;

use std::path::PathBuf;

use oci_client::{
    Client, RegistryOperation,
    client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol},
    secrets::RegistryAuth,
};
use ptah_artifact::{Credential, CredentialSource, Digest, Reference, RegistryOptions, Secret, media};
use ptah_testservices::{TestServices, unique_name};
use serde_json::{Value, json};

/// Options for the TLS registry: its CA and its basic-auth credentials.
pub fn tls_options(services: &TestServices) -> RegistryOptions {
    RegistryOptions {
        ca_bundle: Some((
            services.registry.ca_path.clone(),
            services.registry.ca_pem().expect("read the CA"),
        )),
        credentials: CredentialSource::Fixed(Credential::Basic {
            username: services.registry.username.clone(),
            password: Secret::new(services.registry.password.expose()),
        }),
        ..RegistryOptions::default()
    }
}

/// Options for the plain-HTTP registry, asked for explicitly.
pub fn plain_options() -> RegistryOptions {
    RegistryOptions {
        plain_http: true,
        ..RegistryOptions::default()
    }
}

/// A fresh `oci://host/ptah-tests/<unique>:<tag>` reference.
pub fn reference(host: &str, test: &str, tag: &str) -> Reference {
    format!("oci://{host}/ptah-tests/{}:{tag}", unique_name(test))
        .parse()
        .expect("a valid reference")
}

/// The same repository with another tag.
pub fn retag(reference: &Reference, tag: &str) -> Reference {
    format!("oci://{}/{}:{tag}", reference.registry(), reference.repository())
        .parse()
        .expect("a valid reference")
}

/// A raw oci-client for the TLS registry, to push hand-built content.
pub struct Raw {
    client: Client,
    auth: RegistryAuth,
    host: String,
}

impl Raw {
    /// A raw client for the TLS registry with credentials.
    pub fn tls(services: &TestServices) -> Raw {
        ptah_artifact::install_crypto_provider();
        let ca = Certificate {
            encoding: CertificateEncoding::Pem,
            data: services.registry.ca_pem().expect("read the CA"),
        };
        let client = Client::try_from(ClientConfig {
            protocol: ClientProtocol::Https,
            extra_root_certificates: vec![ca],
            ..ClientConfig::default()
        })
        .expect("client");
        Raw {
            client,
            auth: RegistryAuth::Basic(
                services.registry.username.clone(),
                services.registry.password.expose().to_owned(),
            ),
            host: services.registry.host.clone(),
        }
    }

    fn target(&self, reference: &Reference, tag: &str) -> oci_client::Reference {
        oci_client::Reference::with_tag(
            self.host.clone(),
            reference.repository().to_owned(),
            tag.to_owned(),
        )
    }

    /// Uploads a blob; returns its digest.
    pub async fn blob(&self, reference: &Reference, bytes: &[u8]) -> Digest {
        let target = self.target(reference, "x");
        self.client
            .auth(&target, &self.auth, RegistryOperation::Push)
            .await
            .expect("auth");
        let digest = Digest::of(bytes);
        self.client
            .push_blob(&target, bytes.to_vec(), &digest.to_string())
            .await
            .expect("push blob");
        digest
    }

    /// Uploads manifest bytes under `tag` with `media_type`; returns their digest.
    pub async fn manifest(&self, reference: &Reference, tag: &str, body: &[u8], media_type: &str) -> Digest {
        let target = self.target(reference, tag);
        self.client
            .auth(&target, &self.auth, RegistryOperation::Push)
            .await
            .expect("auth");
        self.client
            .push_manifest_raw(&target, body.to_vec(), media_type.parse().expect("header"))
            .await
            .expect("push manifest");
        Digest::of(body)
    }
}

/// A layer descriptor for a hand-built manifest.
pub fn layer(media_type: &str, digest: &Digest, size: usize, path: &str) -> Value {
    json!({
        "mediaType": media_type,
        "digest": digest.to_string(),
        "size": size,
        "annotations": { media::ANNOTATION_TITLE: path },
    })
}

/// A hand-built Ptah-shaped manifest; the caller breaks one rule at a time.
pub fn manifest(artifact_type: &str, config_media_type: &str, layers: Vec<Value>) -> Value {
    json!({
        "schemaVersion": 2,
        "mediaType": media::MANIFEST_MEDIA_TYPE,
        "artifactType": artifact_type,
        "config": {
            "mediaType": config_media_type,
            "digest": media::EMPTY_CONFIG_DIGEST,
            "size": 2,
        },
        "layers": layers,
        "annotations": { media::ANNOTATION_KIND: artifact_type },
    })
}

/// A scratch directory removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new, empty scratch directory.
    pub fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(unique_name(test));
        std::fs::create_dir_all(&dir).expect("mkdir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A small migration directory as `(path, bytes)`, with a `ptah.sum` entry.
pub fn migration_files(marker: &str) -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "0000000001_items.up.sql".to_owned(),
            format!("CREATE TABLE items (id INT); -- {marker}\n").into_bytes(),
        ),
        (
            "0000000001_items.down.sql".to_owned(),
            b"DROP TABLE items;\n".to_vec(),
        ),
        (
            "nested/0000000002_seed.up.sql".to_owned(),
            b"INSERT INTO items VALUES (1);\n".to_vec(),
        ),
        (
            "nested/0000000002_seed.down.sql".to_owned(),
            b"DELETE FROM items;\n".to_vec(),
        ),
        ("ptah.sum".to_owned(), format!("h1:{marker}\n").into_bytes()),
    ]
}
