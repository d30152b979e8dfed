//! The AdmissionReview envelope: decoding, the three verdicts, and the requester's identity.

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use ptah_api::shared::Approver;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The most groups an approval records (the CRD's bound).
pub const MAX_GROUPS: usize = 64;

/// A webhook's decision about one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Admit unchanged.
    Allow,
    /// Admit with this JSON patch applied (mutating webhooks only).
    Patch(json_patch::Patch),
    /// Refuse; the message reaches the requester and names the reason.
    Deny(String),
}

impl Verdict {
    /// A refusal with `message`.
    pub fn deny(message: impl Into<String>) -> Self {
        Verdict::Deny(message.into())
    }
}

/// Decodes an AdmissionReview body into its request; the error says what is malformed. A body in
/// which an object repeats a key is malformed: the API server never sends one, and readers
/// disagree on which copy counts (the flattened type fields of an object even lose both).
pub fn decode(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, String> {
    serde_json::from_slice::<UniqueKeys>(body).map_err(|e| format!("malformed AdmissionReview: {e}"))?;
    let review: AdmissionReview<DynamicObject> =
        serde_json::from_slice(body).map_err(|e| format!("malformed AdmissionReview: {e}"))?;
    review
        .try_into()
        .map_err(|_| "malformed AdmissionReview: no request".to_owned())
}

/// A JSON document walked only to refuse an object that repeats a key.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key) {
                // The key itself is not quoted: it is the sender's text, of any length.
                return Err(serde::de::Error::custom("an object repeats a key"));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }
}

/// The response review for `request` carrying `verdict`.
pub fn respond(
    request: &AdmissionRequest<DynamicObject>,
    verdict: Verdict,
) -> AdmissionReview<DynamicObject> {
    let response = AdmissionResponse::from(request);
    let response = match verdict {
        Verdict::Allow => response,
        Verdict::Deny(message) => response.deny(message),
        Verdict::Patch(patch) => match response.clone().with_patch(patch) {
            Ok(patched) => patched,
            // A patch that cannot be serialized must not admit the object unstamped.
            Err(e) => response.deny(format!("internal error: cannot encode the patch: {e}")),
        },
    };
    response.into_review()
}

/// The approver identity of `user`: username, UID (absent when empty), groups sorted and
/// de-duplicated. Refuses an anonymous requester and more than [`MAX_GROUPS`] groups, because an
/// approval must record exactly who approved rather than a truncated identity.
pub fn approver_from(user: &UserInfo) -> Result<Approver, String> {
    let username = user.username.clone().unwrap_or_default();
    if username.is_empty() {
        return Err("the request carries no username".to_owned());
    }
    let mut groups: Vec<String> = user
        .groups
        .iter()
        .flatten()
        .filter(|g| !g.is_empty())
        .cloned()
        .collect();
    groups.sort();
    groups.dedup();
    if groups.len() > MAX_GROUPS {
        return Err(format!(
            "the requester is in {} groups, more than the {MAX_GROUPS} an approval can record",
            groups.len()
        ));
    }
    Ok(Approver {
        username,
        uid: user.uid.clone().filter(|u| !u.is_empty()),
        groups,
    })
}

/// The request's object as JSON (all fields, including ones this build does not model).
pub(crate) fn object_json(object: Option<&DynamicObject>, which: &str) -> Result<Value, String> {
    let object = object.ok_or_else(|| format!("the request has no {which}"))?;
    serde_json::to_value(object).map_err(|e| format!("cannot read the {which}: {e}"))
}

/// `value` read as the typed kind `K`, or a refusal naming what is malformed.
pub(crate) fn typed<K: DeserializeOwned>(value: &Value, kind: &str) -> Result<K, String> {
    serde_json::from_value(value.clone()).map_err(|e| format!("malformed {kind}: {e}"))
}

/// The label `key` of `object` (JSON), if set.
pub(crate) fn label<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object
        .pointer("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, uid: Option<&str>, groups: &[&str]) -> UserInfo {
        UserInfo {
            username: Some(name.to_owned()),
            uid: uid.map(str::to_owned),
            groups: Some(groups.iter().map(|g| (*g).to_owned()).collect()),
            extra: None,
        }
    }

    /// Found by the `admission_review` fuzz target: an object with `kind` twice decoded to a
    /// request whose re-encoding decoded to another one.
    #[test]
    fn a_repeated_key_anywhere_is_malformed() {
        let review = |object: &str| {
            format!(
                r#"{{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {{
                    "uid": "u", "kind": {{"group": "g", "version": "v", "kind": "K"}},
                    "resource": {{"group": "g", "version": "v", "resource": "ks"}},
                    "operation": "CREATE", "userInfo": {{"username": "alice"}}, "object": {object}}}}}"#
            )
        };
        let once = review(r#"{"apiVersion": "g/v", "kind": "K", "metadata": {"name": "a"}}"#);
        assert!(decode(once.as_bytes()).is_ok(), "{once}");
        for object in [
            r#"{"apiVersion": "g/v", "kind": "K", "kind": "K", "metadata": {"name": "a"}}"#,
            r#"{"apiVersion": "g/v", "kind": "K", "metadata": {"name": "a", "name": "b"}}"#,
            r#"{"apiVersion": "g/v", "kind": "K", "spec": [{"x": 1, "x": 2}]}"#,
        ] {
            let err = decode(review(object).as_bytes()).expect_err(object);
            assert!(
                err.starts_with("malformed AdmissionReview: an object repeats a key"),
                "{err}"
            );
        }
    }

    #[test]
    fn groups_are_sorted_deduplicated_and_bounded() {
        let a = approver_from(&user("alice", Some("u1"), &["b", "a", "b", ""])).expect("identity");
        assert_eq!(a.groups, vec!["a", "b"]);
        assert_eq!(a.uid.as_deref(), Some("u1"));
        let many: Vec<String> = (0..65).map(|i| format!("g{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let err = approver_from(&user("alice", None, &refs)).expect_err("too many groups");
        assert!(err.contains("65 groups"), "{err}");
        assert_eq!(
            approver_from(&user("", None, &[])).err().as_deref(),
            Some("the request carries no username")
        );
        assert_eq!(
            approver_from(&user("bob", Some(""), &[])).expect("identity").uid,
            None
        );
    }

    #[test]
    fn malformed_reviews_are_errors() {
        assert!(decode(b"not json").expect_err("refused").contains("malformed"));
        assert_eq!(
            decode(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#)
                .err()
                .as_deref(),
            Some("malformed AdmissionReview: no request")
        );
    }

    #[test]
    fn verdicts_become_responses() {
        let body = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "r1", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "operation": "CREATE", "userInfo": {"username": "u"},
                "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
            }
        });
        let req = decode(body.to_string().as_bytes()).expect("decodes");
        let denied = respond(&req, Verdict::deny("no"));
        let r = denied.response.expect("response");
        assert!(!r.allowed);
        assert_eq!(r.uid, "r1");
        assert_eq!(r.result.message, "no");
        let patched = respond(&req, Verdict::Patch(json_patch::Patch(Vec::new())));
        assert!(patched.response.expect("response").patch.is_some());
    }
}
