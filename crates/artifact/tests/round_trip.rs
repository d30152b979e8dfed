//! Both artifact kinds round-trip through the real TLS registry, by tag and by digest; a moved
//! tag resolves to the new digest while the old digest still pulls the old bytes.

mod common;

use common::{Scratch, migration_files, reference, retag, tls_options};
use ptah_artifact::{Kind, Limits, Provenance, Registry, media};
use ptah_testservices::TestServices;

fn provenance() -> Provenance {
    Provenance {
        source: Some("https://example.invalid/ptah-operator".to_owned()),
        revision: Some("0123abcd".to_owned()),
        build_run: None,
        version: "test".to_owned(),
    }
}

#[tokio::test]
async fn a_schema_artifact_round_trips_by_tag_and_by_digest() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "schema", "v1");
    let hcl = b"table \"items\" {\n  schema = schema.public\n}\n".to_vec();

    let pushed = ptah_artifact::push_schema(&options, &target, hcl.clone(), &provenance())
        .await
        .expect("push");
    assert_eq!(pushed.kind, Kind::Schema);
    assert_eq!(
        pushed.annotations[media::ANNOTATION_SOURCE],
        "https://example.invalid/ptah-operator"
    );
    assert_eq!(pushed.annotations[media::ANNOTATION_REVISION], "0123abcd");
    assert_eq!(pushed.annotations[media::ANNOTATION_VERSION], "test");
    assert_eq!(pushed.annotations[media::ANNOTATION_SCHEMA_FORMAT], "hcl");

    let by_tag = ptah_artifact::pull_schema(&options, &target)
        .await
        .expect("pull by tag");
    assert_eq!(by_tag.digest, pushed.digest);
    assert_eq!(by_tag.schema_hcl(), Some(hcl.as_slice()));
    assert_eq!(by_tag.reference.digest(), Some(pushed.digest));

    let pinned = target.pinned(pushed.digest);
    let by_digest = ptah_artifact::pull_schema(&options, &pinned)
        .await
        .expect("pull by digest");
    assert_eq!(by_digest.schema_hcl(), Some(hcl.as_slice()));

    let wrong_kind = ptah_artifact::pull_migrations(&options, &pinned)
        .await
        .expect_err("not migrations");
    assert!(
        matches!(wrong_kind, ptah_artifact::Error::WrongArtifactType { .. }),
        "{wrong_kind}"
    );

    let inspection = ptah_artifact::inspect(&options, &pinned).await.expect("inspect");
    assert!(inspection.conforms, "{:?}", inspection.problem);
    assert_eq!(
        inspection.artifact_type.as_deref(),
        Some(media::SCHEMA_ARTIFACT_TYPE)
    );
    assert_eq!(inspection.config.media_type, media::EMPTY_CONFIG_MEDIA_TYPE);
    assert_eq!(inspection.layers.len(), 1);
    assert_eq!(inspection.layers[0].path.as_deref(), Some("schema.hcl"));
    assert_eq!(inspection.total_size, hcl.len() as u64);
}

#[tokio::test]
async fn a_migration_artifact_round_trips_and_writes_read_only_files() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "migrations", "v1");
    let files = migration_files("one");

    let pushed = ptah_artifact::push_migrations(&options, &target, files.clone(), &provenance())
        .await
        .expect("push");
    assert_eq!(pushed.files.len(), files.len());
    assert_eq!(pushed.annotations[media::ANNOTATION_MIGRATION_FORMAT], "ptah");

    let pinned = target.pinned(pushed.digest);
    let pulled = ptah_artifact::pull_migrations(&options, &pinned)
        .await
        .expect("pull");
    let mut expected = files.clone();
    expected.sort();
    let mut got = pulled.clone().into_files();
    got.sort();
    assert_eq!(got, expected);

    let scratch = Scratch::new("migrations-out");
    let dest = scratch.0.join("out");
    let registry = Registry::connect(&pinned, &options).expect("connect");
    registry
        .pull_to(&pinned, Some(Kind::Migrations), &dest, &Limits::default())
        .await
        .expect("pull to disk");
    for (path, bytes) in &files {
        let on_disk = dest.join(path);
        assert_eq!(&std::fs::read(&on_disk).expect("read"), bytes);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&on_disk).expect("stat").permissions(),
        );
        assert_eq!(mode & 0o777, 0o400, "{path}");
    }
    let again = registry
        .pull_to(&pinned, Some(Kind::Migrations), &dest, &Limits::default())
        .await
        .expect_err("an existing destination is refused");
    assert!(
        matches!(again, ptah_artifact::Error::Destination { .. }),
        "{again}"
    );
}

#[tokio::test]
async fn a_moved_tag_resolves_to_the_new_digest_and_the_old_digest_keeps_the_old_bytes() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "moved", "stable");
    let first = ptah_artifact::push_migrations(&options, &target, migration_files("first"), &provenance())
        .await
        .expect("push first");
    let second = ptah_artifact::push_migrations(&options, &target, migration_files("second"), &provenance())
        .await
        .expect("push second");
    assert_ne!(first.digest, second.digest);

    let resolved = ptah_artifact::resolve(&options, &target).await.expect("resolve");
    assert_eq!(resolved.digest, second.digest);
    assert_eq!(resolved.pinned.digest(), Some(second.digest));

    // The old digest, even written with the moved tag as a label, selects the old bytes.
    let old = ptah_artifact::pull_migrations(&options, &target.pinned(first.digest))
        .await
        .expect("pull old");
    assert_eq!(old.digest, first.digest);
    let up = old.file("0000000001_items.up.sql").expect("file");
    assert!(String::from_utf8_lossy(&up.bytes).contains("-- first"));

    let other_tag = retag(&target, "v2");
    let missing = ptah_artifact::resolve(&options, &other_tag)
        .await
        .expect_err("unknown tag");
    assert!(
        matches!(missing, ptah_artifact::Error::NotFound { .. }),
        "{missing}"
    );
}

#[tokio::test]
async fn pushing_to_a_digest_or_invalid_content_is_refused_before_upload() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "refused", "v1");
    let pinned = target.pinned(ptah_artifact::Digest::of(b"x"));
    let err = ptah_artifact::push_schema(&options, &pinned, b"x".to_vec(), &provenance())
        .await
        .expect_err("digest target");
    assert!(matches!(err, ptah_artifact::Error::Reference(_)), "{err}");

    let mut no_sum = migration_files("nosum");
    no_sum.retain(|(path, _)| path != "ptah.sum");
    let err = ptah_artifact::push_migrations(&options, &target, no_sum, &provenance())
        .await
        .expect_err("missing sum");
    assert!(
        matches!(err, ptah_artifact::Error::InvalidContent { .. }),
        "{err}"
    );
    let nothing = ptah_artifact::resolve(&options, &target)
        .await
        .expect_err("nothing was pushed");
    assert!(
        matches!(nothing, ptah_artifact::Error::NotFound { .. }),
        "{nothing}"
    );
}

#[tokio::test]
async fn the_plain_http_registry_works_when_asked_for() {
    let services = TestServices::require();
    let options = common::plain_options();
    let target = reference(&services.plain_registry, "plain", "v1");
    let pushed = ptah_artifact::push_migrations(&options, &target, migration_files("plain"), &provenance())
        .await
        .expect("push");
    let pulled = ptah_artifact::pull_migrations(&options, &target)
        .await
        .expect("pull");
    assert_eq!(pulled.digest, pushed.digest);
}
