//! MySQL/MariaDB `CREATE VIEW` and `CREATE TRIGGER`, read from their text because their bodies
//! are kept as written (see [`crate::normalize::mysql_view_definition`] for the canonical forms).
//!
//! `mariadb-dump --no-data` writes each view twice: first a placeholder (``CREATE VIEW `v` AS
//! SELECT NULL AS `a` ``, so that views reading it can be created before it), then, after every
//! table, ``DROP VIEW IF EXISTS `v` `` and the real view. A `DROP VIEW IF EXISTS` of a declared
//! view therefore removes it, and the last definition stands. Its clauses:
//! - `DEFINER = …`, `ALGORITHM = UNDEFINED` and `SQL SECURITY DEFINER` are skipped and reported
//!   (the applying user becomes the definer; the others are the defaults); any other algorithm,
//!   `SQL SECURITY INVOKER`, a column list and `WITH CHECK OPTION` are refused by name;
//! - triggers come in `DELIMITER ;;` blocks (the splitter takes the client commands out) as
//!   ``/*!50003 CREATE*/ /*!50017 DEFINER=…*/ /*!50003 TRIGGER … */``; `FOLLOWS`/`PRECEDES`
//!   ordering is refused by name, because the model does not order triggers.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan, Tokenizer};

use crate::model::{QualifiedName, Trigger, View};
use crate::normalize::{mysql_trigger_definition, sql_dialect};

use super::super::{IgnoreReason, Location, ReadError};
use super::Reader;

impl Reader {
    /// `CREATE [OR REPLACE] [ALGORITHM=…] [DEFINER=…] [SQL SECURITY …] VIEW [IF NOT EXISTS] v AS …`.
    pub(super) fn mysql_view(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let replace = c.or_replace();
        loop {
            let (word, loc) = c.word_at();
            match word.as_deref() {
                Some("ALGORITHM") => {
                    let start = c.i;
                    c.i += 1;
                    let _ = c.token(&Token::Eq);
                    let (value, _) = c.word_at();
                    c.i += 1;
                    if value.as_deref() != Some("UNDEFINED") {
                        let value = value.unwrap_or_default();
                        let what = format!("view ALGORITHM={value} (view algorithms are not modelled)");
                        return Err(self.unsupported(&self.at(loc), what));
                    }
                    self.ignore(self.at(loc), IgnoreReason::DefinerOrDefault, &c.text(start, c.i));
                }
                Some("DEFINER") => self.definer(&mut c, loc),
                Some("SQL") => {
                    let start = c.i;
                    c.i += 2;
                    let (value, _) = c.word_at();
                    c.i += 1;
                    if value.as_deref() != Some("DEFINER") {
                        let value = value.unwrap_or_default();
                        let what =
                            format!("view SQL SECURITY {value} (only the default DEFINER is modelled)");
                        return Err(self.unsupported(&self.at(loc), what));
                    }
                    self.ignore(self.at(loc), IgnoreReason::DefinerOrDefault, &c.text(start, c.i));
                }
                Some("VIEW") => break,
                _ => return Err(self.unsupported(&self.at(loc), "CREATE VIEW clause")),
            }
        }
        c.i += 1;
        let if_not_exists = c.if_not_exists();
        let (name, name_at) = self.name(&mut c, &at)?;
        let (next, loc) = c.word_at();
        if c.peek() == Some(&Token::LParen) {
            let what = "a view's column list (name the columns with AS in the query)";
            return Err(self.unsupported(&self.at(loc), what));
        }
        if next.as_deref() != Some("AS") {
            return Err(self.unsupported(&self.at(loc), "CREATE VIEW without AS"));
        }
        let start = c.offset_after(c.i);
        if let Some(loc) = c.check_option() {
            let what = "a view's WITH CHECK OPTION (check options are not modelled)";
            return Err(self.unsupported(&self.at(loc), what));
        }
        let definition = View::canonical_definition(&code[start..]);
        if self.schema.tables.contains_key(&name) || (self.schema.views.contains_key(&name) && !replace) {
            if if_not_exists && !self.schema.tables.contains_key(&name) {
                return Ok(());
            }
            return Err(ReadError::Duplicate {
                at: name_at,
                what: format!("view {name}"),
            });
        }
        let view = View {
            name: name.clone(),
            materialized: false,
            definition,
            comment: None,
        };
        self.schema.views.insert(name, view);
        Ok(())
    }

