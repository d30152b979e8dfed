//! The registries from `cargo xtask services up` are real: CNCF distribution behind TLS with a
//! private CA and basic auth, and a plain-HTTP one, driven with oci-client.

use oci_client::{
    Client, Reference, RegistryOperation,
    client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol, Config, ImageLayer},
    manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest},
    secrets::RegistryAuth,
};
use ptah_testservices::{TestServices, unique_name};
use sha2::{Digest, Sha256};

const EMPTY_CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// sha256 of `{}`, the OCI empty descriptor.
const EMPTY_CONFIG_DIGEST: &str = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
const ARTIFACT_TYPE: &str = "application/vnd.ptah.test.artifact.v1";
const LAYER_MEDIA_TYPE: &str = "application/vnd.ptah.test.layer.v1+yaml";

fn install_ring() {
    // Another test in this binary may have installed it already; that is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

fn client(protocol: ClientProtocol, extra_roots: Vec<Certificate>) -> Client {
    install_ring();
    Client::try_from(ClientConfig {
        protocol,
        extra_root_certificates: extra_roots,
        ..ClientConfig::default()
    })
    .expect("build the OCI client")
}

/// A client that trusts the services' CA.
fn trusting_client(services: &TestServices) -> Client {
    let ca = Certificate {
        encoding: CertificateEncoding::Pem,
        data: services.registry.ca_pem().expect("read the CA"),
    };
    client(ClientProtocol::Https, vec![ca])
}

fn credentials(services: &TestServices) -> RegistryAuth {
    RegistryAuth::Basic(
        services.registry.username.clone(),
        services.registry.password.expose().to_owned(),
    )
}

fn reference(host: &str, test: &str) -> Reference {
    Reference::with_tag(
        host.to_owned(),
        format!("ptah-tests/{}", unique_name(test)),
        "v1".to_owned(),
    )
}

/// The whole error chain as one lowercase string.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text.to_lowercase()
}

/// Pushes a small artifact (empty config, one layer, artifactType) and pulls it back.
async fn artifact_round_trip(client: &Client, reference: &Reference, auth: &RegistryAuth) {
    let content = format!("kind: ConfigMap\nname: {}\n", reference.repository()).into_bytes();
    let layer = ImageLayer::new(content.clone(), LAYER_MEDIA_TYPE.to_owned(), None);
    let config = Config::new(b"{}".to_vec(), EMPTY_CONFIG_MEDIA_TYPE.to_owned(), None);
    let mut manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, None);
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_owned());
    manifest.artifact_type = Some(ARTIFACT_TYPE.to_owned());
    assert_eq!(manifest.config.digest, EMPTY_CONFIG_DIGEST);

    let pushed = client
        .push(reference, &[layer], config, auth, Some(manifest))
        .await
        .expect("push the artifact");

    let (raw, digest) = client
        .pull_manifest_raw(reference, auth, &[OCI_IMAGE_MEDIA_TYPE])
        .await
        .expect("pull the manifest by tag");
    assert_eq!(sha256(&raw), digest);
    assert!(
        pushed.manifest_url.contains(&digest),
        "{} does not name {digest}",
        pushed.manifest_url
    );

    let by_digest = reference.clone_with_digest(digest.clone());
    let (raw_again, digest_again) = client
        .pull_manifest_raw(&by_digest, auth, &[OCI_IMAGE_MEDIA_TYPE])
        .await
        .expect("pull the manifest by digest");
    assert_eq!(raw_again, raw, "the manifest must come back byte-identical");
    assert_eq!(digest_again, digest);

    let (parsed, _) = client
        .pull_image_manifest(&by_digest, auth)
        .await
        .expect("parse the manifest");
    assert_eq!(parsed.artifact_type.as_deref(), Some(ARTIFACT_TYPE));
    assert_eq!(parsed.config.media_type, EMPTY_CONFIG_MEDIA_TYPE);
    assert_eq!(parsed.layers.len(), 1);
    assert_eq!(parsed.layers[0].digest, sha256(&content));

    let image = client
        .pull(&by_digest, auth, vec![LAYER_MEDIA_TYPE])
        .await
        .expect("pull the artifact");
    assert_eq!(image.layers.len(), 1);
    assert_eq!(image.layers[0].data.as_ref(), content.as_slice());
    assert_eq!(image.config.data.as_ref(), b"{}");
}

