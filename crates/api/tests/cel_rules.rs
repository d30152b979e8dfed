//! Every CEL rule evaluated for real (kube-cel): each refuses a violating object, accepts a close
//! valid neighbour, and no rule in the generated CRDs goes without a refusing case.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeSet;

use common::{Refusal, cel_refusals, remove, rules, schema_of, schemas, set, valid_example};
use serde_json::{Value, json};

/// A change to a valid example: set a dotted path, or remove it with `Value::Null`.
type Edit = (String, Value);

struct Case {
    kind: &'static str,
    what: &'static str,
    edits: Vec<Edit>,
    /// For transition rules: compare against the unedited example.
    update: bool,
    /// `Some(rule substring)` when refused, `None` when accepted.
    refused_by: Option<&'static str>,
}

fn edits(list: &[(&str, Value)]) -> Vec<Edit> {
    list.iter().map(|(p, v)| ((*p).to_owned(), v.clone())).collect()
}

fn refuse(kind: &'static str, what: &'static str, list: &[(&str, Value)], rule: &'static str) -> Case {
    Case {
        kind,
        what,
        edits: edits(list),
        update: false,
        refused_by: Some(rule),
    }
}

fn accept(kind: &'static str, what: &'static str, list: &[(&str, Value)]) -> Case {
    Case {
        kind,
        what,
        edits: edits(list),
        update: false,
        refused_by: None,
    }
}

fn update(case: Case) -> Case {
    Case { update: true, ..case }
}

const S: &str = "PtahSchema";
const M: &str = "PtahMigration";
const ONE_OF: &str = "has(self.coordinationKey) != has(self.realmRef)";
const SELECTOR_EMPTY: &str = "self.name != '' && self.key != ''";
const SELECTOR_OPTIONAL: &str = "!has(self.optional) || !self.optional";
const RESERVED: &str = "self.all(k, !k.matches(";
const LOCK_DEADLINE: &str = "duration(self.policy.lockTimeout).getMilliseconds() <=";
const CONNECT_DEADLINE: &str = "duration(self.connectTimeout).getMilliseconds() <=";
const PLAIN_HTTP: &str = "!(has(self.plainHTTP) && self.plainHTTP && has(self.caFrom))";
const DOCKER: &str = "self.mode != 'DockerConfigJSON'";

fn findings(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"category": "tables_added", "count": i + 1, "severity": "safe"}))
            .collect(),
    )
}

