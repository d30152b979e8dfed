//! MySQL/MariaDB `CREATE VIEW` and `CREATE TRIGGER`, read from their text because their bodies
//! are kept as written (see [`crate::normalize::mysql_view_definition`] for the canonical forms).
//!
//! `mariadb-dump --no-data` writes each view twice: first a placeholder (``CREATE VIEW `v` AS
//! SELECT NULL AS `a` ``, so that views reading it can be created before it), then, after every
//! table, ``DROP VIEW IF EXISTS `v` `` and the real view. A `DROP VIEW IF EXISTS` of a declared
//! view therefore removes it, and the last definition stands. Its clauses:
//! - `DEFINER = …`, `ALGORITHM = UNDEFINED` and `SQL SECURITY DEFINER` are skipped and reported
//!   (the applying user becomes the definer; the others are the defaults); `ALGORITHM=MERGE|
//!   TEMPTABLE`, `SQL SECURITY INVOKER` and `WITH [CASCADED|LOCAL] CHECK OPTION` are held as
//!   [`ViewOptions`]; a column list is refused by name;
//! - triggers come in `DELIMITER ;;` blocks (the splitter takes the client commands out) as
//!   ``/*!50003 CREATE*/ /*!50017 DEFINER=…*/ /*!50003 TRIGGER … */``; `FOLLOWS`/`PRECEDES`
//!   ordering is refused by name, because the model does not order triggers.

use sqlparser::ast::{Ident, ObjectName, ObjectNamePart};
use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan, Tokenizer};

mod database;
mod event;
mod lex;
mod partition;
mod routine;

use lex::{Cursor, blank_conditionals};

use crate::model::{QualifiedName, Trigger, View, ViewOptions};
use crate::normalize::{mysql_trigger_definition, sql_dialect};

use super::super::{IgnoreReason, Location, ReadError};
use super::Reader;

impl Reader {
    /// `CREATE [OR REPLACE] [ALGORITHM=…] [DEFINER=…] [SQL SECURITY …] VIEW [IF NOT EXISTS] v AS …`.
    pub(super) fn mysql_view(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let replace = c.or_replace();
        let mut options = ViewOptions::default();
        loop {
            let (word, loc) = c.word_at();
            match word.as_deref() {
                Some("ALGORITHM") => {
                    let start = c.i;
                    c.i += 1;
                    let _ = c.token(&Token::Eq);
                    let (value, _) = c.word_at();
                    c.i += 1;
                    match value.as_deref() {
                        Some("UNDEFINED") => {
                            self.ignore(self.at(loc), IgnoreReason::DefinerOrDefault, &c.text(start, c.i));
                        }
                        Some(a @ ("MERGE" | "TEMPTABLE")) => options.algorithm = Some(a.to_owned()),
                        _ => {
                            let what = format!("view ALGORITHM={}", value.unwrap_or_default());
                            return Err(self.unsupported(&self.at(loc), what));
                        }
                    }
                }
                Some("DEFINER") => self.definer(&mut c, loc),
                Some("SQL") => {
                    let start = c.i;
                    c.i += 2;
                    let (value, _) = c.word_at();
                    c.i += 1;
                    match value.as_deref() {
                        Some("DEFINER") => {
                            self.ignore(self.at(loc), IgnoreReason::DefinerOrDefault, &c.text(start, c.i));
                        }
                        Some("INVOKER") => options.security_invoker = true,
                        _ => {
                            let what = format!("view SQL SECURITY {}", value.unwrap_or_default());
                            return Err(self.unsupported(&self.at(loc), what));
                        }
                    }
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
        let end = match c.check_option() {
            Some((with, kind)) => {
                options.check_option = Some(kind);
                c.offset_before(with)
            }
            None => code.len(),
        };
        let definition = View::canonical_definition(&code[start..end]);
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
        if options.is_default() {
            self.schema.view_options.remove(&name.name);
        } else {
            self.schema.view_options.insert(name.name.clone(), options);
        }
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
            comment: None,
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
                && ["SQL", "VIEW", "TRIGGER", "FUNCTION", "PROCEDURE", "EVENT", "AGGREGATE"]
                    .contains(&w.value.to_ascii_uppercase().as_str()));
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
