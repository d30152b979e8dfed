//! Token runs of one statement: keywords, dotted names and the source text they span, for the
//! statements read from their tokens rather than through sqlparser's syntax tree.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan};

/// An unquoted word, uppercase; `None` for anything else.
pub(super) fn keyword(t: Option<&TokenWithSpan>) -> Option<String> {
    match t.map(|t| &t.token) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    }
}

/// The dotted name starting at `tokens[*i]` (`a`, `s.a`, `"S"."a"`); `*i` moves past it.
pub(super) fn object_name(tokens: &[TokenWithSpan], i: &mut usize) -> ObjectName {
    let mut parts = Vec::new();
    while let Some(TokenWithSpan {
        token: Token::Word(w),
        span,
    }) = tokens.get(*i)
    {
        parts.push(ObjectNamePart::Identifier(Ident {
            value: w.value.clone(),
            quote_style: w.quote_style,
            span: *span,
        }));
        *i += 1;
        if tokens.get(*i).map(|t| &t.token) != Some(&Token::Period) {
            break;
        }
        *i += 1;
    }
    ObjectName(parts)
}

/// The source text that `tokens` (a run of the statement's tokens) spans, trimmed; empty for none.
pub(super) fn slice(text: &str, tokens: &[TokenWithSpan]) -> String {
    match (tokens.first(), tokens.last()) {
        (Some(first), Some(last)) => {
            let from = byte_offset(text, first.span.start);
            let to = byte_offset(text, last.span.end);
            text.get(from..to).unwrap_or("").trim().to_owned()
        }
        _ => String::new(),
    }
}

/// The byte offset of a tokenizer location (1-based line and character column) in `text`.
fn byte_offset(text: &str, loc: SqlLocation) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == usize::try_from(loc.line).unwrap_or(0) {
            let column = usize::try_from(loc.column).unwrap_or(1).saturating_sub(1);
            return offset + l.char_indices().nth(column).map_or(l.len(), |(b, _)| b);
        }
        offset += l.len();
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_characters_within_lines() {
        let text = "ab\nçd ef";
        assert_eq!(byte_offset(text, SqlLocation { line: 2, column: 4 }), 7);
        assert_eq!(
            &text[byte_offset(text, SqlLocation { line: 2, column: 4 })..],
            "ef"
        );
        assert_eq!(byte_offset(text, SqlLocation { line: 9, column: 1 }), text.len());
    }
}
