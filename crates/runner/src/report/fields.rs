//! The small readers every section mapping uses, and the bounded failure they report.

use ptah_dataplane::{ErrorCode, MAX_ERROR_MESSAGE_BYTES, ResultError};
use serde_json::Value;

use crate::redact::Redactor;

/// A failure to report: code, the child's own code, a message.
pub fn failure(code: ErrorCode, child_code: Option<&str>, message: &str, redactor: &Redactor) -> ResultError {
    let child_code = child_code
        .filter(|c| !c.is_empty() && c.len() <= 64)
        .filter(|c| {
            c.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
        .map(str::to_owned);
    ResultError {
        code,
        child_code,
        message: bounded(redactor.redact_str(message), MAX_ERROR_MESSAGE_BYTES),
    }
}

/// `text` cut to at most `max` bytes (at a character boundary, `...` marking the cut).
pub(crate) fn bounded(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max - 3;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("...");
    }
    text
}

/// A section mapped, or why the report could not be.
pub(super) type Mapped = Result<(), &'static str>;

/// The string field `key`.
pub(super) fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The string field `key`, parsed.
pub(super) fn parsed<T: std::str::FromStr>(v: &Value, key: &str) -> Result<T, &'static str> {
    text(v, key)
        .and_then(|s| s.parse().ok())
        .ok_or("a report field is missing or malformed")
}

/// A version written as a number or a string.
pub(super) fn version(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The length of the array field `key`.
pub(super) fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_array).map_or(0, |a| a.len() as u64)
}
