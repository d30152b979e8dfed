use super::*;

fn refused(text: &str) -> String {
    match Policy::parse(text) {
        Err(Error::PolicyInvalid { reason }) => reason,
        other => panic!("expected a refusal for {text:?}, got {other:?}"),
    }
}

fn full_policy() -> Policy {
    Policy::parse(
        "version: 1\nrequire_digest_pin: true\nartifact_types: [application/vnd.stokaro.ptah.migrations.v1]\n\
         require_annotations: [org.opencontainers.image.source, org.opencontainers.image.revision]\n\
         require_signature: true\n",
    )
    .expect("parse")
}

fn good_facts() -> Facts {
    Facts {
        reference: "oci://r/x@sha256:00".into(),
        digest: "sha256:00".into(),
        pinned: true,
        artifact_type: Some(media::MIGRATIONS_ARTIFACT_TYPE.into()),
        annotations: BTreeMap::from([
            ("org.opencontainers.image.source".into(), "https://x".into()),
            ("org.opencontainers.image.revision".into(), "abc".into()),
        ]),
        referrer_types: vec![media::COSIGN_SIGNATURE_ARTIFACT_TYPE.into()],
    }
}

#[test]
fn the_reference_sample_parses_with_default_signature_types() {
    let policy = full_policy();
    assert!(policy.require_digest_pin && policy.require_signature);
    assert_eq!(policy.signature_types().len(), 2);
    let json =
        Policy::parse(r#"{"version": 1, "require_signature": true, "signature_artifact_types": ["x/y"]}"#)
            .expect("JSON is YAML");
    assert_eq!(json.signature_types(), vec!["x/y".to_owned()]);
}

#[test]
fn bad_policies_are_refused() {
    assert!(refused("version: 2\nrequire_digest_pin: true\n").contains("version 2"));
    assert!(refused("require_digest_pin: true\n").contains("version"));
    assert!(refused("version: 1\n").contains("no requirement"));
    assert!(
        refused("version: 1\nrequire_digest_pin: false\nartifact_types: []\n").contains("no requirement")
    );
    assert!(refused("version: 1\nrequire_digest_pin: true\nsurprise: 1\n").contains("surprise"));
    assert!(refused("version: 1\nartifact_types: ['']\n").contains("empty entry"));
    assert!(refused("version: 1\nrequire_signature: true\nsignature_artifact_types: []\n").contains("empty"));
    assert!(!refused("version: [1\n").is_empty());
}

#[test]
fn every_rule_is_satisfied_by_good_facts() {
    let report = full_policy().evaluate(&good_facts());
    assert!(report.passed(), "{report:?}");
    assert_eq!(
        report.satisfied,
        vec![
            "require_digest_pin",
            "artifact_types",
            "require_annotations",
            "require_signature"
        ]
    );
}

#[test]
fn every_violated_rule_is_reported_not_just_the_first() {
    let facts = Facts {
        pinned: false,
        artifact_type: Some(media::SCHEMA_ARTIFACT_TYPE.into()),
        annotations: BTreeMap::from([("org.opencontainers.image.source".into(), " ".into())]),
        referrer_types: vec!["application/vnd.example.sbom".into()],
        ..good_facts()
    };
    let report = full_policy().evaluate(&facts);
    assert!(report.satisfied.is_empty(), "{report:?}");
    let names: Vec<&str> = report.findings.iter().map(|f| f.requirement.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "require_digest_pin",
            "artifact_types",
            "require_annotations",
            "require_annotations",
            "require_signature"
        ]
    );
}

#[test]
fn the_misspelled_doc_artifact_type_gets_a_hint() {
    let policy = Policy::parse("version: 1\nartifact_types: [application/vnd.stokaro.ptah.migration.v1]\n")
        .expect("parse");
    let report = policy.evaluate(&good_facts());
    assert_eq!(report.findings.len(), 1);
    assert!(
        report.findings[0]
            .detail
            .contains(media::MIGRATIONS_ARTIFACT_TYPE)
    );
}

#[test]
fn the_report_uses_go_field_names() {
    let report = full_policy().evaluate(&Facts::default());
    let json = serde_json::to_value(&report).expect("json");
    for key in ["Reference", "Digest", "Satisfied", "Findings"] {
        assert!(json.get(key).is_some(), "{key} missing in {json}");
    }
    assert!(json["Findings"][0].get("Requirement").is_some());
    assert!(json["Findings"][0].get("Detail").is_some());
}
