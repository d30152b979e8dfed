//! HCL spelling shared by the writers: identifiers, traversal steps, object keys and quoted strings.

use std::fmt::Write as _;

use crate::model::Literal;

/// An HCL identifier: a letter or `_`, then letters, digits, `_` or `-`.
pub(super) fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A traversal step: `.name`, or `["name"]` when the name is not an identifier.
pub(super) fn part(name: &str) -> String {
    if is_ident(name) {
        format!(".{name}")
    } else {
        format!("[{}]", quote(name))
    }
}

/// An object key: bare when it is an identifier that is not a keyword.
pub(super) fn object_key(name: &str) -> String {
    if is_ident(name) && !matches!(name, "null" | "true" | "false") {
        name.to_owned()
    } else {
        quote(name)
    }
}

/// An HCL quoted string, with template sequences escaped.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A literal value: `null`, `true`, a number as written, or a quoted string.
pub(super) fn literal(l: &Literal) -> String {
    match l {
        Literal::Null => "null".to_owned(),
        Literal::Bool(b) => b.to_string(),
        Literal::Number(n) => n.clone(),
        Literal::String(s) => quote(s),
    }
}
