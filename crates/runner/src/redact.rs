//! Credential redaction: every known secret, in every form a program may print it, becomes
//! `[REDACTED]`; a secret cut by a truncation boundary is redacted too.

use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use url::Url;

/// What replaces a secret.
pub const MARKER: &str = "[REDACTED]";

/// The userinfo encode set of the URL standard (what a URL library writes into `user:pass@`).
const USERINFO: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b':')
    .add(b';')
    .add(b'=')
    .add(b'@')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'|');

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

/// The set of byte strings to redact.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    forms: Vec<Vec<u8>>,
}

impl Redactor {
    /// A redactor that knows nothing yet.
    pub fn new() -> Self {
        Redactor::default()
    }

    /// Adds a secret in all its printed forms.
    pub fn add_secret(&mut self, secret: &str) {
        if secret.is_empty() {
            return;
        }
        let mut plain = vec![secret.to_owned()];
        plain.push(utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string());
        plain.push(utf8_percent_encode(secret, USERINFO).to_string());
        plain.push(url::form_urlencoded::byte_serialize(secret.as_bytes()).collect());
        plain.push(secret.bytes().map(|b| format!("%{b:02X}")).collect());
        let lower: Vec<String> = plain.iter().map(|p| lower_hex_escapes(p)).collect();
        plain.extend(lower);
        let mut forms: Vec<String> = Vec::new();
        for p in &plain {
            forms.push(p.clone());
            forms.push(json_inner(p));
            forms.push(json_inner_html_safe(p));
        }
        for f in forms {
            let f = f.into_bytes();
            if !f.is_empty() && !self.forms.contains(&f) {
                self.forms.push(f);
            }
        }
        // Longest first, so a form containing another is replaced whole.
        self.forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    }

    /// Adds the credentials a database or registry URL carries: its password and the values of
    /// password-like query parameters. Works on unparseable text too.
    pub fn add_url(&mut self, text: &str) {
        if let Ok(url) = Url::parse(text) {
            if let Some(pw) = url.password() {
                self.add_secret(pw);
                if let Ok(decoded) = percent_encoding::percent_decode_str(pw).decode_utf8() {
                    self.add_secret(&decoded);
                }
            }
            for (k, v) in url.query_pairs() {
                if is_secret_key(&k) {
                    self.add_secret(&v);
                }
            }
        }
        // By hand as well, in case the URL library refuses the text.
        if let Some(rest) = text.split_once("://").map(|(_, r)| r) {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            if let Some((userinfo, _)) = authority.rsplit_once('@')
                && let Some((_, pw)) = userinfo.split_once(':')
            {
                self.add_secret(pw);
                if let Ok(decoded) = percent_encoding::percent_decode_str(pw).decode_utf8() {
                    self.add_secret(&decoded);
                }
            }
        }
    }

    /// True when `bytes` contains a known secret in any form.
    pub fn contains_secret(&self, bytes: &[u8]) -> bool {
        self.forms.iter().any(|f| find(bytes, f, 0).is_some())
    }

    /// Replaces every whole occurrence of every form.
    pub fn redact(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for form in &self.forms {
            out = replace_all(&out, form);
        }
        out
    }

    /// Redacts text whose end was cut: also a prefix of a secret at the very end.
    pub fn redact_cut_end(&self, bytes: &[u8]) -> Vec<u8> {
        // Measured on the raw bytes: replacing whole forms first could consume part of the cut
        // fragment (one encoding of a secret can contain another) and hide the rest of it.
        let longest = self.longest_edge_fragment(bytes, |f, k| bytes.ends_with(&f[..k]));
        let mut out = self.redact(&bytes[..bytes.len() - longest]);
        if longest > 0 {
            out.extend_from_slice(MARKER.as_bytes());
        }
        out
    }

    /// Redacts text whose start was cut: also a suffix of a secret at the very start.
    pub fn redact_cut_start(&self, bytes: &[u8]) -> Vec<u8> {
        let longest = self.longest_edge_fragment(bytes, |f, k| bytes.starts_with(&f[f.len() - k..]));
        let rest = self.redact(&bytes[longest..]);
        if longest == 0 {
            return rest;
        }
        let mut out = MARKER.as_bytes().to_vec();
        out.extend_from_slice(&rest);
        out
    }

    /// The length of the longest proper part of any form that `matches` at an edge of `bytes`.
    fn longest_edge_fragment(&self, bytes: &[u8], matches: impl Fn(&[u8], usize) -> bool) -> usize {
        let mut longest = 0;
        for f in &self.forms {
            if let Some(k) = (longest + 1..f.len().min(bytes.len() + 1))
                .rev()
                .find(|&k| matches(f, k))
            {
                longest = k;
            }
        }
        longest
    }

    /// Redacts a string (for messages built by the runner).
    pub fn redact_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.redact(text.as_bytes())).into_owned()
    }
}

fn json_inner(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default()
        .to_owned()
}

/// The escaping of encoders that also escape `<`, `>`, `&` (Go's `encoding/json`).
fn json_inner_html_safe(s: &str) -> String {
    json_inner(s)
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn lower_hex_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            for _ in 0..2 {
                if let Some(h) = chars.next() {
                    out.push(h.to_ascii_lowercase());
                }
            }
        }
    }
    out
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i] == needle[0] && hay[i..].starts_with(needle))
}

fn replace_all(hay: &[u8], needle: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut at = 0;
    while let Some(i) = find(hay, needle, at) {
        out.extend_from_slice(&hay[at..i]);
        out.extend_from_slice(MARKER.as_bytes());
        at = i + needle.len();
    }
    out.extend_from_slice(&hay[at.min(hay.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_a_url_password_is_redacted() {
        let mut r = Redactor::new();
        r.add_url("postgres://app:p%40ss%2Fw0rd%22x@db/app?sslpassword=other-secret");
        for form in [
            "p@ss/w0rd\"x",
            "p%40ss%2Fw0rd%22x",
            "p%40ss%2fw0rd%22x",
            "p@ss/w0rd\\\"x",
            "other-secret",
        ] {
            let out = r.redact(format!("before {form} after").as_bytes());
            assert_eq!(
                String::from_utf8_lossy(&out),
                format!("before {MARKER} after"),
                "{form}"
            );
        }
    }

    #[test]
    fn a_cut_secret_is_redacted_at_either_edge() {
        let mut r = Redactor::new();
        r.add_secret("supersecret");
        assert_eq!(r.redact_cut_end(b"log: supers"), b"log: [REDACTED]");
        assert_eq!(r.redact_cut_start(b"ecret and more"), b"[REDACTED] and more");
        assert_eq!(r.redact_cut_end(b"nothing here"), b"nothing here");
    }
}