/// Cases on the types both families share (target, artifact source, execution), written once
/// with `SRC` for the source field (`desired` or `artifact`) and run against both kinds.
fn shared_cases() -> Vec<Case> {
    let ca = json!({"name": "ca", "key": "ca.pem"});
    let templates = vec![
        refuse(
            S,
            "both coordination key and realm",
            &[
                ("spec.target.coordinationKey", json!("k")),
                ("spec.target.realmRef", json!({"name": "r"})),
            ],
            ONE_OF,
        ),
        refuse(
            S,
            "neither coordination key nor realm",
            &[
                ("spec.target.coordinationKey", Value::Null),
                ("spec.target.realmRef", Value::Null),
            ],
            ONE_OF,
        ),
        accept(
            S,
            "realm only",
            &[
                ("spec.target.coordinationKey", Value::Null),
                ("spec.target.realmRef", json!({"name": "r"})),
            ],
        ),
        accept(
            S,
            "key only",
            &[
                ("spec.target.coordinationKey", json!("k")),
                ("spec.target.realmRef", Value::Null),
            ],
        ),
        refuse(
            S,
            "empty URL secret name",
            &[("spec.target.urlFrom.name", json!(""))],
            SELECTOR_EMPTY,
        ),
        refuse(
            S,
            "optional URL selector",
            &[("spec.target.urlFrom.optional", json!(true))],
            SELECTOR_OPTIONAL,
        ),
        refuse(
            S,
            "empty policy key",
            &[("spec.SRC.verificationPolicyFrom.key", json!(""))],
            SELECTOR_EMPTY,
        ),
        refuse(
            S,
            "optional policy selector",
            &[("spec.SRC.verificationPolicyFrom.optional", json!(true))],
            SELECTOR_OPTIONAL,
        ),
        accept(
            S,
            "policy selector optional: false",
            &[("spec.SRC.verificationPolicyFrom.optional", json!(false))],
        ),
        refuse(
            S,
            "empty CA name",
            &[(
                "spec.SRC.transport",
                json!({"caFrom": {"name": "", "key": "ca.pem"}}),
            )],
            SELECTOR_EMPTY,
        ),
        refuse(
            S,
            "optional CA",
            &[(
                "spec.SRC.transport",
                json!({"caFrom": {"name": "ca", "key": "ca.pem", "optional": true}}),
            )],
            SELECTOR_OPTIONAL,
        ),
        refuse(
            S,
            "plainHTTP with caFrom",
            &[("spec.SRC.transport", json!({"plainHTTP": true, "caFrom": ca}))],
            PLAIN_HTTP,
        ),
        accept(
            S,
            "plainHTTP alone",
            &[("spec.SRC.transport", json!({"plainHTTP": true}))],
        ),
        accept(
            S,
            "plainHTTP false with caFrom",
            &[("spec.SRC.transport", json!({"plainHTTP": false, "caFrom": ca}))],
        ),
        refuse(
            S,
            "client certificate",
            &[(
                "spec.SRC.transport",
                json!({"clientCertificateFrom": {"name": "c", "key": "k"}}),
            )],
            "!has(self.clientCertificateFrom)",
        ),
        // The reserved field's own selector rules still run when it is present with bad values.
        refuse(
            S,
            "client certificate, empty",
            &[(
                "spec.SRC.transport",
                json!({"clientCertificateFrom": {"name": "", "key": "k", "optional": true}}),
            )],
            SELECTOR_EMPTY,
        ),
        refuse(
            S,
            "client certificate, optional",
            &[(
                "spec.SRC.transport",
                json!({"clientCertificateFrom": {"name": "c", "key": "k", "optional": true}}),
            )],
            SELECTOR_OPTIONAL,
        ),
        refuse(
            S,
            "DockerConfigJSON without key",
            &[(
                "spec.SRC.registryAuthFrom",
                json!({"name": "r", "mode": "DockerConfigJSON"}),
            )],
            DOCKER,
        ),
        refuse(
            S,
            "DockerConfigJSON with empty key",
            &[(
                "spec.SRC.registryAuthFrom",
                json!({"name": "r", "mode": "DockerConfigJSON", "dockerConfigJSONKey": ""}),
            )],
            DOCKER,
        ),
        accept(
            S,
            "DockerConfigJSON with key",
            &[(
                "spec.SRC.registryAuthFrom",
                json!({"name": "r", "mode": "DockerConfigJSON", "dockerConfigJSONKey": ".dockerconfigjson"}),
            )],
        ),
        accept(
            S,
            "Environment without DockerConfigJSON key",
            &[("spec.SRC.registryAuthFrom", json!({"name": "r"}))],
        ),
        refuse(
            S,
            "connectTimeout > deadline",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(30)),
                ("spec.execution.connectTimeout", json!("31s")),
                ("spec.policy.lockTimeout", json!("1s")),
            ],
            CONNECT_DEADLINE,
        ),
        accept(
            S,
            "connectTimeout = deadline",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(30)),
                ("spec.execution.connectTimeout", json!("30s")),
                ("spec.policy.lockTimeout", json!("30s")),
            ],
        ),
        refuse(
            S,
            "lockTimeout > deadline",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(30)),
                ("spec.execution.connectTimeout", json!("1s")),
                ("spec.policy.lockTimeout", json!("31s")),
            ],
            LOCK_DEADLINE,
        ),
        refuse(
            S,
            "connectTimeout > 10m",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(3600)),
                ("spec.execution.connectTimeout", json!("10m1s")),
                ("spec.policy.lockTimeout", json!("1m")),
            ],
            "duration(self) >= duration('1s') && duration(self) <= duration('10m')",
        ),
        accept(
            S,
            "connectTimeout 10m",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(3600)),
                ("spec.execution.connectTimeout", json!("10m")),
                ("spec.policy.lockTimeout", json!("1m")),
            ],
        ),
        refuse(
            S,
            "retry 4s",
            &[("spec.execution.failureRetryInterval", json!("4s"))],
            "duration(self) >= duration('5s') && duration(self) <= duration('1h')",
        ),
        accept(
            S,
            "retry 1h",
            &[("spec.execution.failureRetryInterval", json!("1h"))],
        ),
        refuse(
            S,
            "interval 9s",
            &[("spec.interval", json!("9s"))],
            "duration(self) >= duration('10s') && duration(self) <= duration('24h')",
        ),
        refuse(
            S,
            "interval 24h1s",
            &[("spec.interval", json!("24h0m1s"))],
            "duration(self) >= duration('10s') && duration(self) <= duration('24h')",
        ),
        accept(S, "interval 24h", &[("spec.interval", json!("24h"))]),
        refuse(
            S,
            "interval not a duration",
            &[("spec.interval", json!("daily"))],
            "duration(self) >= duration('10s')",
        ),
        refuse(
            S,
            "kubernetes.io label",
            &[(
                "spec.execution.podMetadata",
                json!({"labels": {"kubernetes.io/x": "a"}}),
            )],
            RESERVED,
        ),
        refuse(
            S,
            "k8s.io subdomain label",
            &[(
                "spec.execution.podMetadata",
                json!({"labels": {"node.k8s.io/x": "a"}}),
            )],
            RESERVED,
        ),
        refuse(
            S,
            "controller-uid label",
            &[(
                "spec.execution.podMetadata",
                json!({"labels": {"controller-uid": "a"}}),
            )],
            RESERVED,
        ),
        refuse(
            S,
            "ptah.run annotation",
            &[(
                "spec.execution.podMetadata",
                json!({"annotations": {"ptah.run/x": "a"}}),
            )],
            RESERVED,
        ),
        refuse(
            S,
            "job-name annotation",
            &[(
                "spec.execution.podMetadata",
                json!({"annotations": {"job-name": "a"}}),
            )],
            RESERVED,
        ),
        accept(
            S,
            "look-alike keys",
            &[(
                "spec.execution.podMetadata",
                json!({"labels": {"notkubernetes.io/x": "a", "example.com/job-name": "b", "controller-uid-x": "c"}, "annotations": {"k8s.io.example.com/x": "d"}}),
            )],
        ),
        refuse(
            S,
            "annotation over 1024 bytes",
            &[(
                "spec.execution.podMetadata",
                json!({"annotations": {"example.com/a": "é".repeat(513)}}),
            )],
            "size(bytes(self[k])) <= 1024",
        ),
        accept(
            S,
            "annotation of 1024 bytes",
            &[(
                "spec.execution.podMetadata",
                json!({"annotations": {"example.com/a": "é".repeat(512)}}),
            )],
        ),
        refuse(
            S,
            "name of 64",
            &[("metadata.name", json!("n".repeat(64)))],
            "size(self.metadata.name) <= 63",
        ),
        accept(S, "name of 63", &[("metadata.name", json!("n".repeat(63)))]),
    ];
    let mut out = Vec::new();
    for template in templates {
        for (kind, src) in [(S, "desired"), (M, "artifact")] {
            out.push(Case {
                kind,
                what: template.what,
                edits: template
                    .edits
                    .iter()
                    .map(|(p, v)| (p.replace(".SRC.", &format!(".{src}.")), v.clone()))
                    .collect(),
                update: template.update,
                refused_by: template.refused_by,
            });
        }
    }
    out
}

