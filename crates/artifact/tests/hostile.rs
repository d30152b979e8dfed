//! Hostile artifacts, pushed by the test itself through the raw distribution API of the real
//! registry (or served by a lying loopback registry where a real one cannot be made to lie):
//! each is refused with a typed error before anything is written to the `--out` destination.

mod common;

use common::{
    Raw, Scratch, layer, manifest,
    tamper::{Script, Tamper},
    tls_options,
};
use ptah_artifact::{Digest, Error, Kind, Limits, Reference, Registry, media};
use ptah_testservices::TestServices;
use serde_json::Value;

const SQL: &[u8] = b"CREATE TABLE t (id INT);\n";
const SUM: &[u8] = b"h1:whatever\n";

/// Pushes the empty config, `SQL` and `SUM`, then `build(sql_digest, sum_digest)` as manifest.
async fn push_hostile(
    services: &TestServices,
    test: &str,
    build: impl FnOnce(&Digest, &Digest) -> Value,
) -> Reference {
    let raw = Raw::tls(services);
    let target = common::reference(&services.registry.host, test, "v1");
    raw.blob(&target, media::EMPTY_CONFIG_BYTES).await;
    let sql = raw.blob(&target, SQL).await;
    let sum = raw.blob(&target, SUM).await;
    let body = serde_json::to_vec(&build(&sql, &sum)).expect("json");
    raw.manifest(&target, "v1", &body, media::MANIFEST_MEDIA_TYPE)
        .await;
    target
}

fn migrations(layers: Vec<Value>) -> Value {
    manifest(
        media::MIGRATIONS_ARTIFACT_TYPE,
        media::EMPTY_CONFIG_MEDIA_TYPE,
        layers,
    )
}

fn file(digest: &Digest, size: usize, path: &str) -> Value {
    layer(media::MIGRATION_FILE_MEDIA_TYPE, digest, size, path)
}

/// Pulls `target` to a fresh `--out` and returns the error; asserts nothing was written.
async fn refused(services: &TestServices, target: &Reference, limits: &Limits) -> Error {
    let scratch = Scratch::new("hostile-out");
    let dest = scratch.0.join("out");
    let registry = Registry::connect(target, &tls_options(services)).expect("connect");
    let err = registry
        .pull_to(target, Some(Kind::Migrations), &dest, limits)
        .await
        .expect_err("a hostile artifact must be refused");
    assert!(!dest.exists(), "{} was written despite {err}", dest.display());
    assert_eq!(
        std::fs::read_dir(&scratch.0).expect("ls").count(),
        0,
        "staging left behind"
    );
    err
}

