//! A failed command's typed error, written for the kubelet.
//!
//! When `PTAH_TERMINATION_LOG` names a file, [`crate::common::Output::error`] writes one compact
//! JSON line there, `{"code":"<snake_case>","message":"<text>"}`. The operation Pods' fetch init
//! containers run `ptah` directly (no runner, so no result frame) with the variable set to
//! `/dev/termination-log`; the kubelet copies the file into the container's
//! `state.terminated.message` (policy `File`, at most 4096 bytes), where the manager reads the
//! refusal without reading a log (`ptah_controller::operation::fetch`).
//!
//! The line always fits the kubelet's limit: the message is cut to [`MAX_MESSAGE_BYTES`] and then
//! further until the escaped line fits [`MAX_LINE_BYTES`]. Control characters become spaces, and
//! every credential the environment handed this process is replaced by `[REDACTED]` before any
//! cut, so no part of one survives a cut either.

use std::path::Path;

use serde_json::json;

/// The variable naming the file to write.
pub const ENV: &str = "PTAH_TERMINATION_LOG";
/// The most bytes of the message kept before escaping.
pub const MAX_MESSAGE_BYTES: usize = 3 * 1024;
/// The most bytes of the line, newline included: the kubelet keeps 4096 bytes of the file.
pub const MAX_LINE_BYTES: usize = 4096;
/// What replaces a credential.
pub const REDACTED: &str = "[REDACTED]";
/// The code written when the caller's is not a short snake_case word.
const FALLBACK_CODE: &str = "internal";

/// Variables whose whole value is a credential.
const SECRET_VARS: &[&str] = &[ptah_artifact::auth::ENV_PASSWORD, ptah_artifact::auth::ENV_TOKEN];
/// Variables holding a URL whose password is a credential.
const URL_VARS: &[&str] = &["PTAH_DB_URL", "PTAH_DEV_URL"];

/// Writes the error line to the file `PTAH_TERMINATION_LOG` names, if it names one. A failure to
/// write is said on stderr and changes nothing else: the exit code still tells the caller.
pub fn record(code: &str, message: &str) {
    let Some(path) = std::env::var_os(ENV).filter(|p| !p.is_empty()) else {
        return;
    };
    let secrets = secrets_from_env();
    if let Err(err) = write(Path::new(&path), code, message, &secrets) {
        eprintln!(
            "warning: cannot write the termination message to {}: {}",
            Path::new(&path).display(),
            err.kind()
        );
    }
}

/// Writes [`line`] to `path`, replacing what the file held.
pub fn write(path: &Path, code: &str, message: &str, secrets: &[String]) -> std::io::Result<()> {
    std::fs::write(path, line(code, message, secrets))
}

/// The bounded JSON line (with its newline) for `code` and `message`, with `secrets` redacted.
pub fn line(code: &str, message: &str, secrets: &[String]) -> String {
    let code = if is_code(code) { code } else { FALLBACK_CODE };
    let mut text: String = redact(message, secrets)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    cut(&mut text, MAX_MESSAGE_BYTES);
    loop {
        let line = format!("{}\n", json!({ "code": code, "message": text }));
        if line.len() <= MAX_LINE_BYTES || text.is_empty() {
            return line;
        }
        // Escaping at most doubles a byte (`"` and `\` only, control characters are gone), so
        // cutting the excess from the message converges in a pass or two.
        let excess = line.len() - MAX_LINE_BYTES;
        let keep = text.len().saturating_sub(excess);
        cut(&mut text, keep);
    }
}