fn cases() -> Vec<Case> {
    let hex9 = format!("sha256:{}", "9".repeat(64));
    let mut cases = shared_cases();
    cases.extend([
        refuse(
            S,
            "empty dev URL key",
            &[("spec.dev.urlFrom.key", json!(""))],
            SELECTOR_EMPTY,
        ),
        refuse(
            S,
            "lockTimeout 0s",
            &[("spec.policy.lockTimeout", json!("0s"))],
            "duration(self) >= duration('1s') && duration(self) <= duration('10m')",
        ),
        refuse(
            S,
            "lockTimeout 10m1s",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(3600)),
                ("spec.policy.lockTimeout", json!("10m1s")),
            ],
            "duration(self) >= duration('1s') && duration(self) <= duration('10m')",
        ),
        refuse(
            M,
            "default 5m lockTimeout > deadline",
            &[("spec.execution.activeDeadlineSeconds", json!(299))],
            LOCK_DEADLINE,
        ),
        accept(
            M,
            "default 5m lockTimeout = deadline",
            &[("spec.execution.activeDeadlineSeconds", json!(300))],
        ),
        refuse(
            M,
            "lockTimeout 1h1s",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(86400)),
                ("spec.policy.lockTimeout", json!("1h0m1s")),
            ],
            "duration(self) >= duration('1s') && duration(self) <= duration('1h')",
        ),
        accept(
            M,
            "lockTimeout 1h",
            &[
                ("spec.execution.activeDeadlineSeconds", json!(86400)),
                ("spec.policy.lockTimeout", json!("1h")),
            ],
        ),
        refuse(
            S,
            "truncated with 63",
            &[(
                "status",
                json!({"target": {"driftFindings": findings(63), "driftFindingsTruncated": true}}),
            )],
            "driftFindingsTruncated",
        ),
        refuse(
            S,
            "truncated with none",
            &[("status", json!({"target": {"driftFindingsTruncated": true}}))],
            "driftFindingsTruncated",
        ),
        accept(
            S,
            "not truncated",
            &[(
                "status",
                json!({"target": {"driftFindings": findings(3), "driftFindingsTruncated": false}}),
            )],
        ),
        update(refuse(
            "PtahSchemaPlan",
            "changed plan",
            &[("spec.statementCount", json!(4))],
            "self == oldSelf",
        )),
        update(refuse(
            "PtahSchemaPlanChunk",
            "changed chunk",
            &[("spec.data", json!("AAAA"))],
            "self == oldSelf",
        )),
        update(refuse(
            "PtahResultRecord",
            "changed result record",
            &[("spec.data", json!("AAAA"))],
            "self == oldSelf",
        )),
        refuse(
            "PtahResultRecord",
            "an intent record holding a chunk's index and data",
            &[("spec.type", json!("intent"))],
            "has(self.intent)",
        ),
        refuse(
            "PtahResultRecord",
            "a complete record holding a chunk's index and data",
            &[("spec.type", json!("complete"))],
            "has(self.index) && has(self.data)",
        ),
        accept("PtahResultRecord", "a chunk", &[("spec.index", json!(3))]),
        update(refuse(
            "PtahSchemaApproval",
            "changed approval",
            &[("spec.planFingerprint", json!(hex9))],
            "self == oldSelf",
        )),
        update(refuse(
            "PtahMigrationPlan",
            "changed plan",
            &[("spec.currentVersion", json!(1))],
            "self == oldSelf",
        )),
        update(refuse(
            "PtahMigrationApproval",
            "changed approval",
            &[("spec.historyFingerprint", json!(hex9))],
            "self == oldSelf",
        )),
        update(refuse(
            "PtahMigrationRunAcknowledgment",
            "changed ack",
            &[("spec.operationID", json!(hex9))],
            "self == oldSelf",
        )),
        update(refuse(
            "PtahRealm",
            "changed engine",
            &[("spec.engine", json!("PostgreSQL"))],
            "self == oldSelf",
        )),
        update(accept(
            "PtahRealm",
            "changed namespaces",
            &[("spec.namespaces", json!(["shop"]))],
        )),
        update(accept(
            "PtahSchemaPlan",
            "labels and status may change",
            &[
                ("metadata.labels", json!({"a": "b"})),
                ("status", json!({"observedGeneration": 1})),
            ],
        )),
    ]);
    cases
}

