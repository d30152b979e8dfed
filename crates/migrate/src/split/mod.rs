//! Splits a migration file into statements with a tokenizer, never by a naive search for `;`.
//!
//! PostgreSQL: `'…'` (doubled quotes), `E'…'` (backslash escapes), `"…"`, `$tag$…$tag$`, `--`
//! comments, nested `/* */` comments, and SQL-standard `BEGIN ATOMIC … END` bodies (with `CASE …
//! END` nesting inside). MySQL/MariaDB: `'…'` and `"…"` with backslash escapes, backticks, `#` and
//! `-- ` comments, `/* */`, and `DELIMITER` directives of the mysql client (a directive is a line of
//! its own, recognised where a statement starts). A MySQL compound statement (`CREATE PROCEDURE …
//! BEGIN … END` and the like) is one statement with or without a `DELIMITER`: without one, its
//! block structure decides which `;` ends it, as in the server's grammar (see `compound`).
//!
//! [`pieces`] partitions the input into statement bodies, separators and directives, so no byte is
//! ever lost; [`split`] keeps the bodies that contain code, trimmed.

use std::ops::Range;

use ptah_engine::Dialect;

use crate::compound::Tracker;

mod opaque;

/// What a piece of the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// Statement text (possibly only whitespace and comments).
    Body,
    /// The delimiter that ended a statement (`;` or a `DELIMITER`-defined one).
    Separator,
    /// A MySQL `DELIMITER x` line, including its line break.
    Directive,
}

/// A contiguous part of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// What it is.
    pub kind: PieceKind,
    /// Byte range in the input.
    pub range: Range<usize>,
    /// For a body: the byte offset of its first code (not whitespace, not comment), if any.
    pub first_code: Option<usize>,
}

/// One statement to send to the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The statement from its first code to its end, without its delimiter or trailing whitespace.
    pub sql: String,
    /// 1-based line of its first code.
    pub line: usize,
}

/// Why the input cannot be split: something is never closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitError {
    /// 1-based line where the construct opens.
    pub line: usize,
    /// What is unterminated.
    pub reason: String,
}

/// Whitespace to both servers' lexers: ASCII whitespace and the vertical tab.
fn blank(c: u8) -> bool {
    c.is_ascii_whitespace() || c == 0x0b
}

/// Splits `sql` into statements for `dialect`.
pub fn split(sql: &str, dialect: Dialect) -> Result<Vec<Statement>, SplitError> {
    let pieces = pieces(sql, dialect)?;
    let mut line = 1;
    let mut counted = 0;
    let mut out = Vec::new();
    for piece in pieces {
        let Some(first) = piece.first_code else { continue };
        line += count_lines(&sql.as_bytes()[counted..first]);
        counted = first;
        // Leading comments stay out of the statement: it starts at its first code.
        // Trimmed by the scanner's own notion of blank: a Unicode trim would also strip code
        // bytes (U+00A0) and leave an empty statement.
        let text = sql
            .get(first..piece.range.end)
            .unwrap_or_default()
            .trim_end_matches(|c: char| c.is_ascii() && blank(c as u8));
        out.push(Statement {
            sql: text.to_owned(),
            line,
        });
    }
    Ok(out)
}

/// Partitions `sql` into bodies, separators and directives, in order and without gaps.
pub fn pieces(sql: &str, dialect: Dialect) -> Result<Vec<Piece>, SplitError> {
    Scanner {
        b: sql.as_bytes(),
        mysql: dialect == Dialect::Mysql,
        i: 0,
        start: 0,
        first_code: None,
        delimiter: b";".to_vec(),
        out: Vec::new(),
        atomic: 0,
        after_begin: false,
        compound: Tracker::default(),
    }
    .run()
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

struct Scanner<'a> {
    b: &'a [u8],
    mysql: bool,
    i: usize,
    start: usize,
    first_code: Option<usize>,
    delimiter: Vec<u8>,
    out: Vec<Piece>,
    /// Depth of `BEGIN ATOMIC` / `CASE` blocks inside an SQL-standard body (PostgreSQL).
    atomic: usize,
    /// The previous significant token was the word BEGIN.
    after_begin: bool,
    /// Block depth of a MySQL compound statement while the delimiter is `;`.
    compound: Tracker,
}

