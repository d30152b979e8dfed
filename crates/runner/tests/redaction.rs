//! Property tests: no generated secret survives redaction in any output form, also when a
//! truncation boundary cuts through it.
//!
//! The secrets use characters that never occur in the filler (`X`, newlines) or in the marker
//! (`[REDACTED]`), so "nothing but filler and markers is left" proves that no byte of any form of
//! the secret survived.

use proptest::prelude::*;
use ptah_runner::{
    bounded::{Bounded, Keep},
    redact::Redactor,
};

const ALLOWED: &str = "X\n[REDACTED]";

fn secret() -> impl Strategy<Value = String> {
    // Lowercase letters, digits and every character URL and JSON encoders treat specially.
    "[a-z0-9 @:/%\"\\\\+&<>?=#!$*,;~'`{}|^é€]{6,40}"
}

/// The forms a program may print a secret in, built with other encoders than the redactor's.
fn forms(secret: &str) -> Vec<String> {
    let mut url = url::Url::parse("postgres://user@host/db").expect("url");
    url.set_password(Some(secret)).expect("password");
    let userinfo = url.password().expect("password").to_owned();
    let query: String = url::form_urlencoded::byte_serialize(secret.as_bytes()).collect();
    let json = serde_json::to_string(secret).expect("json");
    let json = json[1..json.len() - 1].to_owned();
    let all_escaped: String = secret.bytes().map(|b| format!("%{b:02X}")).collect();
    let lower_escaped = all_escaped.to_lowercase();
    let json_of_query = serde_json::to_string(&query).expect("json");
    vec![
        secret.to_owned(),
        userinfo,
        query,
        json,
        all_escaped,
        lower_escaped,
        json_of_query[1..json_of_query.len() - 1].to_owned(),
    ]
}

fn only_filler_left(out: &[u8]) -> bool {
    String::from_utf8_lossy(out).chars().all(|c| ALLOWED.contains(c))
}

/// In a URL, `%` starts an escape: the password a URL carries never contains a literal one, so
/// the URL-borne secrets are drawn without it.
fn as_url_secret(secret: String, via_url: bool) -> String {
    if via_url { secret.replace('%', "") } else { secret }
}

fn redactor_for(secret: &str, via_url: bool) -> Redactor {
    let mut r = Redactor::new();
    if via_url {
        let mut url = url::Url::parse("mysql://app@db:3306/app").expect("url");
        url.set_password(Some(secret)).expect("password");
        r.add_url(url.as_str());
    } else {
        r.add_secret(secret);
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn no_form_survives(secret in secret(), via_url in any::<bool>(), pad in 0usize..50) {
        let secret = as_url_secret(secret, via_url);
        prop_assume!(!secret.is_empty());
        let r = redactor_for(&secret, via_url);
        for form in forms(&secret) {
            let text = format!("{}{form}X\n{form}{}", "X".repeat(pad), "X".repeat(pad));
            let out = r.redact(text.as_bytes());
            prop_assert!(only_filler_left(&out), "form {form:?} survived: {}", String::from_utf8_lossy(&out));
        }
    }

    #[test]
    fn a_secret_cut_by_the_head_bound_is_redacted(secret in secret(), via_url in any::<bool>(), cut in 1usize..200, which in 0usize..7) {
        let secret = as_url_secret(secret, via_url);
        prop_assume!(!secret.is_empty());
        let r = redactor_for(&secret, via_url);
        let form = forms(&secret).swap_remove(which);
        let text = format!("XXXX\n{form}XXXX");
        let limit = 5 + cut % form.len().max(1);
        let mut b = Bounded::new(Keep::Head, limit);
        b.push(text.as_bytes());
        let out = b.redacted(&r);
        prop_assert!(only_filler_left(&out), "cut {form:?} at {limit}: {}", String::from_utf8_lossy(&out));
    }

    #[test]
    fn a_secret_cut_by_the_tail_bound_is_redacted(secret in secret(), via_url in any::<bool>(), cut in 1usize..200, which in 0usize..7) {
        let secret = as_url_secret(secret, via_url);
        prop_assume!(!secret.is_empty());
        let r = redactor_for(&secret, via_url);
        let form = forms(&secret).swap_remove(which);
        let text = format!("XXXX{form}\nXXXX");
        let limit = 5 + cut % form.len().max(1);
        let mut b = Bounded::new(Keep::Tail, limit);
        for chunk in text.as_bytes().chunks(7) {
            b.push(chunk);
        }
        let out = b.redacted(&r);
        prop_assert!(only_filler_left(&out), "cut {form:?} keeping {limit}: {}", String::from_utf8_lossy(&out));
    }
}

#[test]
fn the_marker_replaces_the_secret_and_leaves_the_rest() {
    let r = redactor_for("hunter2!", false);
    let out = r.redact(b"password=hunter2! ok");
    assert_eq!(out, b"password=[REDACTED] ok");
}