#[tokio::test]
async fn a_blob_round_trips_byte_identical_over_tls_with_credentials() {
    let services = TestServices::require();
    let client = trusting_client(&services);
    let auth = credentials(&services);
    let reference = reference(&services.registry.host, "blob");
    let data: Vec<u8> = (0..70_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let digest = sha256(&data);

    client
        .auth(&reference, &auth, RegistryOperation::Push)
        .await
        .expect("authenticate");
    client
        .push_blob(&reference, data.clone(), &digest)
        .await
        .expect("push the blob");
    assert!(
        client
            .blob_exists(&reference, &digest)
            .await
            .expect("check the blob")
    );

    let descriptor = OciDescriptor {
        media_type: "application/octet-stream".to_owned(),
        digest: digest.clone(),
        size: i64::try_from(data.len()).expect("size"),
        ..OciDescriptor::default()
    };
    let mut pulled = Vec::new();
    client
        .pull_blob(&reference, &descriptor, &mut pulled)
        .await
        .expect("pull the blob");
    assert_eq!(pulled.len(), data.len());
    assert!(pulled == data, "the blob must come back byte-identical");
    assert_eq!(sha256(&pulled), digest);
}

#[tokio::test]
async fn an_artifact_round_trips_over_tls_with_credentials() {
    let services = TestServices::require();
    let client = trusting_client(&services);
    let reference = reference(&services.registry.host, "artifact");
    artifact_round_trip(&client, &reference, &credentials(&services)).await;
}

#[tokio::test]
async fn a_push_without_credentials_is_unauthorized() {
    let services = TestServices::require();
    let client = trusting_client(&services);
    let reference = reference(&services.registry.host, "anonymous");
    let data = b"must not be stored".to_vec();
    let err = client
        .push_blob(&reference, data.clone(), &sha256(&data))
        .await
        .expect_err("an anonymous push must be refused");
    let message = chain(&err);
    assert!(
        message.contains("401") || message.contains("unauthorized"),
        "{message}"
    );
}

#[tokio::test]
async fn a_push_with_a_wrong_password_is_unauthorized() {
    let services = TestServices::require();
    let client = trusting_client(&services);
    let reference = reference(&services.registry.host, "wrongpw");
    let wrong = RegistryAuth::Basic(services.registry.username.clone(), "not-the-password".to_owned());
    let config = Config::new(b"{}".to_vec(), EMPTY_CONFIG_MEDIA_TYPE.to_owned(), None);
    let Err(err) = client.push(&reference, &[], config, &wrong, None).await else {
        panic!("a push with a wrong password must be refused");
    };
    let message = chain(&err);
    assert!(
        message.contains("401") || message.contains("unauthorized"),
        "{message}"
    );
}

#[tokio::test]
async fn a_client_without_the_ca_fails_the_tls_handshake() {
    let services = TestServices::require();
    let client = client(ClientProtocol::Https, Vec::new());
    let reference = reference(&services.registry.host, "noca");
    let err = client
        .pull_manifest_raw(&reference, &credentials(&services), &[OCI_IMAGE_MEDIA_TYPE])
        .await
        .expect_err("the private CA is not trusted by default");
    let message = chain(&err);
    assert!(
        message.contains("invalid peer certificate: unknownissuer"),
        "{message}"
    );
    assert!(!message.contains("401"), "{message}");
}

#[tokio::test]
async fn an_artifact_round_trips_over_plain_http_without_auth() {
    let services = TestServices::require();
    let client = client(
        ClientProtocol::HttpsExcept(vec![services.plain_registry.clone()]),
        Vec::new(),
    );
    let reference = reference(&services.plain_registry, "plain");
    artifact_round_trip(&client, &reference, &RegistryAuth::Anonymous).await;
}
