//! MySQL `CREATE [OR REPLACE] [DEFINER=…] EVENT [IF NOT EXISTS] name ON SCHEDULE {AT 'ts' | EVERY n
//! unit [STARTS 'ts'] [ENDS 'ts']} [ON COMPLETION [NOT] PRESERVE] [ENABLE | DISABLE | DISABLE ON
//! SLAVE] [COMMENT '…'] DO body`, as `mysqldump --events` writes it (in conditional comments,
//! inside `DELIMITER ;;`).
//!
//! Times are literal strings as `SHOW CREATE EVENT` prints them (`'2030-01-01 00:00:00'`; a date
//! alone is midnight); `STARTS CURRENT_TIMESTAMP` is a `STARTS` left out (the time of creation,
//! which is not compared); any other time computed from an expression (`CURRENT_TIMESTAMP +
//! INTERVAL 1 HOUR`) is refused by name, because the server stores its value at creation, which
//! no document can know.

use sqlparser::tokenizer::Token;

use crate::model::{Event, QualifiedName};

use super::super::super::{Location, ReadError};
use super::super::Reader;
use super::lex::{Cursor, blank_conditionals};

impl Reader {
    /// Reads one `CREATE EVENT`.
    pub(in super::super) fn mysql_event(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let replace = c.or_replace();
        loop {
            let (word, loc) = c.word_at();
            match word.as_deref() {
                Some("DEFINER") => self.definer(&mut c, loc),
                Some("EVENT") => break,
                _ => return Err(self.unsupported(&self.at(loc), "CREATE EVENT clause")),
            }
        }
        c.i += 1;
        let if_not_exists = c.if_not_exists();
        let (name, name_at) = self.name(&mut c, &at)?;
        self.keywords(&mut c, &["ON", "SCHEDULE"], &name_at)?;
        let mut event = Event {
            name: name.name.clone(),
            schedule: String::new(),
            starts: None,
            ends: None,
            preserve: false,
            status: None,
            comment: None,
            body: String::new(),
        };
        let (word, loc) = c.word_at();
        c.i += 1;
        match word.as_deref() {
            Some("AT") => event.schedule = format!("AT '{}'", self.time(&mut c, loc)?),
            Some("EVERY") => {
                let value = match c.peek() {
                    Some(Token::Number(n, _)) => n.clone(),
                    Some(Token::SingleQuotedString(s)) => format!("'{}'", s.replace('\'', "''")),
                    _ => {
                        return Err(
                            self.unsupported(&self.at(loc), "an event interval that is not a literal")
                        );
                    }
                };
                c.i += 1;
                let unit = c
                    .word_at()
                    .0
                    .ok_or_else(|| self.unsupported(&self.at(loc), "an interval unit"))?;
                c.i += 1;
                event.schedule = format!("EVERY {value} {unit}");
                if c.word_at().0.as_deref() == Some("STARTS") {
                    c.i += 1;
                    // `STARTS CURRENT_TIMESTAMP` is what leaving it out means: the time of creation.
                    if !now(&mut c) {
                        event.starts = Some(self.time(&mut c, loc)?);
                    }
                }
                if c.word_at().0.as_deref() == Some("ENDS") {
                    c.i += 1;
                    event.ends = Some(self.time(&mut c, loc)?);
                }
            }
            _ => return Err(self.unsupported(&self.at(loc), "ON SCHEDULE without AT or EVERY")),
        }
        loop {
            let (word, loc) = c.word_at();
            match word.as_deref() {
                Some("ON") => {
                    c.i += 2;
                    event.preserve = c.word_at().0.as_deref() != Some("NOT");
                    c.i += if event.preserve { 1 } else { 2 };
                }
                Some("ENABLE") => {
                    event.status = None;
                    c.i += 1;
                }
                Some("DISABLE") => {
                    c.i += 1;
                    let on_slave = c.word_at().0.as_deref() == Some("ON");
                    event.status = Some(if on_slave { "DISABLE ON SLAVE" } else { "DISABLE" }.to_owned());
                    c.i += if on_slave { 2 } else { 0 };
                }
                Some("COMMENT") => {
                    c.i += 1;
                    let comment = c
                        .string()
                        .ok_or_else(|| self.unsupported(&self.at(loc), "COMMENT without a string"))?;
                    event.comment = Some(comment).filter(|s| !s.is_empty());
                    c.i += 1;
                }
                Some("DO") => break,
                _ => return Err(self.unsupported(&self.at(loc), "CREATE EVENT clause")),
            }
        }
        event.body = code[c.offset_after(c.i)..].trim().to_owned();
        if event.body.is_empty() {
            return Err(self.unsupported(&name_at, "an event without a body"));
        }
        let key = QualifiedName::new("", &event.name);
        if self.schema.events.contains_key(&key) {
            if if_not_exists {
                return Ok(());
            }
            if !replace {
                return Err(ReadError::Duplicate {
                    at: name_at,
                    what: format!("event {}", event.name),
                });
            }
        }
        self.schema.events.insert(key, event);
        Ok(())
    }

    /// A literal time, as the server prints it; `+ INTERVAL …` and other expressions are refused.
    fn time(&self, c: &mut Cursor<'_>, loc: sqlparser::tokenizer::Location) -> Result<String, ReadError> {
        let value = c.string().ok_or_else(|| {
            self.unsupported(
                &self.at(loc),
                "an event time that is not a literal (write the timestamp itself)",
            )
        })?;
        c.i += 1;
        if matches!(c.peek(), Some(Token::Plus | Token::Minus)) {
            return Err(self.unsupported(
                &self.at(loc),
                "an event time computed with + INTERVAL (write the timestamp itself)",
            ));
        }
        Ok(canonical_time(&value))
    }

    fn keywords(&self, c: &mut Cursor<'_>, words: &[&str], at: &Location) -> Result<(), ReadError> {
        for w in words {
            if c.word_at().0.as_deref() != Some(*w) {
                return Err(self.unsupported(at, format!("CREATE EVENT without {}", words.join(" "))));
            }
            c.i += 1;
        }
        Ok(())
    }
}

/// Moves past `CURRENT_TIMESTAMP`, `CURRENT_TIMESTAMP()` or `NOW()` when it stands alone (not
/// followed by `+ INTERVAL …`), and says whether it did.
fn now(c: &mut Cursor<'_>) -> bool {
    let start = c.i;
    match c.word_at().0.as_deref() {
        Some("CURRENT_TIMESTAMP" | "NOW") => c.i += 1,
        _ => return false,
    }
    if c.token(&Token::LParen).is_some() && c.token(&Token::RParen).is_none() {
        c.i = start;
        return false;
    }
    if matches!(c.peek(), Some(Token::Plus | Token::Minus)) {
        c.i = start;
        return false;
    }
    true
}

/// `'2030-01-01'` is `'2030-01-01 00:00:00'`, as the server prints a time.
fn canonical_time(text: &str) -> String {
    let text = text.trim();
    if text.len() == 10 && !text.contains(' ') {
        format!("{text} 00:00:00")
    } else {
        text.to_owned()
    }
}
