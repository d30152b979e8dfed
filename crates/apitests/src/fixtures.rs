//! Objects the T3 tests of several crates create: a PtahSchema, and schema and migration plan
//! specs with every binding filled (placeholders where the publisher derives the value); and the
//! states the suites wait for.

use ptah_api::{
    PtahMigration, PtahMigrationPlanSpec, PtahSchemaPlanSpec,
    migration::{MigrationPhase, RunOutcome},
};
use serde_json::{Value, json};

/// `sha256:` and 64 times `c`.
pub fn digest(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

/// The execution and target binding fields a plan spec carries (flattened into it).
pub fn binding() -> Value {
    json!({
        "artifactDigest": digest('a'),
        "coordinationDigest": digest('b'),
        "targetIdentityDigest": digest('3'),
        "policyFingerprint": digest('4'),
        "verificationPolicyUID": "0b7e4c7e-2f5b-4a4e-9a53-7f3f6f1f2a10",
        "verificationPolicyDigest": digest('e'),
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "controllerImage": "registry.local/ptah-operator:0.1.0",
        "controllerRevision": "0.1.0+abc1234",
        "controllerStateVersion": 1,
        "ptahVersion": "1.4.2",
        "executorImage": format!("registry.local/ptah@{}", digest('f')),
        "runnerImage": format!("registry.local/ptah-runner@{}", digest('5')),
        "runnerProtocolVersion": 5,
    })
}

fn with_binding(mut spec: Value) -> Value {
    if let (Value::Object(spec), Value::Object(binding)) = (&mut spec, binding()) {
        spec.extend(binding);
    }
    spec
}

/// A PtahSchema `name` on PostgreSQL with realm `<name>-primary`.
pub fn schema(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahSchema",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": format!("{name}-primary"),
                "urlFrom": {"name": format!("{name}-db"), "key": "url"}
            },
            "desired": {
                "ociRef": format!("oci://registry.example.com/shop/{name}-schema:v42"),
                "verificationPolicyFrom": {"name": format!("{name}-verification-policy"), "key": "policy.yaml"}
            }
        }
    })
}

/// A schema plan spec of `statements` statements; publish derives the names, sizes and digests.
pub fn schema_plan_spec(statements: i32, destructive: bool) -> PtahSchemaPlanSpec {
    serde_json::from_value(with_binding(json!({
        "contractVersion": 3,
        "schemaRef": {"name": "placeholder", "uid": "placeholder"},
        "fingerprint": digest('0'),
        "contentDigest": digest('0'),
        "size": 1,
        "actualStateFingerprint": digest('c'),
        "desiredStateFingerprint": digest('d'),
        "dialect": "postgresql",
        "destructive": destructive,
        "privilegeChanges": ["Grant"],
        "severity": if destructive { "Destructive" } else { "Warning" },
        "statementCount": statements,
        "chunks": [{"name": "placeholder", "key": "chunk", "index": 0, "digest": digest('0'), "size": 1}]
    })))
    .unwrap_or_else(|e| panic!("a schema plan spec: {e}"))
}

/// A migration plan spec from `current` over `steps` (version, description).
pub fn migration_plan_spec(
    migration: (&str, &str),
    current: i64,
    steps: &[(i64, &str)],
) -> PtahMigrationPlanSpec {
    let migrations: Vec<Value> = steps
        .iter()
        .map(|(version, description)| {
            json!({"version": version, "description": description, "checksum": digest('9')})
        })
        .collect();
    serde_json::from_value(with_binding(json!({
        "contractVersion": 1,
        "migrationRef": {"name": migration.0, "uid": migration.1},
        "fingerprint": digest('8'),
        "migrations": migrations,
        "historyFingerprint": digest('7'),
        "currentVersion": current,
    })))
    .unwrap_or_else(|e| panic!("a migration plan spec: {e}"))
}

/// A migration whose run failed halfway: Blocked, its last run Partial and still unresolved.
pub fn partial_unresolved(m: &PtahMigration) -> bool {
    m.status.as_ref().is_some_and(|st| {
        st.phase == Some(MigrationPhase::Blocked)
            && st.unresolved_run.is_some()
            && st
                .last_run
                .as_ref()
                .is_some_and(|r| r.outcome == RunOutcome::Partial)
    })
}
