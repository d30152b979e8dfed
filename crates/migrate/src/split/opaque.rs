//! Spans whose contents never end a statement: comments, quoted strings and identifiers, and
//! dollar-quoted bodies. Apart from the token dispatch because each has its own escape and nesting
//! rules per dialect, and the scanner only needs to know where one ends.

use super::{Scanner, SplitError, is_ident};

impl Scanner<'_> {
    pub(super) fn skip_line(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
    }

    pub(super) fn block_comment(&mut self) -> Result<(), SplitError> {
        let open = self.i;
        let mut depth = 0usize;
        while self.i < self.b.len() {
            if self.b[self.i..].starts_with(b"/*") && (depth == 0 || !self.mysql) {
                depth += 1;
                self.i += 2;
            } else if self.b[self.i..].starts_with(b"*/") {
                depth -= 1;
                self.i += 2;
                if depth == 0 {
                    return Ok(());
                }
            } else {
                self.i += 1;
            }
        }
        Err(self.error(open, "unterminated block comment"))
    }

    /// True when the quote at `i` is preceded by a standalone `E`/`e` (a PostgreSQL escape string).
    pub(super) fn e_prefix(&self) -> bool {
        let i = self.i;
        i >= 1 && matches!(self.b[i - 1], b'e' | b'E') && !(i >= 2 && is_ident(self.b[i - 2]))
    }

    pub(super) fn quoted(&mut self, quote: u8, backslash: bool, what: &str) -> Result<(), SplitError> {
        let open = self.i;
        self.code(open);
        self.after_begin = false;
        if self.tracks_compound() {
            self.compound.other();
        }
        self.i += 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if backslash && c == b'\\' {
                self.i += 2;
            } else if c == quote {
                if self.b.get(self.i + 1) == Some(&quote) {
                    self.i += 2;
                } else {
                    self.i += 1;
                    return Ok(());
                }
            } else {
                self.i += 1;
            }
        }
        self.i = self.b.len();
        Err(self.error(open, what))
    }

    /// A `$tag$ … $tag$` literal at `i`; false when the `$` does not open one.
    pub(super) fn dollar(&mut self) -> Result<bool, SplitError> {
        let open = self.i;
        let mut j = open + 1;
        if let Some(&first) = self.b.get(j)
            && (first.is_ascii_alphabetic() || first == b'_' || first >= 0x80)
        {
            while j < self.b.len()
                && (self.b[j].is_ascii_alphanumeric() || self.b[j] == b'_' || self.b[j] >= 0x80)
            {
                j += 1;
            }
        }
        if self.b.get(j) != Some(&b'$') {
            return Ok(false);
        }
        let tag = &self.b[open..=j];
        self.code(open);
        self.after_begin = false;
        let body = j + 1;
        match self.b[body..].windows(tag.len()).position(|w| w == tag) {
            Some(p) => {
                self.i = body + p + tag.len();
                Ok(true)
            }
            None => {
                self.i = self.b.len();
                Err(self.error(open, "unterminated dollar-quoted string"))
            }
        }
    }
}
