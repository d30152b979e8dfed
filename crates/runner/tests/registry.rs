//! Resolve and Verify through the runner against the real TLS registry with basic auth: a
//! Resolve given the verification policy runs `ptah oci verify` on exactly the digest it
//! resolved, in the same Pod, and reports resolution and verdict in one frame.

mod support;

use std::{collections::BTreeMap, path::Path, process::Command};

use ptah_dataplane::{ErrorCode, ParsedFrame};
use ptah_testservices::{TestServices, unique_name};
use support::{ptah, run_runner, scratch};

/// The environment every registry operation of these tests gets.
fn registry_env(services: &TestServices, reference: &str) -> BTreeMap<String, String> {
    let r = &services.registry;
    BTreeMap::from([
        ("PTAH_RUNNER_PROTOCOL_VERSION".into(), "1".into()),
        ("PTAH_OPERATION_ID".into(), unique_name("op")),
        ("PTAH_REQUESTED_REFERENCE".into(), reference.to_owned()),
        ("PTAH_REGISTRY_USERNAME".into(), r.username.clone()),
        ("PTAH_REGISTRY_PASSWORD".into(), r.password.expose().to_owned()),
        ("PTAH_OCI_CA_FILE".into(), r.ca_path.display().to_string()),
        ("PTAH_LOG".into(), "warn".into()),
    ])
}

/// Pushes a one-table schema artifact with `ptah oci push`; returns its tag reference.
fn push_schema(services: &TestServices, work: &Path) -> String {
    let file = work.join("schema.hcl");
    std::fs::write(
        &file,
        "schema \"public\" {}\ntable \"orders\" {\n  schema = schema.public\n  column \"id\" {\n    type = bigint\n  }\n  primary_key {\n    columns = [column.id]\n  }\n}\n",
    )
    .expect("write the schema");
    let reference = format!(
        "oci://{}/ptah-tests/{}:v1",
        services.registry.host,
        unique_name("runner-resolve")
    );
    let env = registry_env(services, &reference);
    let out = Command::new(ptah())
        .args(["oci", "push", "--kind", "schema", "--file"])
        .arg(&file)
        .arg(&reference)
        .env_clear()
        .envs(
            env.iter()
                .filter(|(k, _)| k.starts_with("PTAH_REGISTRY") || *k == "PTAH_OCI_CA_FILE"),
        )
        .output()
        .expect("run ptah oci push");
    assert!(
        out.status.success(),
        "ptah oci push failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    reference
}

fn resolve_with_policy(policy: &str) -> (ParsedFrame, String) {
    let services = TestServices::require();
    let dir = scratch();
    let reference = push_schema(&services, dir.path());
    let policy_file = dir.path().join("policy.yaml");
    std::fs::write(&policy_file, policy).expect("write the policy");
    let mut env = registry_env(&services, &reference);
    env.insert(
        "PTAH_VERIFICATION_POLICY".into(),
        policy_file.display().to_string(),
    );
    let run = run_runner("resolve", &env, &ptah(), dir.path());
    run.assert_no_secret(&[services.registry.password.expose().to_owned()]);
    (run.frame().clone(), reference)
}

#[test]
fn a_resolve_given_the_policy_reports_the_digest_and_the_verdict_on_it() {
    let (frame, reference) =
        resolve_with_policy("version: 1\nartifact_types: [application/vnd.stokaro.ptah.schema.v1]\n");
    let p = &frame.payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    let a = p.artifact.as_ref().expect("an artifact result");
    assert_eq!(
        a.resolved_reference,
        format!("{reference}@{}", a.resolved_digest),
        "the reference is pinned to the digest, its tag kept as a label"
    );
    assert_eq!(a.verification_passed, Some(true));
    assert_eq!(a.satisfied_requirements, ["artifact_types"]);
    assert!(a.violated_requirements.is_empty());
    assert_eq!(
        a.artifact_type.as_deref(),
        Some("application/vnd.stokaro.ptah.schema.v1")
    );
}

#[test]
fn a_resolve_whose_artifact_the_policy_refuses_keeps_the_digest_and_names_the_refusal() {
    let (frame, _) = resolve_with_policy("version: 1\nrequire_annotations: [org.example.reviewed]\n");
    let p = &frame.payload;
    let err = p.error.as_ref().expect("a refusal");
    assert_eq!(err.code, ErrorCode::ChildFailed);
    assert_eq!(err.child_code.as_deref(), Some("verification_failed"));
    let a = p.artifact.as_ref().expect("the resolution is kept");
    assert_eq!(a.verification_passed, Some(false));
    assert_eq!(a.violated_requirements, ["require_annotations"]);
    assert_eq!(p.child_exit_code, 1);
}

#[test]
fn a_resolve_without_the_policy_only_resolves() {
    let services = TestServices::require();
    let dir = scratch();
    let reference = push_schema(&services, dir.path());
    let run = run_runner(
        "resolve",
        &registry_env(&services, &reference),
        &ptah(),
        dir.path(),
    );
    let p = &run.frame().payload;
    assert!(p.error.is_none(), "{:?}", p.error);
    let a = p.artifact.as_ref().expect("an artifact result");
    assert_eq!(a.verification_passed, None);
    assert!(a.satisfied_requirements.is_empty());
}

#[test]
fn a_tag_the_resolve_pinned_does_not_satisfy_the_digest_pin_rule() {
    let (frame, _) = resolve_with_policy("version: 1\nrequire_digest_pin: true\n");
    let p = &frame.payload;
    let err = p.error.as_ref().expect("a refusal: the author wrote a tag");
    assert_eq!(err.child_code.as_deref(), Some("verification_failed"));
    let a = p.artifact.as_ref().expect("the resolution is kept");
    assert_eq!(a.verification_passed, Some(false));
    assert_eq!(a.violated_requirements, ["require_digest_pin"]);
    assert!(
        a.satisfied_requirements.is_empty(),
        "{:?}",
        a.satisfied_requirements
    );
}
