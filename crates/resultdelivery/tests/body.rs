//! The body a runner delivers: canonical JSON with its digest, and every way a receiver refuses
//! one. No refusal may quote the body, which holds a plan's SQL.

mod common;

use common::{binding, plan_body};
use ptah_dataplane::{Operation, OperationId};
use ptah_fingerprint::Digest;
use ptah_resultdelivery::{BodyError, MAX_BODY_BYTES, ResultBody};

const SQL: &str = "CREATE TABLE secret_orders (card text);\n";

fn encoded() -> (Vec<u8>, String) {
    let body = plan_body(SQL).encode().expect("encode");
    (body.bytes, body.digest.to_string())
}

fn refused(bytes: &[u8], digest: &str) -> BodyError {
    let err = ResultBody::decode(bytes, digest).expect_err("refused");
    let text = err.to_string();
    assert!(
        !text.contains("secret_orders"),
        "a refusal quoted the body: {text}"
    );
    err
}

/// `bytes` with its own (correct) digest, so only what follows the digest check is tested.
fn with_digest(bytes: &[u8]) -> (Vec<u8>, String) {
    (bytes.to_vec(), Digest::of(bytes).to_string())
}

#[test]
fn a_body_decodes_to_what_was_encoded_and_again_to_the_same_bytes() {
    let (bytes, digest) = encoded();
    let back = ResultBody::decode(&bytes, &digest).expect("decode");
    assert_eq!(back, plan_body(SQL));
    assert_eq!(back.encode().expect("again").bytes, bytes);
}

#[test]
fn a_digest_that_names_other_bytes_or_is_malformed_is_refused() {
    let (bytes, _) = encoded();
    let other = Digest::of(b"other").to_string();
    assert!(matches!(
        refused(&bytes, &other),
        BodyError::DigestMismatch { .. }
    ));
    let (_, digest) = encoded();
    assert_eq!(
        refused(&bytes, &digest.to_uppercase()),
        BodyError::MalformedDigest
    );
    assert_eq!(refused(&bytes, "md5:abc"), BodyError::MalformedDigest);
}

#[test]
fn json_that_is_not_canonical_is_refused() {
    let (bytes, _) = encoded();
    let text = String::from_utf8(bytes).expect("utf8");
    let spaced = text.replacen(',', " ,", 1);
    let (b, d) = with_digest(spaced.as_bytes());
    assert_eq!(refused(&b, &d), BodyError::NotCanonical);
    let pretty = serde_json::to_vec_pretty(&plan_body(SQL)).expect("pretty");
    let (b, d) = with_digest(&pretty);
    assert_eq!(refused(&b, &d), BodyError::NotCanonical);
    let unknown = text.replacen("{", r#"{"aaa":1,"#, 1);
    let (b, d) = with_digest(unknown.as_bytes());
    assert!(matches!(refused(&b, &d), BodyError::Malformed(m) if m.contains("Data")));
    let nested_unknown = text.replacen(r#""payload":{"#, r#""payload":{"aaa":1,"#, 1);
    let (b, d) = with_digest(nested_unknown.as_bytes());
    assert!(matches!(refused(&b, &d), BodyError::Malformed(_)));
    let duplicate = text.replacen(r#""binding":{"#, r#""binding":{"name":"x","#, 1);
    let (b, d) = with_digest(duplicate.as_bytes());
    assert!(matches!(refused(&b, &d), BodyError::Malformed(_)));
    let (b, d) = with_digest(b"not json");
    assert!(matches!(refused(&b, &d), BodyError::Malformed(_)));
}

#[test]
fn a_body_larger_than_the_bound_is_refused_before_its_digest_is_computed() {
    let big = vec![b' '; MAX_BODY_BYTES + 1];
    assert_eq!(
        refused(&big, "not even a digest"),
        BodyError::TooLarge(MAX_BODY_BYTES + 1)
    );
}

#[test]
fn a_payload_of_another_operation_than_its_binding_is_refused_both_ways() {
    let mut body = plan_body(SQL);
    body.binding.claim.operation_id = OperationId::new("op-2").expect("id");
    assert!(matches!(body.encode(), Err(BodyError::OtherOperation { .. })));
    let mut body = plan_body(SQL);
    body.binding.claim.operation = Operation::Apply;
    let err = body.encode().expect_err("refused");
    assert_eq!(
        err.to_string(),
        "the payload is a plan (op-1) result, the binding names apply (op-1)"
    );
    // A receiver re-checks what a runner should have refused: the canonical bytes of such a body.
    let bytes = ptah_fingerprint::canonical_json(&body).expect("json");
    let (b, d) = with_digest(&bytes);
    assert!(matches!(refused(&b, &d), BodyError::OtherOperation { .. }));
    let mut body = plan_body(SQL);
    body.payload.child_exit_code = -7;
    let bytes = ptah_fingerprint::canonical_json(&body).expect("json");
    let (b, d) = with_digest(&bytes);
    assert!(matches!(refused(&b, &d), BodyError::Payload(_)));
    let mut body = plan_body(SQL);
    body.binding = binding();
    body.binding.resource.generation = -1;
    let bytes = ptah_fingerprint::canonical_json(&body).expect("json");
    let (b, d) = with_digest(&bytes);
    assert!(matches!(refused(&b, &d), BodyError::Binding(_)));
}
