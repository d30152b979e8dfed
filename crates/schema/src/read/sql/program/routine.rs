//! MySQL `CREATE [OR REPLACE] [DEFINER=…] FUNCTION|PROCEDURE [IF NOT EXISTS] name(params)
//! [RETURNS type] [characteristics…] body`, as `mysqldump --routines` writes it (inside
//! `DELIMITER ;;`, which the splitter takes out).
//!
//! The parameter list and result type are brought to canonical form
//! ([`crate::normalize::mysql_parameters`]); the characteristics `[NOT] DETERMINISTIC`, `CONTAINS
//! SQL|NO SQL|READS SQL DATA|MODIFIES SQL DATA`, `SQL SECURITY`, `COMMENT` and `LANGUAGE SQL` are
//! read in any order; the body is kept as written from its first token, which is what
//! `information_schema.ROUTINES.ROUTINE_DEFINITION` holds. `DEFINER` is skipped and reported.

use sqlparser::tokenizer::Token;

use crate::model::{StoredRoutine, StoredRoutineKind};
use crate::normalize::{mysql_data_access, mysql_parameters, mysql_type};

use super::super::super::{IgnoreReason, Location, ReadError};
use super::super::Reader;
use super::lex::{Cursor, blank_conditionals};

/// Words that may follow a type inside a `RETURNS` clause.
const TYPE_WORDS: &[&str] = &[
    "UNSIGNED",
    "SIGNED",
    "ZEROFILL",
    "BINARY",
    "ASCII",
    "UNICODE",
    "PRECISION",
    "VARYING",
];

impl Reader {
    /// Reads one `CREATE FUNCTION|PROCEDURE`.
    pub(in super::super) fn mysql_routine(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let replace = c.or_replace();
        let kind = loop {
            let (word, loc) = c.word_at();
            match word.as_deref() {
                Some("DEFINER") => self.definer(&mut c, loc),
                Some("FUNCTION") => break StoredRoutineKind::Function,
                Some("PROCEDURE") => break StoredRoutineKind::Procedure,
                _ => return Err(self.unsupported(&self.at(loc), "CREATE FUNCTION|PROCEDURE clause")),
            }
        };
        c.i += 1;
        let if_not_exists = c.if_not_exists();
        let (name, name_at) = self.name(&mut c, &at)?;
        let open = c.i;
        if c.token(&Token::LParen).is_none() {
            return Err(self.unsupported(&name_at, "a routine without a parameter list"));
        }
        let close = matching_paren(&c, open)
            .ok_or_else(|| self.unsupported(&name_at, "an unclosed parameter list"))?;
        let written = &code[c.offset_after(open)..c.offset_before(close)];
        let procedure = kind == StoredRoutineKind::Procedure;
        let parameters =
            mysql_parameters(written, procedure).map_err(|what| self.unsupported(&name_at, what))?;
        c.i = close + 1;
        let returns = if c.word_at().0.as_deref() == Some("RETURNS") {
            c.i += 1;
            let start = c.i;
            type_end(&mut c);
            Some(mysql_type(&code[c.offset_before(start)..c.offset_before(c.i)]))
        } else {
            None
        };
        if procedure == returns.is_some() {
            let what = "a function needs RETURNS and a procedure has none";
            return Err(self.unsupported(&name_at, what));
        }
        let mut routine = StoredRoutine {
            name: name.name.clone(),
            kind,
            parameters,
            returns,
            deterministic: false,
            data_access: None,
            security_invoker: false,
            comment: None,
            body: String::new(),
        };
        self.characteristics(&mut c, &mut routine)?;
        routine.body = code[c.offset_before(c.i)..].trim().to_owned();
        if routine.body.is_empty() {
            return Err(self.unsupported(&name_at, "a routine without a body"));
        }
        let key = routine.key();
        if self.schema.stored_routines.contains_key(&key) {
            if if_not_exists {
                return Ok(());
            }
            if !replace {
                return Err(ReadError::Duplicate {
                    at: name_at,
                    what: key.name,
                });
            }
        }
        self.schema.stored_routines.insert(key, routine);
        Ok(())
    }

    /// The characteristics between the signature and the body.
    fn characteristics(&mut self, c: &mut Cursor<'_>, r: &mut StoredRoutine) -> Result<(), ReadError> {
        loop {
            let (word, loc) = c.word_at();
            let next = |k: usize| {
                matches!(c.tokens.get(c.i + k).map(|t| &t.token), Some(Token::Word(w)) if w.quote_style.is_none())
                    .then(|| c.tokens.get(c.i + k).map(|t| t.token.to_string().to_ascii_uppercase()))
                    .flatten()
            };
            match word.as_deref() {
                Some("DETERMINISTIC") => {
                    r.deterministic = true;
                    c.i += 1;
                }
                Some("NOT") if next(1).as_deref() == Some("DETERMINISTIC") => {
                    r.deterministic = false;
                    c.i += 2;
                }
                Some("LANGUAGE") if next(1).as_deref() == Some("SQL") => c.i += 2,
                Some("CONTAINS") if next(1).as_deref() == Some("SQL") => {
                    r.data_access = None;
                    c.i += 2;
                }
                Some("NO") if next(1).as_deref() == Some("SQL") => {
                    r.data_access = mysql_data_access("NO SQL");
                    c.i += 2;
                }
                Some(w @ ("READS" | "MODIFIES")) if next(1).as_deref() == Some("SQL") => {
                    r.data_access = mysql_data_access(&format!("{w} SQL DATA"));
                    c.i += 3;
                }
                Some("SQL") if next(1).as_deref() == Some("SECURITY") => {
                    c.i += 2;
                    match c.word_at().0.as_deref() {
                        Some("INVOKER") => r.security_invoker = true,
                        Some("DEFINER") => {
                            r.security_invoker = false;
                            self.ignore(
                                self.at(loc),
                                IgnoreReason::DefinerOrDefault,
                                "SQL SECURITY DEFINER",
                            );
                        }
                        _ => {
                            return Err(
                                self.unsupported(&self.at(loc), "SQL SECURITY without DEFINER or INVOKER")
                            );
                        }
                    }
                    c.i += 1;
                }
                Some("COMMENT") => {
                    c.i += 1;
                    let comment = c
                        .string()
                        .ok_or_else(|| self.unsupported(&self.at(loc), "COMMENT without a string"))?;
                    r.comment = Some(comment).filter(|s| !s.is_empty());
                    c.i += 1;
                }
                _ => return Ok(()),
            }
        }
    }
}

/// The index of the `)` that closes the `(` at `open`.
fn matching_paren(c: &Cursor<'_>, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, t) in c.tokens.iter().enumerate().skip(open) {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// Moves past a type: its name, a parenthesised list, sign and width words and character-set
/// and collation clauses.
fn type_end(c: &mut Cursor<'_>) {
    c.i += 1;
    loop {
        if c.peek() == Some(&Token::LParen) {
            match matching_paren(c, c.i) {
                Some(close) => c.i = close + 1,
                None => return,
            }
            continue;
        }
        match c.word_at().0.as_deref() {
            Some(w) if TYPE_WORDS.contains(&w) => c.i += 1,
            Some("CHARSET" | "COLLATE") => c.i += 2,
            Some("CHARACTER") => c.i += 3,
            _ => return,
        }
    }
}