    /// `CREATE [OR REPLACE] [DEFINER=…] TRIGGER [IF NOT EXISTS] name {BEFORE|AFTER}
    /// {INSERT|UPDATE|DELETE} ON t FOR EACH ROW body`.
    pub(super) fn mysql_trigger(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let replace = c.or_replace();
        loop {
            let (word, loc) = c.word_at();
            match word.as_deref() {
                Some("DEFINER") => self.definer(&mut c, loc),
                Some("TRIGGER") => break,
                _ => return Err(self.unsupported(&self.at(loc), "CREATE TRIGGER clause")),
            }
        }
        c.i += 1;
        let if_not_exists = c.if_not_exists();
        let (name, name_at) = self.name(&mut c, &at)?;
        let (timing, loc) = c.word_at();
        let timing = timing.filter(|t| t == "BEFORE" || t == "AFTER");
        c.i += 1;
        let (event, _) = c.word_at();
        let event = event.filter(|e| matches!(e.as_str(), "INSERT" | "UPDATE" | "DELETE"));
        c.i += 1;
        let (Some(timing), Some(event)) = (timing, event) else {
            return Err(self.unsupported(&self.at(loc), "trigger timing or event"));
        };
        let (on, loc) = c.word_at();
        if on.as_deref() != Some("ON") {
            return Err(self.unsupported(&self.at(loc), "trigger without ON <table>"));
        }
        c.i += 1;
        let (table, table_at) = self.name(&mut c, &at)?;
        for expected in ["FOR", "EACH", "ROW"] {
            let (w, loc) = c.word_at();
            if w.as_deref() != Some(expected) {
                return Err(self.unsupported(&self.at(loc), format!("trigger without {expected} EACH ROW")));
            }
            c.i += 1;
        }
        let (order, loc) = c.word_at();
        if let Some(order @ ("FOLLOWS" | "PRECEDES")) = order.as_deref() {
            let what =
                format!("trigger {order} (trigger order is not modelled; one trigger per event and timing)");
            return Err(self.unsupported(&self.at(loc), what));
        }
        let body = code[c.offset_after(c.i - 1)..].trim();
        if body.is_empty() {
            return Err(self.unsupported(&self.at(loc), "trigger without a body"));
        }
        if !self.schema.tables.contains_key(&table) {
            return Err(ReadError::BadReference {
                at: table_at,
                what: format!("table {table}"),
            });
        }
        let existing = self
            .schema
            .triggers
            .iter()
            .find(|(_, t)| t.name == name.name)
            .map(|(k, _)| k.clone());
        if let Some(key) = existing {
            if if_not_exists {
                return Ok(());
            }
            if !replace {
                return Err(ReadError::Duplicate {
                    at: name_at,
                    what: format!("trigger {}", name.name),
                });
            }
            self.schema.triggers.remove(&key);
        }
        let trigger = Trigger {
            definition: mysql_trigger_definition(&name.name, &timing, &event, &table.name, body),
            table,
            name: name.name,
        };
        self.schema.triggers.insert(trigger.key(), trigger);
        Ok(())
    }

    /// Skips `DEFINER = user@host` (up to the next clause) and reports it.
    fn definer(&mut self, c: &mut Cursor<'_>, loc: SqlLocation) {
        let start = c.i;
        c.i += 1;
        while let Some(t) = c.tokens.get(c.i) {
            let clause = matches!(&t.token, Token::Word(w) if w.quote_style.is_none()
                && ["SQL", "VIEW", "TRIGGER"].contains(&w.value.to_ascii_uppercase().as_str()));
            if clause {
                break;
            }
            c.i += 1;
        }
        self.ignore(self.at(loc), IgnoreReason::DefinerOrDefault, &c.text(start, c.i));
    }

    /// A one-part name (MySQL names live in the URL's database), and where it is.
    fn name(&self, c: &mut Cursor<'_>, at: &Location) -> Result<(QualifiedName, Location), ReadError> {
        let loc = c.tokens.get(c.i).map_or(at.clone(), |t| self.at(t.span.start));
        let mut parts = Vec::new();
        loop {
            match c.tokens.get(c.i).map(|t| &t.token) {
                Some(Token::Word(w)) => parts.push(ObjectNamePart::Identifier(Ident {
                    value: w.value.clone(),
                    quote_style: w.quote_style,
                    span: sqlparser::tokenizer::Span::empty(),
                })),
                _ => return Err(self.unsupported(&loc, "a name")),
            }
            c.i += 1;
            if c.token(&Token::Period).is_none() {
                break;
            }
        }
        Ok((self.qualified(&ObjectName(parts), &loc)?, loc))
    }

    fn cursor<'a>(&self, code: &'a str) -> Result<Cursor<'a>, ReadError> {
        let sql = sql_dialect(self.dialect);
        let tokens: Vec<TokenWithSpan> = Tokenizer::new(sql.as_ref(), code)
            .tokenize_with_location()
            .map_err(|e| ReadError::Syntax {
                at: self.at(e.location),
                message: e.message,
            })?
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .collect();
        // Past `CREATE`, which the classifier has seen.
        Ok(Cursor { code, tokens, i: 1 })
    }
}

/// A statement's tokens with their places in its text.
struct Cursor<'a> {
    code: &'a str,
    tokens: Vec<TokenWithSpan>,
    i: usize,
}

impl Cursor<'_> {
    /// The current token as an unquoted uppercase word (if it is one) and where it starts.
    fn word_at(&self) -> (Option<String>, SqlLocation) {
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

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.i).map(|t| &t.token)
    }

    fn token(&mut self, t: &Token) -> Option<()> {
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

    fn or_replace(&mut self) -> bool {
        self.keywords(&["OR", "REPLACE"])
    }

    fn if_not_exists(&mut self) -> bool {
        self.keywords(&["IF", "NOT", "EXISTS"])
    }

    /// Where `WITH [CASCADED | LOCAL] CHECK OPTION` ends the statement, if it does.
    fn check_option(&self) -> Option<SqlLocation> {
        let n = self.tokens.len();
        let word = |k: usize| match self.tokens.get(k).map(|t| &t.token) {
            Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        };
        if n < 3 || word(n - 1).as_deref() != Some("OPTION") || word(n - 2).as_deref() != Some("CHECK") {
            return None;
        }
        let with = if matches!(word(n - 3).as_deref(), Some("CASCADED" | "LOCAL")) {
            n.checked_sub(4)?
        } else {
            n - 3
        };
        (word(with).as_deref() == Some("WITH")).then(|| self.tokens[with].span.start)
    }

    /// The byte offset in the text just after token `k`.
    fn offset_after(&self, k: usize) -> usize {
        self.tokens
            .get(k)
            .map_or(self.code.len(), |t| offset(self.code, t.span.end))
    }

    /// The text of tokens `from..to`, for a report.
    fn text(&self, from: usize, to: usize) -> String {
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
fn blank_conditionals(text: &str) -> String {
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
        assert_eq!(offset(text, SqlLocation { line: 2, column: 3 }), 5);
        assert_eq!(offset(text, SqlLocation { line: 1, column: 2 }), 1);
    }
}
