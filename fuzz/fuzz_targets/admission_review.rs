//! AdmissionReview decoding: the webhook reads bodies the API server sends, but anything that can
//! reach the port can send bytes. Invariants:
//! - decoding is deterministic; a refusal says `malformed AdmissionReview` and is bounded;
//! - a decoded request re-encodes to JSON that decodes to the same request (serialisation is a
//!   fixed point after one decode);
//! - every verdict becomes a response for the request's uid: `Allow` and an empty `Patch` admit
//!   (the patch is carried), `Deny` refuses with exactly its message;
//! - the approver identity taken from its user info has a non-empty username, no empty uid, and
//!   at most 64 non-empty groups, sorted and unique; a refusal is bounded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_admission::{Verdict, approver_from, decode, respond};
use ptah_fuzz::assert_refusal_message;

/// The most groups an approval records (`ptah_admission`'s `review::MAX_GROUPS`, not exported).
const MAX_GROUPS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let decoded = decode(data);
    let request = match (decoded, decode(data)) {
        (Ok(a), Ok(b)) => {
            let same = serde_json::to_value(&a).ok() == serde_json::to_value(&b).ok();
            assert!(same, "decoding is deterministic");
            a
        }
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "decoding is deterministic");
            assert!(a.starts_with("malformed AdmissionReview"), "{a}");
            assert_refusal_message(&a, data.len());
            return;
        }
        _ => panic!("decoding is not deterministic"),
    };
    let json = serde_json::to_value(&request).expect("a decoded request serialises");
    let body = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": json,
    });
    let again = decode(body.to_string().as_bytes()).expect("a re-encoded request decodes");
    assert_eq!(
        serde_json::to_value(&again).ok(),
        Some(json),
        "re-encoding changed the request"
    );

    for verdict in [
        Verdict::Allow,
        Verdict::Patch(json_patch::Patch(Vec::new())),
        Verdict::deny("fuzz: no"),
    ] {
        let denied = matches!(verdict, Verdict::Deny(_));
        let patched = matches!(verdict, Verdict::Patch(_));
        let review = respond(&request, verdict);
        let response = review.response.expect("a response");
        assert_eq!(response.uid, request.uid, "the response answers another request");
        assert_eq!(response.allowed, !denied);
        if denied {
            assert_eq!(response.result.message, "fuzz: no");
        }
        assert_eq!(response.patch.is_some(), patched);
        serde_json::to_vec(&response).expect("a response serialises");
    }

    match approver_from(&request.user_info) {
        Ok(approver) => {
            assert!(!approver.username.is_empty());
            assert!(approver.uid.as_deref().is_none_or(|u| !u.is_empty()));
            assert!(approver.groups.len() <= MAX_GROUPS);
            assert!(approver.groups.iter().all(|g| !g.is_empty()));
            assert!(
                approver.groups.windows(2).all(|w| w[0] < w[1]),
                "groups not sorted and unique"
            );
        }
        Err(err) => assert_refusal_message(&err, data.len()),
    }
});
