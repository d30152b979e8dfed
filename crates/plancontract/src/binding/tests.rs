//! The fingerprint binds exactly the fields of reference §3.4: one test per group of fields.

use ptah_api::PtahSchemaPlanSpec;
use ptah_api::schemaplan::PrivilegeChangeKind;
use ptah_api::shared::{Epoch, PinnedImage, PlanSeverity, Sha256Digest};
use serde_json::json;

use super::*;

/// The fingerprint as the API's type, as the controller uses it.
fn fingerprint(uid: &str, spec: &PtahSchemaPlanSpec) -> Sha256Digest {
    super::fingerprint(uid, spec)
}

const UID: &str = "6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b";

fn digest(c: char) -> Sha256Digest {
    Sha256Digest::parse(&format!("sha256:{}", c.to_string().repeat(64))).expect("digest")
}

fn image(name: &str, c: char) -> PinnedImage {
    PinnedImage::parse(&format!("{name}@{}", digest(c))).expect("image")
}

fn spec() -> PtahSchemaPlanSpec {
    serde_json::from_value(json!({
        "contractVersion": 3,
        "schemaRef": {"name": "orders", "uid": UID},
        "fingerprint": digest('2').as_str(),
        "contentDigest": digest('1').as_str(),
        "size": 1200,
        "actualStateFingerprint": digest('c').as_str(),
        "desiredStateFingerprint": digest('d').as_str(),
        "artifactDigest": digest('a').as_str(),
        "coordinationDigest": digest('b').as_str(),
        "targetIdentityDigest": digest('3').as_str(),
        "policyFingerprint": digest('4').as_str(),
        "verificationPolicyUID": "0b7e4c7e-2f5b-4a4e-9a53-7f3f6f1f2a10",
        "verificationPolicyDigest": digest('e').as_str(),
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "controllerImage": "ghcr.io/example/ptah-operator:0.1.0",
        "controllerRevision": "0.1.0+abc1234",
        "controllerStateVersion": 1,
        "ptahVersion": "1.4.2",
        "executorImage": image("ghcr.io/example/ptah", 'f').as_str(),
        "runnerImage": image("ghcr.io/example/ptah-runner", '5').as_str(),
        "runnerProtocolVersion": 5,
        "dialect": "postgresql",
        "destructive": false,
        "privilegeChanges": ["Grant", "Revoke"],
        "statementCount": 3,
        "chunks": [{
            "name": "ptah-plan-888888888888888888888888-000",
            "key": "chunk",
            "index": 0,
            "digest": digest('1').as_str(),
            "size": 1200
        }]
    }))
    .expect("a valid plan spec")
}

/// A named edit of a plan spec.
type Change<'a> = (&'a str, &'a dyn Fn(&mut PtahSchemaPlanSpec));

