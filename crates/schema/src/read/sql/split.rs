//! Splits a script into statements and client commands before sqlparser sees any of it.
//!
//! Dumps are written for a client, not a server: `pg_dump` opens and closes with psql
//! meta-commands (`\restrict …`), and `mysqldump` switches the statement delimiter with
//! `DELIMITER ;;` around routines and triggers. Neither is SQL, so the splitter takes them out and
//! hands every statement to the parser on its own, with its byte range in the original text so
//! that errors still point at the right line and column.
//!
//! The splitter knows just enough lexing to find terminators: quoted strings and identifiers,
//! PostgreSQL dollar quotes and nested block comments, line comments, and MySQL conditional
//! comments (`/*!40101 … */`), whose content is code and stays in the statement for sqlparser to
//! unwrap.

use std::ops::Range;

use crate::model::Dialect;

/// One piece of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A statement without its terminator, and where its first token starts (after any leading
    /// whitespace and comments).
    Statement(Range<usize>, usize),
    /// A client command on a line of its own (`\restrict …`, `DELIMITER ;;`), whole line.
    Client(Range<usize>),
}

/// Splits `text` into statements and client commands, in order; blank statements are dropped.
pub(crate) fn split(dialect: Dialect, text: &str) -> Vec<Piece> {
    Splitter {
        dialect,
        bytes: text.as_bytes(),
        text,
        pos: 0,
        delimiter: ";".to_owned(),
        pieces: Vec::new(),
    }
    .run()
}

struct Splitter<'a> {
    dialect: Dialect,
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    delimiter: String,
    pieces: Vec<Piece>,
}