#[tokio::test]
async fn a_well_formed_hand_built_artifact_is_accepted() {
    let services = TestServices::require();
    let target = push_hostile(&services, "handbuilt", |sql, sum| {
        migrations(vec![
            file(sql, SQL.len(), "0001_t.up.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let registry = Registry::connect(&target, &tls_options(&services)).expect("connect");
    let pulled = registry
        .pull(&target, Some(Kind::Migrations), &Limits::default())
        .await
        .expect("a valid hand-built artifact pulls");
    assert_eq!(pulled.files.len(), 2);
}

#[tokio::test]
async fn path_traversal_is_refused() {
    let services = TestServices::require();
    let target = push_hostile(&services, "traversal", |sql, sum| {
        migrations(vec![
            file(sql, SQL.len(), "../../evil.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(
        matches!(err, Error::UnsafePath { reason, .. } if reason.contains("..")),
        "{err}"
    );
}

#[tokio::test]
async fn an_absolute_path_is_refused() {
    let services = TestServices::require();
    let target = push_hostile(&services, "absolute", |sql, sum| {
        migrations(vec![
            file(sql, SQL.len(), "/tmp/evil.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(
        matches!(
            err,
            Error::UnsafePath {
                reason: "absolute path",
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn duplicate_paths_are_refused() {
    let services = TestServices::require();
    let target = push_hostile(&services, "duplicate", |sql, sum| {
        migrations(vec![
            file(sql, SQL.len(), "a.sql"),
            file(sum, SUM.len(), "a.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(
        matches!(
            err,
            Error::UnsafePath {
                reason: "duplicate path",
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn too_many_files_are_refused_from_the_descriptors() {
    let services = TestServices::require();
    let target = push_hostile(&services, "toomany", |sql, sum| {
        migrations(vec![
            file(sql, SQL.len(), "a.sql"),
            file(sql, SQL.len(), "b.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let limits = Limits {
        max_files: 2,
        ..Limits::default()
    };
    let err = refused(&services, &target, &limits).await;
    assert!(matches!(err, Error::LimitExceeded { limit: 2, .. }), "{err}");
}

#[tokio::test]
async fn a_file_over_the_size_limit_is_refused_from_the_descriptors() {
    let services = TestServices::require();
    let target = push_hostile(&services, "toobig", |sql, sum| {
        migrations(vec![
            file(sql, SQL.len(), "a.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let limits = Limits {
        max_file_size: 8,
        ..Limits::default()
    };
    let err = refused(&services, &target, &limits).await;
    assert!(matches!(err, Error::LimitExceeded { limit: 8, .. }), "{err}");
}

#[tokio::test]
async fn a_layer_larger_than_declared_is_refused_while_reading() {
    let services = TestServices::require();
    let target = push_hostile(&services, "larger", |sql, sum| {
        migrations(vec![file(sql, 5, "a.sql"), file(sum, SUM.len(), "ptah.sum")])
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(matches!(err, Error::SizeMismatch { declared: 5, .. }), "{err}");
}

#[tokio::test]
async fn a_wrong_config_media_type_is_refused() {
    let services = TestServices::require();
    let target = push_hostile(&services, "config", |sql, sum| {
        manifest(
            media::MIGRATIONS_ARTIFACT_TYPE,
            "application/vnd.oci.image.config.v1+json",
            vec![file(sql, SQL.len(), "a.sql"), file(sum, SUM.len(), "ptah.sum")],
        )
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(
        matches!(err, Error::WrongMediaType { ref what, .. } if what == "config"),
        "{err}"
    );
}

#[tokio::test]
async fn a_wrong_artifact_type_is_refused() {
    let services = TestServices::require();
    let target = push_hostile(&services, "arttype", |sql, sum| {
        manifest(
            media::MISSPELLED_MIGRATIONS_ARTIFACT_TYPE,
            media::EMPTY_CONFIG_MEDIA_TYPE,
            vec![file(sql, SQL.len(), "a.sql"), file(sum, SUM.len(), "ptah.sum")],
        )
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(
        matches!(
            err,
            Error::WrongArtifactType {
                field: "artifactType",
                ..
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_wrong_layer_media_type_is_refused() {
    let services = TestServices::require();
    let target = push_hostile(&services, "layertype", |sql, sum| {
        migrations(vec![
            layer(media::GENERIC_FILE_MEDIA_TYPE, sql, SQL.len(), "a.sql"),
            file(sum, SUM.len(), "ptah.sum"),
        ])
    })
    .await;
    let err = refused(&services, &target, &Limits::default()).await;
    assert!(matches!(err, Error::WrongMediaType { .. }), "{err}");
}

/// A pinned reference whose registry answers with other manifest bytes, with or without a
/// lying `Docker-Content-Digest`: refused, and the tag is never asked for instead.
#[tokio::test]
async fn a_manifest_that_does_not_match_its_digest_is_refused_without_falling_back_to_the_tag() {
    for lie_in_header in [true, false] {
        let served = serde_json::to_vec(&migrations(vec![])).expect("json");
        let asked = Digest::of(b"the manifest the caller pinned");
        let tamper = Tamper::start(Script {
            manifest: served,
            manifest_digest_header: lie_in_header.then(|| asked.to_string()),
            ..Script::default()
        })
        .await;
        let target: Reference = format!("oci://{}/ptah-tests/lying:v1@{asked}", tamper.host)
            .parse()
            .expect("reference");
        let scratch = Scratch::new("lying-out");
        let dest = scratch.0.join("out");
        let registry = Registry::connect(&target, &common::plain_options()).expect("connect");
        let err = registry
            .pull_to(&target, Some(Kind::Migrations), &dest, &Limits::default())
            .await
            .expect_err("a manifest that does not match its digest");
        assert!(matches!(err, Error::DigestMismatch { .. }), "{err}");
        assert!(!dest.exists());
        let paths = tamper.paths();
        assert!(
            paths.iter().any(|p| p.ends_with(&format!("/manifests/{asked}"))),
            "{paths:?}"
        );
        assert!(
            !paths.iter().any(|p| p.ends_with("/manifests/v1")),
            "fell back to the tag: {paths:?}"
        );
        assert!(
            !paths.iter().any(|p| p.contains("/blobs/")),
            "fetched blobs: {paths:?}"
        );
    }
}

/// A registry that serves a blob longer than its descriptor (and than its digest covers).
#[tokio::test]
async fn a_served_blob_longer_than_declared_is_refused() {
    let sum_digest = Digest::of(SUM);
    let body = serde_json::to_vec(&migrations(vec![file(&sum_digest, SUM.len(), "ptah.sum")])).expect("json");
    let digest = Digest::of(&body);
    let mut blob = SUM.to_vec();
    blob.extend_from_slice(&[b'x'; 4096]);
    let tamper = Tamper::start(Script {
        manifest: body,
        manifest_digest_header: Some(digest.to_string()),
        blob,
        ..Script::default()
    })
    .await;
    let target: Reference = format!("oci://{}/ptah-tests/longer@{digest}", tamper.host)
        .parse()
        .expect("reference");
    let scratch = Scratch::new("longer-out");
    let dest = scratch.0.join("out");
    let registry = Registry::connect(&target, &common::plain_options()).expect("connect");
    let err = registry
        .pull_to(&target, Some(Kind::Migrations), &dest, &Limits::default())
        .await
        .expect_err("longer than declared");
    assert!(matches!(err, Error::SizeMismatch { .. }), "{err}");
    assert!(!dest.exists());
}

/// A registry that streams a manifest without end (no length): refused as soon as the body
/// passes the cap, having read little more than the cap, never the whole stream into memory.
#[tokio::test]
async fn an_endless_manifest_is_refused_at_the_cap() {
    let tamper = Tamper::start(Script {
        endless_manifest: true,
        ..Script::default()
    })
    .await;
    let target: Reference = format!("oci://{}/ptah-tests/endless:v1", tamper.host)
        .parse()
        .expect("reference");
    let limits = Limits {
        max_manifest_size: 1024 * 1024,
        ..Limits::default()
    };
    let registry = Registry::connect(&target, &common::plain_options()).expect("connect");
    let err = registry
        .resolve(&target, &limits)
        .await
        .expect_err("an endless manifest");
    assert!(
        matches!(&err, Error::LimitExceeded { limit, .. } if *limit == limits.max_manifest_size),
        "{err}"
    );
    // Give the server a moment to notice the hang-up; it stops at 4 GiB otherwise.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let sent = tamper.sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        sent < 64 * 1024 * 1024,
        "the client accepted {sent} bytes of a manifest capped at 1 MiB"
    );
}

/// A manifest whose declared length is over the cap is refused before its body is awaited
/// (this server never sends one, so waiting would hang until the read timeout).
#[tokio::test]
async fn a_manifest_declared_over_the_cap_is_refused_before_its_body() {
    let tamper = Tamper::start(Script {
        declared_manifest: Some(1 << 40),
        ..Script::default()
    })
    .await;
    let target: Reference = format!("oci://{}/ptah-tests/declared:v1", tamper.host)
        .parse()
        .expect("reference");
    let registry = Registry::connect(&target, &common::plain_options()).expect("connect");
    let err = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        registry.resolve(&target, &Limits::default()),
    )
    .await
    .expect("refused without waiting for the body")
    .expect_err("a manifest declared at 1 TiB");
    assert!(
        matches!(&err, Error::LimitExceeded { what, .. } if what.contains("declares 1099511627776 bytes")),
        "{err}"
    );
}
