//! Registry access on the real registries: wrong password, no credentials, missing CA, wrong CA
//! and plain HTTP not asked for each give a typed error that names the registry and never a
//! credential; a Docker config (Kubernetes `.dockerconfigjson` shape) supplies working ones.

mod common;

use base64::{Engine as _, engine::general_purpose::STANDARD};
use common::{Scratch, migration_files, reference, tls_options};
use ptah_artifact::{Credential, CredentialSource, Error, Provenance, RegistryOptions, Secret};
use ptah_testservices::TestServices;

/// Pushes one artifact so the access tests have something to read.
async fn seeded(services: &TestServices, test: &str) -> ptah_artifact::Reference {
    let target = reference(&services.registry.host, test, "v1");
    ptah_artifact::push_migrations(
        &tls_options(services),
        &target,
        migration_files(test),
        &Provenance::default(),
    )
    .await
    .expect("seed");
    target
}

fn assert_no_secret(err: &Error, secret: &str) {
    let text = format!("{err} {err:?}");
    assert!(!text.contains(secret), "the credential leaked: {text}");
}

#[tokio::test]
async fn a_wrong_password_is_unauthorized_and_never_shown() {
    let services = TestServices::require();
    let target = seeded(&services, "wrongpw").await;
    let secret = "Wr0ng-Passw0rd-Xyzzy";
    let options = RegistryOptions {
        credentials: CredentialSource::Fixed(Credential::Basic {
            username: services.registry.username.clone(),
            password: Secret::new(secret),
        }),
        ..tls_options(&services)
    };
    let err = ptah_artifact::resolve(&options, &target)
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, Error::Unauthorized { registry } if *registry == services.registry.host),
        "{err}"
    );
    assert_no_secret(&err, secret);
    assert!(!format!("{options:?}").contains(secret));
    let push =
        ptah_artifact::push_migrations(&options, &target, migration_files("x"), &Provenance::default())
            .await
            .expect_err("push refused");
    assert!(matches!(push, Error::Unauthorized { .. }), "{push}");
    assert_no_secret(&push, secret);
}

#[tokio::test]
async fn no_credentials_on_the_authenticated_registry_is_unauthorized() {
    let services = TestServices::require();
    let target = seeded(&services, "anon").await;
    let options = RegistryOptions {
        credentials: CredentialSource::Anonymous,
        ..tls_options(&services)
    };
    let err = ptah_artifact::resolve(&options, &target)
        .await
        .expect_err("refused");
    assert!(matches!(err, Error::Unauthorized { .. }), "{err}");
}

#[tokio::test]
async fn a_missing_ca_is_a_tls_error() {
    let services = TestServices::require();
    let target = seeded(&services, "noca").await;
    let options = RegistryOptions {
        ca_bundle: None,
        ..tls_options(&services)
    };
    let err = ptah_artifact::resolve(&options, &target)
        .await
        .expect_err("refused");
    match &err {
        Error::Tls { registry, reason } => {
            assert_eq!(registry, &services.registry.host);
            assert!(reason.to_lowercase().contains("unknownissuer"), "{reason}");
        }
        other => panic!("expected a TLS error, got {other}"),
    }
    assert_no_secret(&err, services.registry.password.expose());
}

#[tokio::test]
async fn a_wrong_ca_is_a_tls_error() {
    let services = TestServices::require();
    let target = seeded(&services, "wrongca").await;
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "another ptah test CA");
    let other_ca = params.self_signed(&key).expect("self-signed CA");
    let options = RegistryOptions {
        ca_bundle: Some(("other-ca.pem".into(), other_ca.pem().into_bytes())),
        ..tls_options(&services)
    };
    let err = ptah_artifact::resolve(&options, &target)
        .await
        .expect_err("refused");
    assert!(matches!(err, Error::Tls { .. }), "{err}");
}

#[tokio::test]
async fn a_ca_file_without_certificates_is_refused() {
    let services = TestServices::require();
    let target = reference(&services.registry.host, "badca", "v1");
    let options = RegistryOptions {
        ca_bundle: Some(("garbage.pem".into(), b"not a certificate".to_vec())),
        ..tls_options(&services)
    };
    let err = ptah_artifact::resolve(&options, &target)
        .await
        .expect_err("refused");
    assert!(matches!(err, Error::CaBundle { .. }), "{err}");
}

#[tokio::test]
async fn plain_http_not_asked_for_is_a_tls_error() {
    let services = TestServices::require();
    let target = reference(&services.plain_registry, "notasked", "v1");
    let err = ptah_artifact::resolve(&RegistryOptions::default(), &target)
        .await
        .expect_err("HTTPS to a plain-HTTP registry");
    match &err {
        Error::Tls { registry, reason } => {
            assert_eq!(registry, &services.plain_registry);
            assert!(reason.contains("plain-HTTP"), "{reason}");
        }
        other => panic!("expected a TLS error, got {other}"),
    }
}

#[tokio::test]
async fn credentials_from_a_mounted_dockerconfigjson_secret_work() {
    let services = TestServices::require();
    let target = seeded(&services, "dockercfg").await;
    let scratch = Scratch::new("dockercfg");
    let auth = STANDARD.encode(format!(
        "{}:{}",
        services.registry.username,
        services.registry.password.expose()
    ));
    let secret = format!(
        r#"{{"auths":{{"https://{}":{{"auth":"{auth}"}}}}}}"#,
        services.registry.host
    );
    std::fs::write(scratch.0.join(".dockerconfigjson"), secret).expect("write");
    let ca = services.registry.ca_path.to_string_lossy().into_owned();
    let dir = scratch.0.to_string_lossy().into_owned();
    let env = move |name: &str| match name {
        "DOCKER_CONFIG" => Some(dir.clone()),
        "PTAH_OCI_CA_FILE" => Some(ca.clone()),
        _ => None,
    };
    let options = RegistryOptions::from_env(&env).expect("options");
    assert!(matches!(options.credentials, CredentialSource::DockerConfig(_)));
    let resolved = ptah_artifact::resolve(&options, &target).await.expect("resolve");
    assert!(resolved.pinned.is_pinned());
}