impl Splitter<'_> {
    fn run(mut self) -> Vec<Piece> {
        let mut start = 0;
        // Where the current statement's first token is, once it has one.
        let mut first: Option<usize> = None;
        while self.pos < self.bytes.len() {
            if first.is_none()
                && self.at_line_start()
                && let Some(end) = self.client_command()
            {
                self.pieces.push(Piece::Client(self.pos..end));
                self.pos = end;
                start = end;
                continue;
            }
            if self.text[self.pos..].starts_with(self.delimiter.as_str()) {
                self.push(start..self.pos, first.take());
                self.pos += self.delimiter.len();
                start = self.pos;
                continue;
            }
            let b = self.bytes[self.pos];
            let skipped = self.skip_token(b);
            if first.is_none() && !skipped.comment && !b.is_ascii_whitespace() {
                first = Some(self.pos);
            }
            self.pos = skipped.end;
        }
        self.push(start..self.bytes.len(), first);
        self.pieces
    }

    /// Keeps a statement that has a token; one of only whitespace and comments is dropped.
    fn push(&mut self, range: Range<usize>, first: Option<usize>) {
        if let Some(first) = first {
            self.pieces.push(Piece::Statement(range, first));
        }
    }

    /// Only whitespace since the last newline (or the start of the text).
    fn at_line_start(&self) -> bool {
        self.bytes[..self.pos]
            .iter()
            .rev()
            .take_while(|&&b| b != b'\n')
            .all(|b| b == &b' ' || b == &b'\t' || b == &b'\r')
    }

    /// A client command starting here: returns the end of its line (after the newline).
    fn client_command(&mut self) -> Option<usize> {
        let rest = &self.text[self.pos..];
        let trimmed = rest.trim_start_matches([' ', '\t']);
        let line_end = rest.find('\n').map_or(self.text.len(), |i| self.pos + i + 1);
        if trimmed.starts_with('\\') {
            return Some(line_end);
        }
        if self.dialect == Dialect::Mysql {
            let word = trimmed.get(..9)?;
            let after = trimmed.as_bytes().get(9).copied();
            if word.eq_ignore_ascii_case("DELIMITER") && after.is_some_and(|b| b == b' ' || b == b'\t') {
                let line = &self.text[self.pos..line_end];
                let delimiter = line.trim()[9..].trim();
                if !delimiter.is_empty() {
                    self.delimiter = delimiter.to_owned();
                }
                return Some(line_end);
            }
        }
        None
    }

    /// Skips one token (or one byte of ordinary text) starting with `b`.
    fn skip_token(&self, b: u8) -> Skipped {
        let p = self.pos;
        let next = self.bytes.get(p + 1).copied();
        let code = |end| Skipped { end, comment: false };
        let comment = |end| Skipped { end, comment: true };
        match b {
            b'\'' => code(self.quoted(p, b'\'', self.backslash_escapes(p))),
            b'"' => code(self.quoted(p, b'"', self.dialect == Dialect::Mysql)),
            b'`' if self.dialect == Dialect::Mysql => code(self.quoted(p, b'`', false)),
            b'-' if next == Some(b'-') && self.dash_comment(p) => comment(self.line_end(p)),
            b'#' if self.dialect == Dialect::Mysql => comment(self.line_end(p)),
            b'/' if next == Some(b'*') => {
                let conditional = self.dialect == Dialect::Mysql && self.bytes.get(p + 2) == Some(&b'!');
                if conditional {
                    // The markers are neutral; what is between them is code, scanned as usual.
                    code(p + 3)
                } else {
                    comment(self.block_comment(p))
                }
            }
            b'*' if next == Some(b'/') && self.dialect == Dialect::Mysql => code(p + 2),
            b'$' if self.dialect == Dialect::Postgres => code(self.dollar_quoted(p)),
            _ => code(p + char_len(b)),
        }
    }

    /// MySQL needs whitespace after `--` (`1--1` is arithmetic there); PostgreSQL does not.
    fn dash_comment(&self, p: usize) -> bool {
        self.dialect == Dialect::Postgres || self.bytes.get(p + 2).is_none_or(|b| b.is_ascii_whitespace())
    }

    /// PostgreSQL `E'…'` strings and every MySQL string take backslash escapes.
    fn backslash_escapes(&self, quote: usize) -> bool {
        match self.dialect {
            Dialect::Mysql => true,
            Dialect::Postgres => {
                quote > 0
                    && matches!(self.bytes[quote - 1], b'e' | b'E')
                    && (quote < 2 || !is_ident_byte(self.bytes[quote - 2]))
            }
        }
    }

    /// The end of a quoted run opened at `p` (a doubled quote is an escape).
    fn quoted(&self, p: usize, quote: u8, backslash: bool) -> usize {
        let mut i = p + 1;
        while i < self.bytes.len() {
            let b = self.bytes[i];
            if backslash && b == b'\\' {
                i += 2;
            } else if b == quote {
                if self.bytes.get(i + 1) == Some(&quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i += 1;
            }
        }
        self.bytes.len()
    }

    fn line_end(&self, p: usize) -> usize {
        self.text[p..].find('\n').map_or(self.bytes.len(), |i| p + i)
    }

    /// PostgreSQL block comments nest; MySQL's do not.
    fn block_comment(&self, p: usize) -> usize {
        let nests = self.dialect == Dialect::Postgres;
        let mut depth = 0usize;
        let mut i = p;
        while i + 1 < self.bytes.len() {
            match (self.bytes[i], self.bytes[i + 1]) {
                (b'/', b'*') if depth == 0 || nests => {
                    depth += 1;
                    i += 2;
                }
                (b'*', b'/') => {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => i += 1,
            }
        }
        self.bytes.len()
    }

    /// `$tag$ … $tag$`; a `$` that opens no dollar quote (`$1`, `a$b`) is one byte of text.
    fn dollar_quoted(&self, p: usize) -> usize {
        if p > 0 && is_ident_byte(self.bytes[p - 1]) {
            return p + 1;
        }
        let tag_len = self.bytes[p + 1..]
            .iter()
            .take_while(|&&b| is_ident_byte(b))
            .count();
        let digit_first = self.bytes.get(p + 1).is_some_and(u8::is_ascii_digit);
        if digit_first || self.bytes.get(p + 1 + tag_len) != Some(&b'$') {
            return p + 1;
        }
        let tag = &self.text[p..p + tag_len + 2];
        let body = p + tag.len();
        self.text[body..]
            .find(tag)
            .map_or(self.bytes.len(), |i| body + i + tag.len())
    }
}

struct Skipped {
    end: usize,
    comment: bool,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The byte length of the UTF-8 character starting with `b` (1 for a continuation byte, so the
/// scan always moves).
fn char_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(dialect: Dialect, text: &str) -> Vec<String> {
        split(dialect, text)
            .into_iter()
            .map(|p| match p {
                Piece::Statement(r, first) => {
                    assert!(r.contains(&first) && !text[first..].starts_with(char::is_whitespace));
                    format!("S:{}", text[r].trim())
                }
                Piece::Client(r) => format!("C:{}", text[r].trim()),
            })
            .collect()
    }

    #[test]
    fn psql_meta_commands_are_client_pieces() {
        let text = "\\restrict abc\nSET a = 1;\nCREATE TABLE t (a int);\n\\unrestrict abc\n";
        assert_eq!(
            texts(Dialect::Postgres, text),
            [
                "C:\\restrict abc",
                "S:SET a = 1",
                "S:CREATE TABLE t (a int)",
                "C:\\unrestrict abc"
            ]
        );
    }

    #[test]
    fn terminators_inside_strings_comments_and_dollar_quotes_do_not_split() {
        let text = "SELECT 'a;b', \"c;d\" /* x; /* nested; */ y; */ -- z;\n, E'\\';', $f$ ; $f$, $1;\
                    CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END $body$ LANGUAGE plpgsql";
        let got = texts(Dialect::Postgres, text);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[1].starts_with("S:CREATE FUNCTION") && got[1].ends_with("plpgsql"));
    }

    #[test]
    fn mysql_delimiter_and_conditional_comments() {
        let text = "/*!40101 SET NAMES utf8mb4 */;\nDELIMITER ;;\n/*!50003 CREATE*/ /*!50003 TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET NEW.a = 1; SET NEW.b = 'x;'; END */;;\nDELIMITER ;\nCREATE TABLE `a;b` (c int) COMMENT='p;q';";
        assert_eq!(
            texts(Dialect::Mysql, text),
            [
                "S:/*!40101 SET NAMES utf8mb4 */",
                "C:DELIMITER ;;",
                "S:/*!50003 CREATE*/ /*!50003 TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET NEW.a = 1; SET NEW.b = 'x;'; END */",
                "C:DELIMITER ;",
                "S:CREATE TABLE `a;b` (c int) COMMENT='p;q'",
            ]
        );
    }

    #[test]
    fn comment_only_pieces_are_dropped_and_a_meta_command_mid_statement_is_text() {
        let text = "-- header\n/* only a comment */;\nSELECT 1\n  \\x not at a statement start\n;";
        assert_eq!(
            texts(Dialect::Postgres, text),
            ["S:SELECT 1\n  \\x not at a statement start"]
        );
    }

    #[test]
    fn unterminated_constructs_end_at_the_end_of_the_text() {
        for text in [
            "SELECT 'open",
            "SELECT $a$ open",
            "SELECT /* open",
            "SELECT \"open",
        ] {
            let pieces = split(Dialect::Postgres, text);
            assert_eq!(pieces, [Piece::Statement(0..text.len(), 0)], "{text}");
        }
    }
}
