//! Policy verification on the real registry: each rule satisfied and violated, and a signature
//! found through the referrers tag-schema fallback (`sha256-<hex>`), since distribution 2.8 has
//! no referrers API.

mod common;

use common::{Raw, layer, migration_files, reference, tls_options};
use ptah_artifact::{Digest, Policy, Provenance, Reference, Registry, media, requirement};
use ptah_testservices::TestServices;
use serde_json::json;

fn provenance() -> Provenance {
    Provenance {
        source: Some("https://example.invalid/src".to_owned()),
        revision: Some("cafe".to_owned()),
        build_run: None,
        version: "test".to_owned(),
    }
}

const FULL_POLICY: &str = "\
version: 1
require_digest_pin: true
artifact_types: [application/vnd.stokaro.ptah.migrations.v1]
require_annotations: [org.opencontainers.image.source, org.opencontainers.image.revision]
require_signature: true
";

/// Pushes a signature referrer of `subject` and lists it in the fallback index tag.
async fn sign(services: &TestServices, target: &Reference, subject: &Digest, subject_size: usize) {
    let raw = Raw::tls(services);
    raw.blob(target, media::EMPTY_CONFIG_BYTES).await;
    let payload = b"{\"critical\":{}}".to_vec();
    let payload_digest = raw.blob(target, &payload).await;
    let signature = json!({
        "schemaVersion": 2,
        "mediaType": media::MANIFEST_MEDIA_TYPE,
        "artifactType": media::COSIGN_SIGNATURE_ARTIFACT_TYPE,
        "config": {"mediaType": media::EMPTY_CONFIG_MEDIA_TYPE, "digest": media::EMPTY_CONFIG_DIGEST, "size": 2},
        "layers": [layer("application/vnd.dev.cosign.simplesigning.v1+json", &payload_digest, payload.len(), "sig")],
        "subject": {"mediaType": media::MANIFEST_MEDIA_TYPE, "digest": subject.to_string(), "size": subject_size},
    });
    let signature = serde_json::to_vec(&signature).expect("json");
    let signature_digest = raw
        .manifest(target, "signature", &signature, media::MANIFEST_MEDIA_TYPE)
        .await;
    let index = json!({
        "schemaVersion": 2,
        "mediaType": media::INDEX_MEDIA_TYPE,
        "manifests": [{
            "mediaType": media::MANIFEST_MEDIA_TYPE,
            "digest": signature_digest.to_string(),
            "size": signature.len(),
            "artifactType": media::COSIGN_SIGNATURE_ARTIFACT_TYPE,
        }],
    });
    let index = serde_json::to_vec(&index).expect("json");
    raw.manifest(
        target,
        &Registry::fallback_tag(subject),
        &index,
        media::INDEX_MEDIA_TYPE,
    )
    .await;
}

#[tokio::test]
async fn every_rule_is_satisfied_with_a_signature_found_through_the_fallback_tag() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "signed", "v1");
    let pushed = ptah_artifact::push_migrations(&options, &target, migration_files("signed"), &provenance())
        .await
        .expect("push");
    let resolved = ptah_artifact::resolve(&options, &target).await.expect("resolve");
    sign(&services, &target, &pushed.digest, resolved.manifest_bytes.len()).await;

    let policy = Policy::parse(FULL_POLICY).expect("policy");
    let report = ptah_artifact::verify(&options, &target.pinned(pushed.digest), &policy)
        .await
        .expect("verify");
    assert!(report.passed(), "{report:?}");
    assert_eq!(report.digest, pushed.digest.to_string());
    assert_eq!(
        report.satisfied,
        vec![
            requirement::DIGEST_PIN,
            requirement::ARTIFACT_TYPES,
            requirement::ANNOTATIONS,
            requirement::SIGNATURE
        ]
    );
}

#[tokio::test]
async fn every_rule_is_violated_and_every_violation_is_reported() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "unsigned", "v1");
    let bare = Provenance {
        version: "test".to_owned(),
        ..Provenance::default()
    };
    ptah_artifact::push_schema(&options, &target, b"table \"t\" {}\n".to_vec(), &bare)
        .await
        .expect("push");

    let policy = Policy::parse(FULL_POLICY).expect("policy");
    // By tag (not pinned), a schema (not migrations), no provenance, no signature.
    let report = ptah_artifact::verify(&options, &target, &policy)
        .await
        .expect("verify");
    assert!(!report.passed());
    assert!(report.satisfied.is_empty(), "{report:?}");
    let violated: Vec<&str> = report.findings.iter().map(|f| f.requirement.as_str()).collect();
    assert_eq!(
        violated,
        vec![
            requirement::DIGEST_PIN,
            requirement::ARTIFACT_TYPES,
            requirement::ANNOTATIONS,
            requirement::ANNOTATIONS,
            requirement::SIGNATURE
        ]
    );
    assert!(report.findings[2].detail.contains(media::ANNOTATION_SOURCE));
}

#[tokio::test]
async fn a_referrer_of_another_type_is_not_a_signature() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "sbom", "v1");
    let pushed = ptah_artifact::push_migrations(&options, &target, migration_files("sbom"), &provenance())
        .await
        .expect("push");
    let resolved = ptah_artifact::resolve(&options, &target).await.expect("resolve");
    sign(&services, &target, &pushed.digest, resolved.manifest_bytes.len()).await;
    // Only Notary signatures count for this policy; the referrer is a cosign one.
    let policy = Policy::parse(
        "version: 1\nrequire_signature: true\nsignature_artifact_types: [application/vnd.cncf.notary.signature]\n",
    )
    .expect("policy");
    let report = ptah_artifact::verify(&options, &target, &policy)
        .await
        .expect("verify");
    assert_eq!(report.findings.len(), 1, "{report:?}");
    assert_eq!(report.findings[0].requirement, requirement::SIGNATURE);
}

#[tokio::test]
async fn a_digest_pin_is_judged_on_what_the_author_wrote() {
    let services = TestServices::require();
    let options = tls_options(&services);
    let target = reference(&services.registry.host, "pinrule", "v1");
    let pushed = ptah_artifact::push_migrations(&options, &target, migration_files("pinrule"), &provenance())
        .await
        .expect("push");
    let policy = Policy::parse("version: 1\nrequire_digest_pin: true\n").expect("policy");
    let registry = ptah_artifact::Registry::connect(&target, &options).expect("connect");
    let pinned = target.pinned(pushed.digest);
    let limits = ptah_artifact::Limits::default();
    let by_tag = registry
        .verify(&pinned, Some(&target), &policy, &limits)
        .await
        .expect("verify");
    assert!(
        !by_tag.passed(),
        "a tag the resolver pinned passed the pin rule: {by_tag:?}"
    );
    assert!(by_tag.satisfied.is_empty(), "{by_tag:?}");
    let by_digest = registry
        .verify(&pinned, Some(&pinned), &policy, &limits)
        .await
        .expect("verify");
    assert!(by_digest.passed(), "{by_digest:?}");
    let other = reference(&services.registry.host, "pinrule-other", "v1");
    let err = registry
        .verify(&pinned, Some(&other), &policy, &limits)
        .await
        .expect_err("another repository");
    assert!(err.to_string().contains("is not a form of"), "{err}");
}
