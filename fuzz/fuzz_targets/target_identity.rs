//! The runner derives a target identity from the database URL it is handed before anything else
//! runs, and the manager derives it from the realm's Secret; the two must agree. Invariants:
//! - derivation is deterministic (equal identities, equal digests) and every accepted identity
//!   has a digest;
//! - a refusal is a typed error with a bounded message that never quotes the password;
//! - the password is not part of the identity: the same URL with another password (or none)
//!   derives the same identity.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_dataplane::TargetIdentity;
use ptah_fuzz::assert_refusal_message;

/// A password no input spells by chance.
const OTHER_PASSWORD: &str = "fuzz-other-password-3b9e";

fuzz_target!(|data: &[u8]| {
    let Some(text) = ptah_fuzz::text(data) else { return };
    let derived = TargetIdentity::from_url(text);
    assert_eq!(
        derived,
        TargetIdentity::from_url(text),
        "derivation is deterministic"
    );
    let password = url::Url::parse(text)
        .ok()
        .and_then(|u| u.password().map(str::to_owned));
    let identity = match derived {
        Ok(identity) => identity,
        Err(err) => {
            let message = err.to_string();
            assert_refusal_message(&message, text.len());
            if let Some(pw) = password.filter(|pw| pw.len() >= 8) {
                assert!(!message.contains(&pw), "a refusal quotes the password: {message}");
            }
            return;
        }
    };
    let digest = identity.digest().expect("an accepted identity has a digest");
    assert_eq!(
        identity.digest().ok(),
        Some(digest),
        "the digest is deterministic"
    );
    let mut url = url::Url::parse(text).expect("an accepted URL is a URL");
    if url.set_password(Some(OTHER_PASSWORD)).is_ok() {
        let other = TargetIdentity::from_url(url.as_str());
        assert_eq!(other.as_ref(), Ok(&identity), "the password changed the identity");
    }
});
