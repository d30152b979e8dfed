//! The result receiver reads bodies and client-certificate bindings from operation Pods. Two
//! modes (a first byte with the low bit set selects the second):
//! - arbitrary body bytes, sent with their own sha256 so the digest check passes: an accepted body
//!   re-encodes to exactly the received bytes and digest (canonical JSON has one spelling), and
//!   its records reassemble to them; a refusal's message is bounded without regard to the body's
//!   length, since it must never quote the body (a plan's SQL, row values);
//! - an arbitrary URI SAN: an accepted binding writes back exactly that URI; a refusal's message
//!   is bounded the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_fingerprint::Digest;
use ptah_fuzz::{MESSAGE_OVERHEAD, assert_refusal_message};
use ptah_resultdelivery::{ResultBinding, ResultBody, reassemble, split};

fn refused(message: &str) {
    assert_refusal_message(message, 0);
    assert!(message.len() <= MESSAGE_OVERHEAD, "a refusal quoted its input: {message}");
}

fn body(bytes: &[u8]) {
    let digest = Digest::of(bytes);
    let decoded = match ResultBody::decode(bytes, &digest.to_string()) {
        Ok(decoded) => decoded,
        Err(err) => return refused(&err.to_string()),
    };
    let encoded = decoded.encode().expect("an accepted body encodes");
    assert_eq!(encoded.bytes, bytes, "an accepted body is its own canonical form");
    assert_eq!(encoded.digest, digest);
    let (intent, chunks) = split(&encoded);
    let numbered: Vec<(u32, &[u8])> = (0..).zip(chunks).collect();
    assert_eq!(reassemble(&intent, &numbered).expect("its records reassemble"), bytes);
}

fn uri(bytes: &[u8]) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    match ResultBinding::from_uri(text) {
        Ok(binding) => assert_eq!(binding.to_uri().expect("an accepted binding writes"), text),
        Err(err) => refused(&err.to_string()),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    if first & 1 == 0 { body(rest) } else { uri(rest) }
});
