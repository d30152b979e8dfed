//! Registry grants: credentials go only where the registry Secret says, and never follow a
//! redirect to another host. The catcher and the redirecting registry are stubs on loopback
//! because the real registry here neither lies about its identity nor redirects its blobs; the
//! granted path runs against the real TLS registry.

mod common;

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use axum::{
    Router,
    body::Body,
    extract::{Path, State},
    http::{HeaderMap, StatusCode, header},
    response::Response,
    routing::get,
};
use common::{migration_files, reference, tls_options};
use ptah_artifact::{Credential, CredentialSource, Digest, Error, Kind, Reference, RegistryOptions, Secret};
use ptah_registrygrant::{Grant, Mode};
use ptah_testservices::TestServices;

/// Requests a stub saw, and how many carried an `Authorization` header.
#[derive(Default)]
struct Seen {
    requests: usize,
    authorized: usize,
}

type Log = Arc<Mutex<Seen>>;

fn record(log: &Log, headers: &HeaderMap) {
    let mut seen = log.lock().expect("lock");
    seen.requests += 1;
    if headers.contains_key(header::AUTHORIZATION) {
        seen.authorized += 1;
    }
}

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr.to_string()
}

/// A host that answers every request like a registry asking for credentials, and counts them.
async fn catcher() -> (String, Log) {
    let log = Log::default();
    let seen = log.clone();
    let router = Router::new().fallback(move |headers: HeaderMap| {
        let seen = seen.clone();
        async move {
            record(&seen, &headers);
            Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header(header::WWW_AUTHENTICATE, "Basic realm=\"catcher\"")
                .body(Body::empty())
                .expect("response")
        }
    });
    (serve(router).await, log)
}

fn basic(secret: &str) -> CredentialSource {
    CredentialSource::Fixed(Credential::Basic {
        username: "ptah".into(),
        password: Secret::new(secret),
    })
}

#[tokio::test]
async fn credentials_never_reach_a_host_the_grant_does_not_name() {
    let (host, log) = catcher().await;
    let target: Reference = format!("oci://{host}/orders:v1").parse().expect("reference");
    let ca = b"-----BEGIN CERTIFICATE-----\nnot granted\n-----END CERTIFICATE-----\n".to_vec();
    let cases: Vec<(&str, RegistryOptions, &str)> = vec![
        (
            "an author points the reference at the catcher over plain HTTP",
            RegistryOptions {
                plain_http: true,
                credentials: basic("s3cret-1"),
                grant: Some(Grant::new(
                    Mode::Environment,
                    Some("registry.internal:5000"),
                    true,
                    None,
                )),
                ..RegistryOptions::default()
            },
            "registry_authority_mismatch",
        ),
        (
            "an author points the reference at the catcher over TLS",
            RegistryOptions {
                credentials: basic("s3cret-2"),
                grant: Some(Grant::new(
                    Mode::Environment,
                    Some("registry.internal:5000"),
                    false,
                    None,
                )),
                ..RegistryOptions::default()
            },
            "registry_authority_mismatch",
        ),
        (
            "a Secret without the registry key",
            RegistryOptions {
                credentials: basic("s3cret-3"),
                grant: Some(Grant::new(Mode::Environment, None, false, None)),
                ..RegistryOptions::default()
            },
            "registry_authority_mismatch",
        ),
        (
            "plain HTTP to the granted host without allowPlainHTTP",
            RegistryOptions {
                plain_http: true,
                credentials: basic("s3cret-4"),
                grant: Some(Grant::new(Mode::Environment, Some(&host), false, None)),
                ..RegistryOptions::default()
            },
            "plain_http_not_granted",
        ),
        (
            "a CA whose digest is not granted",
            RegistryOptions {
                ca_bundle: Some(("ca.pem".into(), ca.clone())),
                credentials: basic("s3cret-5"),
                grant: Some(Grant::new(
                    Mode::Environment,
                    Some(&host),
                    false,
                    Some(&Digest::of(b"another bundle").to_string()),
                )),
                ..RegistryOptions::default()
            },
            "ca_not_granted",
        ),
    ];
    for (case, options, code) in cases {
        let err = ptah_artifact::resolve(&options, &target).await.expect_err(case);
        assert!(matches!(err, Error::NotGranted(_)), "{case}: {err}");
        assert_eq!(err.code(), code, "{case}: {err}");
        assert!(!format!("{err} {err:?}").contains("s3cret"), "{case}: {err}");
        let seen = log.lock().expect("lock");
        assert_eq!(
            (seen.requests, seen.authorized),
            (0, 0),
            "{case}: the catcher was reached"
        );
    }
}

