//! The forms a program may print a secret in, as strings to look for.
//!
//! Layers, each applied to the results of the one before:
//! 1. quoting: as is, and with SQL's quote doubling (`'` → `''`, `"` → `""`, and both);
//! 2. URL encodings of the raw secret: percent-encoded as a URL library writes a userinfo or a
//!    query value, every non-alphanumeric byte, every byte;
//! 3. string escapes: none, JSON (also with `<`, `>`, `&` escaped, as Go writes it), Rust's
//!    `{:?}` and `escape_default`.
//!
//! Besides, base64 of the raw secret (standard and URL-safe alphabets): whole, padded and
//! unpadded, and for a secret inside a longer base64 string (`user:password` of HTTP basic
//! auth), the characters that depend on the secret's bytes alone, for each of the three
//! alignments the secret can have in the encoded stream.
//!
//! Hex digits of escapes (`%2f`, `\u001b`, `\u{e9}`) match in either case; see [`fold_mask`].

use base64::{
    Engine,
    engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD},
};
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};

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

/// The shortest run of base64 characters redacted: one or two characters carry too few bits of a
/// secret to matter, and redacting them would redact half of any text.
const MIN_BASE64_CHARS: usize = 4;

/// Every form of `secret` to redact (not deduplicated, not empty unless `secret` is).
pub(super) fn printed(secret: &str) -> Vec<String> {
    let quoted = [
        secret.to_owned(),
        secret.replace('\'', "''"),
        secret.replace('"', "\"\""),
        secret.replace('\'', "''").replace('"', "\"\""),
    ];
    let mut plain: Vec<String> = quoted.to_vec();
    plain.push(utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string());
    plain.push(utf8_percent_encode(secret, USERINFO).to_string());
    plain.push(url::form_urlencoded::byte_serialize(secret.as_bytes()).collect());
    plain.push(secret.bytes().map(|b| format!("%{b:02X}")).collect());
    let mut forms = Vec::with_capacity(plain.len() * 5 + 12);
    for p in &plain {
        forms.push(p.clone());
        forms.push(json_inner(p));
        forms.push(json_inner_html_safe(p));
        forms.push(rust_debug_inner(p));
        forms.push(p.escape_default().to_string());
    }
    forms.extend(base64_forms(secret.as_bytes()));
    forms
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

/// What `format!("{s:?}")` prints between the quotes.
fn rust_debug_inner(s: &str) -> String {
    let quoted = format!("{s:?}");
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default()
        .to_owned()
}

fn base64_forms(secret: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for engine in [&STANDARD, &URL_SAFE, &STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        out.push(engine.encode(secret));
    }
    for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
        for lead in 0..3 {
            let mut stream = vec![0u8; lead];
            stream.extend_from_slice(secret);
            let text = engine.encode(&stream);
            // Character j holds bits 6j..6j+6 of the stream; the secret's are 8·lead..8·(lead+n).
            let first = (8 * lead).div_ceil(6);
            let end = (8 * (lead + secret.len())) / 6;
            if end > first {
                out.push(text[first..end].to_owned());
            }
        }
    }
    out.retain(|f| f.len() >= MIN_BASE64_CHARS);
    out
}

/// Which bytes of `form` match in either case: the hex digits of `%XX`, `\uXXXX` and `\u{X…}`
/// escapes, which encoders write in upper or lower case as they like.
pub(super) fn fold_mask(form: &[u8]) -> Vec<bool> {
    let mut mask = vec![false; form.len()];
    let hex_run = |from: usize, max: usize| {
        form[from.min(form.len())..]
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_hexdigit())
            .count()
    };
    let mut i = 0;
    while i < form.len() {
        let run = match (form[i], form.get(i + 1), form.get(i + 2)) {
            (b'%', _, _) if hex_run(i + 1, 2) == 2 => Some((i + 1, 2)),
            (b'\\', Some(b'u'), Some(b'{')) => Some((i + 3, hex_run(i + 3, 6))),
            (b'\\', Some(b'u'), _) if hex_run(i + 2, 4) == 4 => Some((i + 2, 4)),
            _ => None,
        };
        match run {
            Some((start, len)) if len > 0 => {
                mask[start..start + len].iter_mut().for_each(|m| *m = true);
                i = start + len;
            }
            _ => i += 1,
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_digits_fold_and_nothing_else() {
        let mask = fold_mask(b"a%2fB\\u001B\\u{e9}%zz");
        let folded: String = b"a%2fB\\u001B\\u{e9}%zz"
            .iter()
            .zip(&mask)
            .filter(|(_, m)| **m)
            .map(|(b, _)| char::from(*b))
            .collect();
        assert_eq!(folded, "2f001Be9");
    }

    #[test]
    fn base64_cores_are_left_out_when_too_short() {
        assert_eq!(base64_forms(b"ab"), ["YWI=", "YWI="]);
        assert_eq!(base64_forms(b"abcdef")[0], "YWJjZGVm");
    }
}
