//! The credentials in a database or registry URL: its password and the values of password-like
//! query parameters, also when the URL is malformed.
//!
//! A password with an unencoded `/`, `?`, `#` or `@` makes a URL library cut the authority at the
//! wrong place: `postgres://u:12/s@s#w@host/db` parses as host `u`, port 12, no password. So
//! besides the library's reading, every `@` after `://` is taken as a possible end of the
//! userinfo (the real one is the last `@` before the host, which may be followed by more `@`s in
//! the path or query), and everything between the first `:` and that `@` as a possible password.
//! Redacting a wrong candidate only hides a little more text; missing the right one would leak.

use percent_encoding::percent_decode_str;
use url::Url;

/// Query keys whose values are credentials.
fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "sslkey",
        "sslpassword",
    ]
    .iter()
    .any(|s| k.contains(s))
        || k == "options"
}

/// Every secret `text` may carry, raw and percent-decoded; candidates may repeat.
pub(super) fn secrets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let push = |out: &mut Vec<String>, raw: &str| {
        out.push(raw.to_owned());
        if let Ok(decoded) = percent_decode_str(raw).decode_utf8() {
            out.push(decoded.into_owned());
        }
    };
    if let Ok(url) = Url::parse(text) {
        if let Some(pw) = url.password() {
            push(&mut out, pw);
        }
        for (k, v) in url.query_pairs() {
            if is_secret_key(&k) {
                out.push(v.into_owned());
            }
        }
    }
    let Some((_, rest)) = text.split_once("://") else {
        return out;
    };
    for (at, _) in rest.match_indices('@') {
        if let Some((_, pw)) = rest[..at].split_once(':') {
            push(&mut out, pw);
        }
    }
    // A query the library did not read: after any `?`, up to a `#`.
    for (q, _) in rest.match_indices('?') {
        let query = rest[q + 1..].split('#').next().unwrap_or_default();
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            if is_secret_key(&k) {
                out.push(v.into_owned());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_the_library_misreads_is_among_the_candidates() {
        for (url, password) in [
            ("postgres://u:pa/ss?w#rd@host:5432/db", "pa/ss?w#rd"),
            ("postgres://u:12/s@s#w@host:5432/db?x=a@b", "12/s@s#w"),
            ("mysql://u:p%40ss@h/db", "p@ss"),
        ] {
            let found = secrets(url);
            assert!(found.iter().any(|s| s == password), "{url}: {found:?}");
        }
        assert!(secrets("postgres://h/db?sslpassword=k3y&x=1").contains(&"k3y".to_owned()));
        assert!(secrets("postgres://u@h/db").is_empty());
    }
}