impl Scanner<'_> {
    fn run(mut self) -> Result<Vec<Piece>, SplitError> {
        while self.i < self.b.len() {
            if self.mysql && self.first_code.is_none() && self.at_line_start() && self.directive()? {
                continue;
            }
            if self.depth() == 0 && self.b[self.i..].starts_with(&self.delimiter) {
                let end = self.i + self.delimiter.len();
                self.finish_body(self.i);
                self.push(PieceKind::Separator, self.i..end);
                self.i = end;
                self.start = end;
                continue;
            }
            self.token()?;
        }
        if self.depth() > 0 {
            let opened = self.first_code.unwrap_or(self.start);
            let what = if self.mysql {
                "unterminated compound statement (a BEGIN, IF, LOOP, WHILE, REPEAT or CASE misses its END)"
            } else {
                "unterminated BEGIN ATOMIC body (missing END)"
            };
            return Err(self.error(opened, what));
        }
        self.finish_body(self.b.len());
        Ok(self.out)
    }

    /// Open blocks in which the delimiter does not end the statement.
    fn depth(&self) -> usize {
        if self.mysql {
            self.compound.depth()
        } else {
            self.atomic
        }
    }

    /// True while MySQL bodies are tracked: with a `DELIMITER` of their own, files delimit them.
    fn tracks_compound(&self) -> bool {
        self.mysql && self.delimiter == b";"
    }

    fn push(&mut self, kind: PieceKind, range: Range<usize>) {
        self.out.push(Piece {
            kind,
            range,
            first_code: None,
        });
    }

    fn finish_body(&mut self, end: usize) {
        if end > self.start {
            self.out.push(Piece {
                kind: PieceKind::Body,
                range: self.start..end,
                first_code: self.first_code.take(),
            });
        }
        self.first_code = None;
        self.after_begin = false;
        self.compound.reset();
    }

    fn error(&self, at: usize, reason: &str) -> SplitError {
        SplitError {
            line: 1 + count_lines(&self.b[..at.min(self.b.len())]),
            reason: reason.to_owned(),
        }
    }

    /// True at the first byte of a line. Only there is a directive looked for: [`Self::directive`]
    /// skips the line's leading blanks itself, so the blanks after a line start that held no
    /// directive need no look-up of their own. (Looking back from every blank over the blanks
    /// before it made a long run of them quadratic: a 16 MiB line of spaces never finished.)
    fn at_line_start(&self) -> bool {
        self.i == 0 || self.b[self.i - 1] == b'\n'
    }

    /// A `DELIMITER x` line at the current position (MySQL), after the line's leading spaces and
    /// tabs; true when one was consumed.
    fn directive(&mut self) -> Result<bool, SplitError> {
        let line_start = self.i;
        let mut j = self.i;
        while j < self.b.len() && (self.b[j] == b' ' || self.b[j] == b'\t') {
            j += 1;
        }
        let word = b"delimiter";
        let rest = &self.b[j..];
        if rest.len() < word.len()
            || !rest[..word.len()].eq_ignore_ascii_case(word)
            || rest.get(word.len()).is_some_and(|b| !b.is_ascii_whitespace())
        {
            return Ok(false);
        }
        let line_end = self.b[j..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(self.b.len(), |p| j + p + 1);
        let args = String::from_utf8_lossy(&self.b[j + word.len()..line_end]);
        let Some(delimiter) = args.split_whitespace().next() else {
            return Err(self.error(line_start, "DELIMITER needs a delimiter"));
        };
        let delimiter = delimiter.as_bytes().to_vec();
        self.finish_body(line_start);
        self.push(PieceKind::Directive, line_start..line_end);
        self.delimiter = delimiter;
        self.i = line_end;
        self.start = line_end;
        Ok(true)
    }

    fn code(&mut self, at: usize) {
        if self.first_code.is_none() {
            self.first_code = Some(at);
        }
    }

    fn token(&mut self) -> Result<(), SplitError> {
        let b = self.b;
        let i = self.i;
        let c = b[i];
        let next = b.get(i + 1).copied();
        match c {
            b'-' if next == Some(b'-')
                && (!self.mysql
                    || b.get(i + 2)
                        .is_none_or(|n| n.is_ascii_whitespace() || n.is_ascii_control())) =>
            {
                self.skip_line();
            }
            b'#' if self.mysql => self.skip_line(),
            b'/' if next == Some(b'*') => self.block_comment()?,
            b'\'' => {
                let escapes = self.mysql || self.e_prefix();
                self.quoted(b'\'', escapes, "unterminated string literal")?;
            }
            b'"' => self.quoted(b'"', self.mysql, "unterminated quoted identifier or string")?,
            b'`' if self.mysql => self.quoted(b'`', false, "unterminated backtick identifier")?,
            b'$' if !self.mysql && !self.after_ident() && self.dollar()? => {}
            _ if is_ident(c) => self.word(),
            _ if blank(c) => self.i += 1,
            _ => {
                self.code(i);
                self.after_begin = false;
                if self.tracks_compound() {
                    self.compound.punct(c);
                }
                self.i += 1;
            }
        }
        Ok(())
    }

    /// True when the byte before the current one belongs to an identifier (so `$` continues it).
    fn after_ident(&self) -> bool {
        self.i > 0 && is_ident(self.b[self.i - 1])
    }

    fn word(&mut self) {
        let start = self.i;
        self.code(start);
        while self.i < self.b.len() && is_ident(self.b[self.i]) {
            // The mysql client finds its delimiter anywhere outside literals, even in `END$$`.
            if self.mysql && self.i > start && self.b[self.i..].starts_with(&self.delimiter) {
                break;
            }
            self.i += 1;
        }
        if self.mysql {
            if self.tracks_compound() {
                self.compound.word(&self.b[start..self.i]);
            }
            return;
        }
        let word = &self.b[start..self.i];
        let is = |k: &[u8]| word.eq_ignore_ascii_case(k);
        let opens = (is(b"atomic") && self.after_begin) || (self.atomic > 0 && is(b"case"));
        if opens {
            self.atomic += 1;
        } else if self.atomic > 0 && is(b"end") {
            self.atomic -= 1;
        }
        self.after_begin = is(b"begin");
    }
}