#[tokio::test]
async fn the_granted_registry_still_works_and_anonymous_access_needs_no_grant() {
    let services = TestServices::require();
    let target = reference(&services.registry.host, "granted", "v1");
    ptah_artifact::push_migrations(
        &tls_options(&services),
        &target,
        migration_files("granted"),
        &Default::default(),
    )
    .await
    .expect("seed");
    let mut options = tls_options(&services);
    let ca = options.ca_bundle.as_ref().expect("CA").1.clone();
    options.grant = Some(Grant::new(
        Mode::Environment,
        Some(&services.registry.host.to_uppercase()),
        false,
        Some(&Digest::of(&ca).to_string()),
    ));
    ptah_artifact::resolve(&options, &target)
        .await
        .expect("the granted registry");

    let (host, log) = catcher().await;
    let anonymous = RegistryOptions {
        plain_http: true,
        grant: Some(Grant::new(Mode::Environment, None, false, None)),
        ..RegistryOptions::default()
    };
    let elsewhere: Reference = format!("oci://{host}/orders:v1").parse().expect("reference");
    let err = ptah_artifact::resolve(&anonymous, &elsewhere)
        .await
        .expect_err("the catcher refuses");
    assert!(
        !matches!(err, Error::NotGranted(_)),
        "anonymous access is not a grant matter: {err}"
    );
    let seen = log.lock().expect("lock");
    assert!(
        seen.requests > 0 && seen.authorized == 0,
        "anonymous requests carry no credentials"
    );
}

/// A registry that asks for basic credentials and redirects every blob to `blob_host`, the way
/// a registry on object storage does.
async fn redirecting_registry(manifest: Vec<u8>, blob_host: String) -> (String, Log) {
    let log = Log::default();
    let seen = log.clone();
    let manifest = Arc::new(manifest);
    let router = Router::new()
        .route("/v2/", get(challenge))
        .route(
            "/v2/orders/manifests/{reference}",
            get(move |headers: HeaderMap| {
                let manifest = manifest.clone();
                async move {
                    if !headers.contains_key(header::AUTHORIZATION) {
                        return challenge(headers).await;
                    }
                    Response::builder()
                        .header(header::CONTENT_TYPE, "application/vnd.oci.image.manifest.v1+json")
                        .header("Docker-Content-Digest", Digest::of(&manifest).to_string())
                        .body(Body::from(manifest.to_vec()))
                        .expect("response")
                }
            }),
        )
        .route(
            "/v2/orders/blobs/{digest}",
            get(move |Path(digest): Path<String>, headers: HeaderMap| {
                let seen = seen.clone();
                let blob_host = blob_host.clone();
                async move {
                    record(&seen, &headers);
                    Response::builder()
                        .status(StatusCode::TEMPORARY_REDIRECT)
                        .header(header::LOCATION, format!("http://{blob_host}/store/{digest}"))
                        .body(Body::empty())
                        .expect("response")
                }
            }),
        );
    (serve(router).await, log)
}

async fn challenge(headers: HeaderMap) -> Response {
    let status = if headers.contains_key(header::AUTHORIZATION) {
        StatusCode::OK
    } else {
        StatusCode::UNAUTHORIZED
    };
    Response::builder()
        .status(status)
        .header(header::WWW_AUTHENTICATE, "Basic realm=\"stub\"")
        .body(Body::empty())
        .expect("response")
}

#[tokio::test]
async fn a_blob_redirected_to_another_host_gets_no_credentials() {
    let hcl = b"table \"orders\" {\n}\n".to_vec();
    let config = b"{}".to_vec();
    let blobs: Arc<BTreeMap<String, Vec<u8>>> = Arc::new(BTreeMap::from([
        (Digest::of(&hcl).to_string(), hcl.clone()),
        (Digest::of(&config).to_string(), config),
    ]));
    let store_log = Log::default();
    let seen = store_log.clone();
    let store = Router::new().route(
        "/store/{digest}",
        get(
            move |State(blobs): State<Arc<BTreeMap<String, Vec<u8>>>>,
                  Path(digest): Path<String>,
                  headers: HeaderMap| {
                let seen = seen.clone();
                async move {
                    record(&seen, &headers);
                    match blobs.get(&digest) {
                        Some(bytes) => Response::new(Body::from(bytes.clone())),
                        None => Response::builder()
                            .status(StatusCode::NOT_FOUND)
                            .body(Body::empty())
                            .expect("response"),
                    }
                }
            },
        ),
    );
    let store_host = serve(store.with_state(blobs)).await;
    let manifest = ptah_artifact::build_manifest(
        Kind::Schema,
        &[("schema.hcl".to_owned(), Digest::of(&hcl), hcl.len() as u64)],
        &BTreeMap::from([(
            ptah_artifact::media::ANNOTATION_KIND.to_owned(),
            Kind::Schema.artifact_type().to_owned(),
        )]),
    )
    .expect("manifest");
    let (registry_host, registry_log) = redirecting_registry(manifest, store_host).await;
    let target: Reference = format!("oci://{registry_host}/orders:v1")
        .parse()
        .expect("reference");
    let options = RegistryOptions {
        plain_http: true,
        credentials: basic("s3cret-redirect"),
        grant: Some(Grant::new(Mode::Environment, Some(&registry_host), true, None)),
        ..RegistryOptions::default()
    };
    let artifact = ptah_artifact::pull(&options, &target, Some(Kind::Schema))
        .await
        .expect("pulled through the redirect");
    assert_eq!(artifact.schema_hcl(), Some(hcl.as_slice()));
    let registry = registry_log.lock().expect("lock");
    assert!(
        registry.requests > 0 && registry.authorized == registry.requests,
        "the registry got credentials"
    );
    let store = store_log.lock().expect("lock");
    assert!(store.requests > 0, "the blob came from the other host");
    assert_eq!(
        store.authorized, 0,
        "credentials followed the redirect to another host"
    );
}
