//! Positions and short texts for the reader's reports: locating statements in a long dump in
//! one pass, the summary an ignore notice shows, and what sqlparser's messages say.

use super::super::Location;

/// Counts lines up to increasing offsets, so locating every statement of a dump stays linear.
#[derive(Default)]
pub(super) struct LineCounter {
    offset: usize,
    line: usize,
    line_start: usize,
}

impl LineCounter {
    pub(super) fn locate(&mut self, file: &str, text: &str, offset: usize) -> Location {
        let offset = offset.min(text.len());
        if offset < self.offset {
            *self = LineCounter::default();
        }
        let chunk = text.get(self.offset..offset).unwrap_or("");
        for (i, b) in chunk.bytes().enumerate() {
            if b == b'\n' {
                self.line += 1;
                self.line_start = self.offset + i + 1;
            }
        }
        self.offset = offset;
        let column = text.get(self.line_start..offset).map_or(0, |s| s.chars().count());
        Location {
            file: file.to_owned(),
            line: self.line + 1,
            column: column + 1,
        }
    }
}

/// A statement as an ignore notice shows it: its comment lines dropped, whitespace collapsed,
/// at most 120 characters.
pub(super) fn summary(text: &str) -> String {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join(" ");
    let collapsed = crate::normalize::collapse_whitespace(&code);
    match collapsed.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &collapsed[..i]),
        None => collapsed,
    }
}

/// The first `n` words of `text`, uppercase: enough to name a statement kind in an error.
pub(super) fn first_words(text: &str, n: usize) -> String {
    text.split_whitespace()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
        .to_uppercase()
}

/// Finds `Line: L, Column: C` in a sqlparser message.
pub(super) fn position_in(message: &str) -> Option<(usize, usize)> {
    let rest = &message[message.find("Line: ")? + 6..];
    let line_end = rest.find(|c: char| !c.is_ascii_digit())?;
    let line = rest[..line_end].parse().ok()?;
    let rest = &rest[rest.find("Column: ")? + 8..];
    let col_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let column = rest[..col_end].parse().ok()?;
    Some((line, column))
}