/// Asserts that each change moves the fingerprint, and that all the results are distinct.
fn assert_sensitive(changes: &[Change<'_>]) {
    let base = fingerprint(UID, &spec());
    let mut seen = vec![base.clone()];
    for (what, change) in changes {
        let mut s = spec();
        change(&mut s);
        let fp = fingerprint(UID, &s);
        assert!(!seen.contains(&fp), "changing {what} must change the fingerprint");
        seen.push(fp);
    }
}

fn assert_insensitive(changes: &[Change<'_>]) {
    let base = fingerprint(UID, &spec());
    for (what, change) in changes {
        let mut s = spec();
        change(&mut s);
        assert_eq!(
            fingerprint(UID, &s),
            base,
            "changing {what} must not change the fingerprint"
        );
    }
}

#[test]
fn stable_and_well_formed() {
    let a = fingerprint(UID, &spec());
    assert_eq!(a, fingerprint(UID, &spec()));
    assert!(Sha256Digest::parse(a.as_str()).is_ok());
    // Pinned so an accidental change of the canonical shape (a field renamed, added or
    // dropped) shows up here before it retires every approval in the field.
    let canonical = ptah_fingerprint::canonical_json(&binding(UID, &spec())).expect("canonical");
    let expected = format!(
        concat!(
            r#"{{"actual_state_fingerprint":"{c}","artifact_digest":"{a}","contract_version":3,"#,
            r#""controller_state_version":1,"coordination_digest":"{b}","desired_state_fingerprint":"{d}","#,
            r#""destructive":false,"execution_binding_id":"v1-0123456789abcdef0123456789abcdef","#,
            r#""executor_image":"ghcr.io/example/ptah@{f}","plan_content_digest":"{one}","#,
            r#""policy_fingerprint":"{four}","privilege_changes":["Grant","Revoke"],"ptah_version":"1.4.2","#,
            r#""runner_protocol_version":5,"schema_uid":"{uid}","statement_count":3,"#,
            r#""target_identity_digest":"{three}","verification_policy_digest":"{e}","#,
            r#""verification_policy_uid":"0b7e4c7e-2f5b-4a4e-9a53-7f3f6f1f2a10"}}"#
        ),
        a = digest('a'),
        b = digest('b'),
        c = digest('c'),
        d = digest('d'),
        e = digest('e'),
        f = digest('f'),
        one = digest('1'),
        three = digest('3'),
        four = digest('4'),
        uid = UID,
    );
    assert_eq!(String::from_utf8(canonical.clone()).expect("utf-8"), expected);
    assert_eq!(a.as_str(), ptah_fingerprint::Sha256::of(&canonical).to_string());
}

#[test]
fn sensitive_to_schema_and_content() {
    let base = fingerprint(UID, &spec());
    assert_ne!(fingerprint("another-uid", &spec()), base, "schema UID");
    assert_sensitive(&[
        ("content digest", &|s| s.content_digest = digest('9')),
        ("statement count", &|s| s.statement_count = 4),
        ("destructive", &|s| s.destructive = true),
        ("privilege changes (one more)", &|s| {
            s.privilege_changes.push(PrivilegeChangeKind::Role)
        }),
        ("privilege changes (none)", &|s| s.privilege_changes.clear()),
        ("severity (safe)", &|s| s.severity = Some(PlanSeverity::Safe)),
        ("severity (warning)", &|s| {
            s.severity = Some(PlanSeverity::Warning)
        }),
        ("severity (destructive)", &|s| {
            s.severity = Some(PlanSeverity::Destructive)
        }),
    ]);
}

#[test]
fn a_severity_is_bound_only_when_the_spec_has_one() {
    let canonical = |s: &PtahSchemaPlanSpec| {
        String::from_utf8(ptah_fingerprint::canonical_json(&binding(UID, s)).expect("canonical"))
            .expect("utf-8")
    };
    assert!(
        !canonical(&spec()).contains("severity"),
        "the pinned shape of earlier plans"
    );
    let mut warning = spec();
    warning.severity = Some(PlanSeverity::Warning);
    assert!(canonical(&warning).contains(r#""severity":"Warning""#));
}

#[test]
fn sensitive_to_state_and_target() {
    assert_sensitive(&[
        ("actual state", &|s| s.actual_state_fingerprint = digest('9')),
        ("desired state", &|s| s.desired_state_fingerprint = digest('9')),
        ("artifact digest", &|s| s.binding.artifact_digest = digest('9')),
        ("coordination digest", &|s| {
            s.binding.coordination_digest = digest('9')
        }),
        ("target identity", &|s| {
            s.binding.target_identity_digest = digest('9')
        }),
    ]);
}

#[test]
fn sensitive_to_policy() {
    assert_sensitive(&[
        ("policy fingerprint", &|s| {
            s.binding.policy_fingerprint = digest('9')
        }),
        ("verification policy UID", &|s| {
            s.binding.verification_policy_uid = "other".into()
        }),
        ("verification policy digest", &|s| {
            s.binding.verification_policy_digest = digest('9')
        }),
    ]);
}

#[test]
fn sensitive_to_execution_binding() {
    assert_sensitive(&[
        ("epoch", &|s| {
            s.binding.execution_binding_id =
                Epoch::parse("v1-ffffffffffffffffffffffffffffffff").expect("epoch")
        }),
        ("controller state version", &|s| {
            s.binding.controller_state_version = 2
        }),
        ("ptah version", &|s| s.binding.ptah_version = "1.4.3".into()),
        ("executor image", &|s| {
            s.binding.executor_image = image("ghcr.io/example/ptah", '0')
        }),
        ("runner protocol", &|s| s.binding.runner_protocol_version = 4),
    ]);
}

#[test]
fn insensitive_to_publisher_record() {
    assert_insensitive(&[
        ("controller image", &|s| {
            s.binding.controller_image = "ghcr.io/example/ptah-operator:0.1.1".into()
        }),
        ("controller revision", &|s| {
            s.binding.controller_revision = "0.1.1+def5678".into()
        }),
        ("runner image", &|s| {
            s.binding.runner_image = image("ghcr.io/example/ptah-runner", '0')
        }),
    ]);
}

#[test]
fn insensitive_to_layout_names_and_stored_fingerprint() {
    assert_insensitive(&[
        ("chunks", &|s| {
            s.chunks[0].name = "elsewhere-000".into();
            s.chunks[0].digest = digest('9');
        }),
        ("no chunks", &|s| s.chunks.clear()),
        ("schema name", &|s| s.schema_ref.name = "renamed".into()),
        ("stored fingerprint", &|s| s.fingerprint = digest('9')),
        ("contract version field", &|s| s.contract_version = 4),
    ]);
}

#[test]
fn privilege_changes_are_a_set() {
    assert_insensitive(&[
        ("order", &|s| s.privilege_changes.reverse()),
        ("repetition", &|s| {
            s.privilege_changes.push(PrivilegeChangeKind::Grant)
        }),
    ]);
}

#[test]
fn every_bound_field_is_on_the_wire() {
    let wire = serde_json::to_value(spec()).expect("serializes");
    for (bound, name) in BOUND_FIELDS {
        assert!(
            wire.get(name).is_some(),
            "{bound}: the plan spec has no field {name}"
        );
    }
    assert!(wire.get(PRIVILEGE_CHANGES).is_some());
    let doc = binding(UID, &spec());
    let nulls: Vec<_> = doc
        .as_object()
        .expect("object")
        .iter()
        .filter(|(_, v)| v.is_null())
        .collect();
    assert!(nulls.is_empty(), "{nulls:?}");
}

#[test]
fn a_spec_as_json_binds_like_the_typed_spec() {
    let json = serde_json::to_value(spec()).expect("serializes");
    assert_eq!(
        fingerprint(UID, &spec()),
        super::fingerprint::<_, Sha256Digest>(UID, &json)
    );
    let fp: ptah_fingerprint::Fingerprint = super::fingerprint(UID, &json);
    assert_eq!(fp.to_string(), fingerprint(UID, &spec()).as_str());
}
