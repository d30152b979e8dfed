//! The little lexing the view and trigger reader needs: conditional-comment markers blanked in
//! place, and a cursor over the tokens that knows where each one is in the text.

use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan};

/// A statement's tokens with their places in its text.
pub(super) struct Cursor<'a> {
    pub(super) code: &'a str,
    pub(super) tokens: Vec<TokenWithSpan>,
    pub(super) i: usize,
}

impl Cursor<'_> {
    /// The current token as an unquoted uppercase word (if it is one) and where it starts.
    pub(super) fn word_at(&self) -> (Option<String>, SqlLocation) {
        match self.tokens.get(self.i) {
            Some(t) => {
                let word = match &t.token {
                    Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
                    _ => None,
                };
                (word, t.span.start)
            }
            None => (
                None,
                self.tokens
                    .last()
                    .map_or(SqlLocation { line: 1, column: 1 }, |t| t.span.end),
            ),
        }
    }

    pub(super) fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.i).map(|t| &t.token)
    }

    pub(super) fn token(&mut self, t: &Token) -> Option<()> {
        (self.peek() == Some(t)).then(|| self.i += 1)
    }

    fn keywords(&mut self, words: &[&str]) -> bool {
        let matched = words.iter().enumerate().all(|(k, w)| {
            matches!(self.tokens.get(self.i + k).map(|t| &t.token),
                Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
        });
        if matched {
            self.i += words.len();
        }
        matched
    }

    pub(super) fn or_replace(&mut self) -> bool {
        self.keywords(&["OR", "REPLACE"])
    }

    pub(super) fn if_not_exists(&mut self) -> bool {
        self.keywords(&["IF", "NOT", "EXISTS"])
    }

    /// `WITH [CASCADED | LOCAL] CHECK OPTION` ending the statement, if it does: the index of its
    /// `WITH` token and the option (`CASCADED` when left out).
    pub(super) fn check_option(&self) -> Option<(usize, String)> {
        let n = self.tokens.len();
        let word = |k: usize| match self.tokens.get(k).map(|t| &t.token) {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        };
        if n < 3 || word(n - 1).as_deref() != Some("OPTION") || word(n - 2).as_deref() != Some("CHECK") {
            return None;
        }
        let (with, kind) = match word(n - 3).as_deref() {
            Some(k @ ("CASCADED" | "LOCAL")) => (n.checked_sub(4)?, k.to_owned()),
            _ => (n - 3, "CASCADED".to_owned()),
        };
        (word(with).as_deref() == Some("WITH")).then_some((with, kind))
    }

    /// The byte offset in the text just after token `k`.
    pub(super) fn offset_after(&self, k: usize) -> usize {
        self.tokens
            .get(k)
            .map_or(self.code.len(), |t| offset(self.code, t.span.end))
    }

    /// The byte offset in the text where token `k` starts (the end of the text past the last).
    pub(super) fn offset_before(&self, k: usize) -> usize {
        self.tokens
            .get(k)
            .map_or(self.code.len(), |t| offset(self.code, t.span.start))
    }

    /// The current token as a string literal's value, if it is one.
    pub(super) fn string(&self) -> Option<String> {
        match self.peek() {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => Some(s.clone()),
            _ => None,
        }
    }

    /// The text of tokens `from..to`, for a report.
    pub(super) fn text(&self, from: usize, to: usize) -> String {
        match (
            self.tokens.get(from),
            to.checked_sub(1).and_then(|k| self.tokens.get(k)),
        ) {
            (Some(a), Some(b)) => {
                self.code[offset(self.code, a.span.start)..offset(self.code, b.span.end)].to_owned()
            }
            _ => String::new(),
        }
    }
}

/// The byte offset of a 1-based line and character column in `text`.
fn offset(text: &str, loc: SqlLocation) -> usize {
    let line = usize::try_from(loc.line).unwrap_or(1).max(1);
    let column = usize::try_from(loc.column).unwrap_or(1).max(1);
    let line_start = if line == 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    text[line_start..]
        .char_indices()
        .nth(column - 1)
        .map_or(text.len(), |(i, _)| line_start + i)
}

/// `text` with the markers of MySQL conditional comments (`/*!50003`, `/*M!100000`, and the `*/`
/// that closes one) replaced by spaces, so that what they hold is plain code at the same offsets.
pub(super) fn blank_conditionals(text: &str) -> String {
    let mut out = text.as_bytes().to_vec();
    let b = text.as_bytes();
    let mut open = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() {
                    // A backslash escape in a string, or a doubled quote.
                    if (b[i] == b'\\' && q != b'`') || (b[i] == q && b.get(i + 1) == Some(&q)) {
                        i += 2;
                    } else if b[i] == q {
                        break;
                    } else {
                        i += 1;
                    }
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let marker = match (b.get(i + 2), b.get(i + 3)) {
                    (Some(b'!'), _) => Some(3),
                    (Some(b'M'), Some(b'!')) => Some(4),
                    _ => None,
                };
                match marker {
                    Some(len) if !open => {
                        let mut end = i + len;
                        while b.get(end).is_some_and(u8::is_ascii_digit) {
                            end += 1;
                        }
                        out[i..end].fill(b' ');
                        open = true;
                        i = end;
                    }
                    _ => {
                        i = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                    }
                }
            }
            b'*' if open && b.get(i + 1) == Some(&b'/') => {
                out[i..i + 2].fill(b' ');
                open = false;
                i += 2;
            }
            b'-' if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_none_or(u8::is_ascii_whitespace) => {
                i = text[i..].find('\n').map_or(b.len(), |e| i + e);
            }
            b'#' => i = text[i..].find('\n').map_or(b.len(), |e| i + e),
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced, by ASCII spaces: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditional_markers_become_spaces_at_the_same_offsets() {
        let text = "/*!50003 CREATE*/ /*!50017 DEFINER=`a*/b`@`%`*/ /*!50003 TRIGGER x 'y*/' /* c */ */";
        let got = blank_conditionals(text);
        assert_eq!(got.len(), text.len());
        assert_eq!(
            got.split_whitespace().collect::<Vec<_>>(),
            [
                "CREATE",
                "DEFINER=`a*/b`@`%`",
                "TRIGGER",
                "x",
                "'y*/'",
                "/*",
                "c",
                "*/"
            ]
        );
    }

    #[test]
    fn offsets_count_characters_per_line() {
        let text = "ab\nçd e";
        assert_eq!(offset(text, SqlLocation { line: 2, column: 3 }), 6);
        assert_eq!(offset(text, SqlLocation { line: 1, column: 2 }), 1);
    }
}
