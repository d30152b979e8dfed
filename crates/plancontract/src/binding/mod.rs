//! The schema plan fingerprint: what an approval is bound to (reference §3.4).
//!
//! The plan spec comes in through `Serialize` and the bound values are read by their wire names:
//! that keeps this crate free of the API crate (and so of kube), and the wire names are the CRD's
//! contract, which cannot change without a new API version. The dev-dependency tests pin them
//! against `ptah_api::PtahSchemaPlanSpec`.

use ptah_fingerprint::Fingerprint;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::CONTRACT_VERSION;

/// The bound fields: the name in the binding document, then the field's name in the plan spec.
///
/// Excluded on purpose: the manager image and revision and the runner image (a manager patch
/// release keeps plans and approvals), the schema name (the UID identifies it), the dialect, and
/// the chunk layout and size (the content digest covers the bytes).
pub const BOUND_FIELDS: &[(&str, &str)] = &[
    ("plan_content_digest", "contentDigest"),
    ("artifact_digest", "artifactDigest"),
    ("coordination_digest", "coordinationDigest"),
    ("target_identity_digest", "targetIdentityDigest"),
    ("actual_state_fingerprint", "actualStateFingerprint"),
    ("desired_state_fingerprint", "desiredStateFingerprint"),
    ("policy_fingerprint", "policyFingerprint"),
    ("verification_policy_uid", "verificationPolicyUID"),
    ("verification_policy_digest", "verificationPolicyDigest"),
    ("execution_binding_id", "executionBindingID"),
    ("controller_state_version", "controllerStateVersion"),
    ("ptah_version", "ptahVersion"),
    ("executor_image", "executorImage"),
    ("runner_protocol_version", "runnerProtocolVersion"),
    ("destructive", "destructive"),
    ("statement_count", "statementCount"),
];

/// The spec's privilege-change set, by its wire name.
const PRIVILEGE_CHANGES: &str = "privilegeChanges";

/// The spec's severity, by its wire name: bound when present (`BySeverity` decides by it), and
/// left out of the document when absent, so that plans published before it existed keep their
/// fingerprints and approvals.
const SEVERITY: &str = "severity";

/// The `PlanBinding` document the fingerprint hashes, from a plan spec (`PtahSchemaPlanSpec` or
/// its JSON).
///
/// `{contract_version: 3, schema_uid, <BOUND_FIELDS>, privilege_changes: sorted set, severity?}`.
/// A bound field the spec lacks is `null` (a typed spec has them all; the API server refuses one
/// without); `severity` is there only when the spec has one.
pub fn binding<S: Serialize + ?Sized>(schema_uid: &str, spec: &S) -> Value {
    // A type whose Serialize fails (a map with non-string keys) binds nothing but the constants;
    // plan specs always serialize.
    let spec = serde_json::to_value(spec).unwrap_or(Value::Null);
    let field = |name: &str| spec.get(name).cloned().unwrap_or(Value::Null);
    let mut doc = Map::new();
    doc.insert("contract_version".into(), CONTRACT_VERSION.into());
    doc.insert("schema_uid".into(), schema_uid.into());
    for (bound, wire) in BOUND_FIELDS {
        doc.insert((*bound).into(), field(wire));
    }
    // A set: order and repetition carry no meaning, so neither may change the fingerprint. The
    // spec omits an empty set.
    let mut privileges: Vec<String> = match field(PRIVILEGE_CHANGES) {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    privileges.sort_unstable();
    privileges.dedup();
    doc.insert("privilege_changes".into(), privileges.into());
    match field(SEVERITY) {
        Value::Null => {}
        severity => {
            doc.insert("severity".into(), severity);
        }
    }
    Value::Object(doc)
}

/// Schema plan fingerprint = sha256 of canonical JSON `PlanBinding` (reference §3.4).
pub fn plan_fingerprint<S: Serialize + ?Sized>(schema_uid: &str, spec: &S) -> Fingerprint {
    let doc = binding(schema_uid, spec);
    // A serde_json Value holds no NaN or infinity and only string keys, the only inputs without
    // a canonical form.
    #[allow(clippy::expect_used)]
    let fp = Fingerprint::of(&doc).expect("a JSON value always has a canonical form");
    fp
}

/// [`plan_fingerprint`] as any type built from a [`Fingerprint`]: where the API's
/// `Sha256Digest` is expected (`spec.fingerprint = fingerprint(uid, &spec)`) it is that. In a
/// comparison name the type (`fingerprint::<_, Sha256Digest>`) or use [`plan_fingerprint`].
pub fn fingerprint<S, R>(schema_uid: &str, spec: &S) -> R
where
    S: Serialize + ?Sized,
    R: From<Fingerprint>,
{
    R::from(plan_fingerprint(schema_uid, spec))
}

#[cfg(test)]
mod tests;
