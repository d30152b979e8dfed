//! The executor's database URL parser (`ptah_engine::DatabaseUrl`). Invariants:
//! - parsing is deterministic, and a refusal is a typed error with a bounded message that never
//!   quotes the password;
//! - an accepted URL names a host, a user and exactly one database, and its `Display`/`Debug`
//!   mask the password;
//! - the password changes nothing else: the same URL with another password parses to the same
//!   host, port, user, database, TLS mode and application name, and `scrub` removes it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_engine::DatabaseUrl;
use ptah_fuzz::assert_refusal_message;

/// A password no input spells by chance.
const OTHER_PASSWORD: &str = "fuzz-other-password-3b9e";

fuzz_target!(|data: &[u8]| {
    let Some(text) = ptah_fuzz::text(data) else { return };
    let parsed = DatabaseUrl::parse(text);
    let again = DatabaseUrl::parse(text);
    let password = url::Url::parse(text)
        .ok()
        .and_then(|u| u.password().map(str::to_owned));
    let db = match (parsed, again) {
        (Ok(a), Ok(b)) => {
            assert!(a == b, "parsing is deterministic");
            a
        }
        (Err(a), Err(b)) => {
            let message = a.to_string();
            assert_eq!(message, b.to_string(), "parsing is deterministic");
            assert_refusal_message(&message, text.len());
            if let Some(pw) = password.filter(|pw| pw.len() >= 8) {
                assert!(!message.contains(&pw), "a refusal quotes the password: {message}");
            }
            return;
        }
        _ => panic!("parsing is not deterministic"),
    };
    assert!(!db.host().is_empty() && !db.user().is_empty());
    assert!(!db.database().is_empty() && !db.database().contains('/'));
    let mut url = url::Url::parse(text).expect("an accepted URL is a URL");
    if url.set_password(Some(OTHER_PASSWORD)).is_ok() {
        let other = DatabaseUrl::parse(url.as_str()).expect("another password is still accepted");
        let shown = format!("{other} {other:?}");
        assert!(
            !shown.contains(OTHER_PASSWORD),
            "Display shows the password: {shown}"
        );
        assert!(
            shown.contains(":***@"),
            "Display does not mark the masked password: {shown}"
        );
        let key = |u: &DatabaseUrl| {
            (
                u.dialect(),
                u.host().to_owned(),
                u.port(),
                u.user().to_owned(),
                u.database().to_owned(),
            )
        };
        assert_eq!(
            key(&other),
            key(&db),
            "the password changed another part of the URL"
        );
        assert_eq!(
            (other.tls(), other.application_name()),
            (db.tls(), db.application_name())
        );
        let scrubbed = other.scrub(&format!("driver said: {OTHER_PASSWORD}!"));
        assert!(!scrubbed.contains(OTHER_PASSWORD), "scrub left the password in");
    }
});