/// A short snake_case word: what every code of this CLI is.
fn is_code(code: &str) -> bool {
    (1..=64).contains(&code.len())
        && code.starts_with(|c: char| c.is_ascii_lowercase())
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Cuts `text` to at most `max` bytes, on a character boundary.
fn cut(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
}

/// `text` with every occurrence of every secret replaced, longest secret first (one secret may
/// contain another).
fn redact(text: &str, secrets: &[String]) -> String {
    let mut sorted: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    sorted
        .into_iter()
        .fold(text.to_owned(), |t, s| t.replace(s.as_str(), REDACTED))
}

/// The credentials of this process's environment: registry password and token, and each database
/// URL with its password (as written and percent-decoded).
fn secrets_from_env() -> Vec<String> {
    let mut secrets: Vec<String> = SECRET_VARS.iter().filter_map(|v| std::env::var(v).ok()).collect();
    for url in URL_VARS.iter().filter_map(|v| std::env::var(v).ok()) {
        secrets.extend(url_secrets(&url));
    }
    secrets
}

/// The URL itself and the password of its userinfo, as written and percent-decoded.
fn url_secrets(url: &str) -> Vec<String> {
    let mut found = vec![url.to_owned()];
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    // The userinfo ends at the last `@` before the path: a password may hold an unencoded `@`.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..authority_end].rfind('@')
        && let Some((_, password)) = rest[..at].split_once(':')
        && !password.is_empty()
    {
        found.push(password.to_owned());
        found.push(percent_decoded(password));
    }
    found
}

/// `text` with `%XX` escapes decoded (invalid ones kept as written).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> serde_json::Value {
        assert!(
            line.ends_with('\n') && line.matches('\n').count() == 1,
            "one line: {line:?}"
        );
        serde_json::from_str(line).expect("JSON")
    }

    #[test]
    fn the_line_is_the_code_and_the_message() {
        let l = line(
            "size_mismatch",
            "layer 0: the descriptor declares 10 bytes but 52428803 arrived",
            &[],
        );
        assert_eq!(
            l,
            "{\"code\":\"size_mismatch\",\"message\":\"layer 0: the descriptor declares 10 bytes but 52428803 arrived\"}\n"
        );
        // A code that is not a snake_case word is never passed on as one.
        assert_eq!(parsed(&line("Bad Code\n", "m", &[]))["code"], "internal");
        assert_eq!(parsed(&line("", "m", &[]))["code"], "internal");
    }

    #[test]
    fn the_line_always_fits_what_the_kubelet_keeps() {
        for filler in ["a", "é", "\"", "\\", "\u{1}", "漢"] {
            let message = filler.repeat(10_000);
            let l = line("unsafe_path", &message, &[]);
            assert!(l.len() <= MAX_LINE_BYTES, "{filler:?}: {} bytes", l.len());
            let m = parsed(&l)["message"].as_str().expect("message").to_owned();
            assert!(
                m.len() <= MAX_MESSAGE_BYTES && !m.is_empty(),
                "{filler:?}: {}",
                m.len()
            );
            assert!(!m.chars().any(char::is_control), "{filler:?}: control characters");
        }
        // A short message is kept whole.
        assert_eq!(parsed(&line("tls", "x\ty", &[]))["message"], "x y");
    }

    #[test]
    fn no_credential_survives_not_even_cut() {
        let url = "postgres://app:s3cr%40t-pw@db:5432/shop";
        let mut secrets = url_secrets(url);
        secrets.push("registry-password".to_owned());
        assert!(secrets.contains(&"s3cr@t-pw".to_owned()), "{secrets:?}");
        let message = format!(
            "cannot connect with {url}, password s3cr@t-pw or s3cr%40t-pw; registry said registry-password"
        );
        let l = line("connect", &message, &secrets);
        for secret in ["s3cr@t-pw", "s3cr%40t-pw", "registry-password", url] {
            assert!(!l.contains(secret), "{secret} in {l}");
        }
        assert!(l.contains(REDACTED), "{l}");
        // A secret at the cut is replaced before the cut: no prefix of it is left.
        let long = format!("{}registry-password", "x".repeat(MAX_MESSAGE_BYTES - 4));
        let l = line("connect", &long, &secrets);
        assert!(!l.contains("regi"), "a cut secret left a prefix");
    }

    #[test]
    fn the_file_holds_the_line_alone() {
        let dir = std::env::temp_dir().join(format!("ptah-termination-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let path = dir.join("termination-log");
        std::fs::write(&path, "an older, longer message that must not remain").expect("seed");
        write(&path, "limit_exceeded", "file schema.hcl exceeds the limit", &[]).expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(parsed(&text)["code"], "limit_exceeded");
        assert!(!text.contains("older"), "{text}");
    }
}