fn apply(object: &mut Value, edits: &[Edit]) {
    for (path, value) in edits {
        let path = path.as_str();
        if value.is_null() {
            remove(object, path);
        } else {
            set(object, path, value.clone());
        }
    }
}

fn run(case: &Case) -> Vec<Refusal> {
    let old = valid_example(case.kind);
    let mut object = old.clone();
    apply(&mut object, &case.edits);
    cel_refusals(&schema_of(case.kind), &object, case.update.then_some(&old))
}

#[test]
fn each_rule_refuses_and_accepts_as_specified() {
    let mut failures = Vec::new();
    for case in cases() {
        let refusals = run(&case);
        match case.refused_by {
            None if !refusals.is_empty() => {
                failures.push(format!("{} / {}: refused: {refusals:?}", case.kind, case.what))
            }
            Some(rule) if !refusals.iter().any(|r| r.rule.contains(rule)) => failures.push(format!(
                "{} / {}: not refused by {rule:?}: {refusals:?}",
                case.kind, case.what
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn transition_rules_do_not_fire_on_create() {
    for kind in [
        "PtahSchemaPlan",
        "PtahSchemaPlanChunk",
        "PtahSchemaApproval",
        "PtahRealm",
        "PtahResultRecord",
    ] {
        let mut object = valid_example(kind);
        set(&mut object, "metadata.name", json!("another"));
        assert!(cel_refusals(&schema_of(kind), &object, None).is_empty(), "{kind}");
    }
}

#[test]
fn every_rule_in_the_crds_has_a_refusing_case() {
    let mut refused_rules = BTreeSet::new();
    for case in cases().iter().filter(|c| c.refused_by.is_some()) {
        for refusal in run(case) {
            refused_rules.insert((case.kind, refusal.rule));
        }
    }
    let mut missing = Vec::new();
    for (kind, schema) in schemas() {
        for (path, rule) in rules(&schema) {
            // Status blocks embed spec types (selectors, registry auth) whose rules the spec
            // cases of the same kind already refuse; every other rule needs a case of its kind.
            let covered = refused_rules
                .iter()
                .any(|(k, r)| r == &rule && *k == kind.as_str());
            if !covered {
                missing.push(format!("{kind} {path}: {rule}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "rules without a refusing case:\n{}",
        missing.join("\n")
    );
}
