//! Test fixtures shared by the rule tests: digests and one plan's execution binding.

use serde_json::{Value, json};

/// `sha256:ccc…c`.
pub fn d(c: char) -> String {
    format!("sha256:{}", c.to_string().repeat(64))
}

/// The execution binding every fixture plan carries, as spec fields.
pub fn binding_json() -> Value {
    json!({
        "artifactDigest": d('a'), "coordinationDigest": d('b'), "targetIdentityDigest": d('3'),
        "policyFingerprint": d('4'), "verificationPolicyUID": "pol-uid", "verificationPolicyDigest": d('e'),
        "executionBindingID": "v1-0123456789abcdef0123456789abcdef",
        "controllerImage": "m:1", "controllerRevision": "1", "controllerStateVersion": 1,
        "ptahVersion": "1.4.2", "executorImage": format!("e@{}", d('f')),
        "runnerImage": format!("r@{}", d('5')), "runnerProtocolVersion": 5
    })
}

/// `base` with every field of `extra` set (shallow).
pub fn merged(mut base: Value, extra: &Value) -> Value {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    base
}

/// The refusal of `r`, failing the test when it was admitted.
pub fn err_of(r: Result<(), String>) -> String {
    r.expect_err("refused")
}
