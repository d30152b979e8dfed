//! JSON strings and numbers as RFC 8785 writes them, shared by both canonical writers.

use std::fmt::Write as _;
use std::io::Write as _;

use crate::Error;

/// A JSON string with RFC 8785's minimal escaping.
pub(crate) fn write_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    // Multi-byte UTF-8 never holds a byte below 0x80, so bytes are safe to scan; the runs between
    // escapes are copied whole.
    let mut rest = s.as_bytes();
    while let Some(at) = rest.iter().position(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        out.extend_from_slice(&rest[..at]);
        let b = rest[at];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            _ => b"",
        };
        if escape.is_empty() {
            // Writing into a Vec cannot fail.
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.extend_from_slice(escape);
        }
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// ECMAScript's Number::toString for a finite double (ECMA-262 §6.1.6.1.20).
pub(crate) fn ecmascript_number(f: f64) -> Result<String, Error> {
    if !f.is_finite() {
        return Err(Error::NonFiniteNumber(f.to_string()));
    }
    if f == 0.0 {
        return Ok("0".to_owned());
    }
    // Rust's `{:e}` prints the shortest round-tripping digits: "-1.2345e-7".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent
        .parse()
        .map_err(|_| Error::NonFiniteNumber(sci.clone()))?;
    let k = i32::try_from(digits.len()).map_err(|_| Error::NonFiniteNumber(sci.clone()))?;
    let n = exponent + 1;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (int, frac) = digits.split_at(n as usize);
        let _ = write!(out, "{int}.{frac}");
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            let _ = write!(out, ".{rest}");
        }
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{}", (n - 1).abs());
    }
    Ok(out)
}
