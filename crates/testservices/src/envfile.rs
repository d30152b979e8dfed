//! Parsing `export NAME='value'` lines as written by `cargo xtask services up`.

use std::collections::HashMap;

/// Parses the env file; on a malformed line returns its 1-based number.
pub(crate) fn parse(text: &str) -> Result<HashMap<String, String>, usize> {
    let mut vars = HashMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let assignment = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let (name, value) = assignment.split_once('=').ok_or(index + 1)?;
        let valid_name = !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        if !valid_name {
            return Err(index + 1);
        }
        vars.insert(name.to_owned(), unquote(value).ok_or(index + 1)?);
    }
    Ok(vars)
}

/// Undoes POSIX single quoting (`'…'` with `'\''` for a quote), double quotes, or nothing.
fn unquote(value: &str) -> Option<String> {
    if let Some(inner) = value.strip_prefix('\'') {
        let inner = inner.strip_suffix('\'')?;
        return Some(inner.replace(r"'\''", "'"));
    }
    if let Some(inner) = value.strip_prefix('"') {
        return inner.strip_suffix('"').map(str::to_owned);
    }
    Some(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_quoted_bare_and_exported_assignments() {
        let vars = parse("# c\n\nexport A='x y'\nB=plain\nexport C=\"dq\"\nD='it'\\''s'\n").expect("parse");
        assert_eq!(vars.get("A").map(String::as_str), Some("x y"));
        assert_eq!(vars.get("B").map(String::as_str), Some("plain"));
        assert_eq!(vars.get("C").map(String::as_str), Some("dq"));
        assert_eq!(vars.get("D").map(String::as_str), Some("it's"));
        assert_eq!(vars.len(), 4);
    }

    #[test]
    fn reports_the_line_of_a_broken_quote() {
        assert_eq!(parse("A='1'\nB='open\n"), Err(2));
        assert_eq!(parse("not an assignment"), Err(1));
        assert_eq!(parse("BAD NAME=1"), Err(1));
    }
}
