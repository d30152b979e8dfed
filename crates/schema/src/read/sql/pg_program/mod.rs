//! PostgreSQL routines, triggers and routine comments, read from their tokens and their text.
//!
//! sqlparser cannot read these as `pg_dump` writes them, and the model keeps parts of them as the
//! server prints them (an argument list, a result type, a trigger statement), so they are cut out
//! of the statement's own text rather than rebuilt from a syntax tree.

mod aggregate;
mod routine;
mod settings;

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan};

use crate::model::{QualifiedName, Trigger};

use super::super::{Location, ReadError};
use super::Reader;

/// One statement's text, with its tokens (whitespace and comments removed).
pub(super) struct Source<'a> {
    text: &'a str,
    tokens: &'a [TokenWithSpan],
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub(super) fn new(text: &'a str, tokens: &'a [TokenWithSpan]) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            text,
            tokens,
            line_starts,
        }
    }

    /// The byte offset of a sqlparser position (1-based line, 1-based column in characters).
    fn offset(&self, loc: SqlLocation) -> usize {
        let line = usize::try_from(loc.line).unwrap_or(1).max(1);
        let column = usize::try_from(loc.column).unwrap_or(1).max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(self.text.len());
        self.text[start..]
            .char_indices()
            .nth(column - 1)
            .map_or(self.text.len(), |(i, _)| start + i)
    }

    /// The text of tokens `from..=to`, as written.
    fn between(&self, from: usize, to: usize) -> &'a str {
        match (self.tokens.get(from), self.tokens.get(to)) {
            (Some(a), Some(b)) if from <= to => {
                let (start, end) = (self.offset(a.span.start), self.offset(b.span.end));
                self.text.get(start..end.max(start)).unwrap_or("")
            }
            _ => "",
        }
    }

    /// The text of one token, as written.
    fn raw(&self, i: usize) -> &'a str {
        self.between(i, i)
    }

    fn token(&self, i: usize) -> Option<&'a Token> {
        self.tokens.get(i).map(|t| &t.token)
    }

    /// Token `i` as an unquoted keyword, uppercase.
    fn word(&self, i: usize) -> Option<String> {
        match self.token(i)? {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
            _ => None,
        }
    }

    /// The index of the `)` that closes the `(` at `open`.
    fn closing(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, t) in self.tokens.iter().enumerate().skip(open) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// A possibly qualified name starting at `i`, and the index after it.
    fn name(&self, mut i: usize) -> Option<(ObjectName, usize)> {
        let mut parts = Vec::new();
        loop {
            let Some(Token::Word(w)) = self.token(i) else {
                return None;
            };
            parts.push(ObjectNamePart::Identifier(Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: self.tokens[i].span,
            }));
            i += 1;
            if self.token(i) != Some(&Token::Period) {
                return Some((ObjectName(parts), i));
            }
            i += 1;
        }
    }
}

impl Reader {
    /// Where token `i` of `src` is in the document (the statement start when it has none).
    fn at_token(&self, src: &Source<'_>, i: usize, fallback: &Location) -> Location {
        src.tokens
            .get(i)
            .map_or_else(|| fallback.clone(), |t| self.at(t.span.start))
    }

    fn expected(&self, src: &Source<'_>, i: usize, what: &str, at: &Location) -> ReadError {
        let found = src
            .token(i)
            .map_or_else(|| "end of statement".to_owned(), ToString::to_string);
        ReadError::Syntax {
            at: self.at_token(src, i, at),
            message: format!("expected {what}, found {found}"),
        }
    }

    /// `CREATE [OR REPLACE] [CONSTRAINT] TRIGGER name … ON table …`: kept as the statement
    /// `pg_get_triggerdef` prints, which is pg_dump's text without `OR REPLACE`, its layout
    /// reduced to single spaces.
    pub(super) fn create_trigger(&mut self, src: &Source<'_>, at: Location) -> Result<(), ReadError> {
        let replace = src.word(1).as_deref() == Some("OR") && src.word(2).as_deref() == Some("REPLACE");
        let mut i = if replace { 3 } else { 1 };
        let kept_from = i;
        if src.word(i).as_deref() == Some("CONSTRAINT") {
            i += 1;
        }
        if src.word(i).as_deref() != Some("TRIGGER") {
            return Err(self.expected(src, i, "TRIGGER", &at));
        }
        let name = match src.token(i + 1) {
            Some(Token::Word(w)) => self.ident(&Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: src.tokens[i + 1].span,
            }),
            _ => return Err(self.expected(src, i + 1, "a trigger name", &at)),
        };
        let on = (i + 2..src.tokens.len())
            .find(|&k| src.word(k).as_deref() == Some("ON"))
            .ok_or_else(|| self.expected(src, src.tokens.len(), "ON <table>", &at))?;
        let (table_name, _) = src
            .name(on + 1)
            .ok_or_else(|| self.expected(src, on + 1, "a table name", &at))?;
        let table_at = self.at_token(src, on + 1, &at);
        let table = self.qualified(&table_name, &table_at)?;
        if !self.schema.tables.contains_key(&table) {
            return Err(ReadError::BadReference {
                at: table_at,
                what: format!("table {table}"),
            });
        }
        let mut definition = String::from("CREATE");
        for k in kept_from..src.tokens.len() {
            let gap = k == kept_from
                || src.offset(src.tokens[k - 1].span.end) < src.offset(src.tokens[k].span.start);
            if gap {
                definition.push(' ');
            }
            // The catalog prints the older `EXECUTE PROCEDURE` as `EXECUTE FUNCTION`.
            if src.word(k).as_deref() == Some("PROCEDURE") && src.word(k - 1).as_deref() == Some("EXECUTE") {
                definition.push_str("FUNCTION");
            } else {
                definition.push_str(src.raw(k));
            }
        }
        let trigger = Trigger {
            table,
            name,
            definition: Trigger::canonical_definition(&definition),
            comment: None,
        };
        let key = trigger.key();
        if self.schema.triggers.contains_key(&key) && !replace {
            return Err(ReadError::Duplicate {
                at,
                what: format!("trigger {} on {}", trigger.name, trigger.table),
            });
        }
        self.schema.triggers.insert(key, trigger);
        Ok(())
    }

    /// `COMMENT ON TRIGGER name ON table IS 'text' | NULL`: the trigger must be declared.
    pub(super) fn comment_trigger(&mut self, src: &Source<'_>, at: Location) -> Result<(), ReadError> {
        let name = match src.token(3) {
            Some(Token::Word(w)) => self.ident(&Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: src.tokens[3].span,
            }),
            _ => return Err(self.expected(src, 3, "a trigger name", &at)),
        };
        if src.word(4).as_deref() != Some("ON") {
            return Err(self.expected(src, 4, "ON <table>", &at));
        }
        let (table_name, after) = src
            .name(5)
            .ok_or_else(|| self.expected(src, 5, "a table name", &at))?;
        let table = self.qualified(&table_name, &at)?;
        if src.word(after).as_deref() != Some("IS") || after + 2 != src.tokens.len() {
            return Err(self.expected(src, after, "IS '<comment>'", &at));
        }
        let comment = match src.token(after + 1) {
            Some(Token::SingleQuotedString(s)) => Some(s.clone()),
            _ if src.word(after + 1).as_deref() == Some("NULL") => None,
            _ => return Err(self.expected(src, after + 1, "a string or NULL", &at)),
        };
        let key = QualifiedName::new(table.schema.clone(), format!("{}.{name}", table.name));
        match self.schema.triggers.get_mut(&key) {
            Some(t) => {
                t.comment = comment;
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("trigger {name} on {table}"),
            }),
        }
    }
}
