//! What the runner writes to stderr besides the frame, shaped so it can never be read as a frame
//! and never outgrows the bounds a log reader relies on.
//!
//! The child's redacted stderr goes out line by line, each line behind [`CHILD_PREFIX`]: stderr
//! and stdout land in the same Pod log, and the frame parser takes a line for a header or footer
//! only when the line *starts* with `PTAH_RUNNER_RESULT_V1 ` or *is* `PTAH_RUNNER_RESULT_END_V1`.
//! A prefixed line does neither, whatever the child printed, and no reader that trims leading
//! whitespace can be fooled either. A carriage return inside a line is written as the two
//! characters `\r`, so not even a reader that breaks lines at `\r` sees a line start the child
//! chose. The bounds ([`MAX_DIAGNOSTIC_BYTES`], [`MAX_DIAGNOSTIC_LINES`]) apply to the bytes
//! written, after redaction and prefixing: the newest lines are kept.
//!
//! The runner's own notes are one line each, start with `ptah-runner: `, and are cut to
//! [`MAX_RUNNER_NOTE_BYTES`]; at most [`MAX_RUNNER_NOTE_LINES`] are written in one run.

use std::io::Write;

use ptah_dataplane::frame::{
    MAX_DIAGNOSTIC_BYTES, MAX_DIAGNOSTIC_LINES, MAX_RUNNER_NOTE_BYTES, MAX_RUNNER_NOTE_LINES,
};

/// What starts every line of the child's output in the log.
pub const CHILD_PREFIX: &str = "ptah-child| ";
/// What follows [`CHILD_PREFIX`] on a line whose start was cut to fit the bound.
pub const CUT_MARK: &str = "[cut] ";
/// What starts every note of the runner's own.
pub const NOTE_PREFIX: &str = "ptah-runner: ";

/// The child's redacted output as the lines the runner writes: prefixed, escaped, the newest kept
/// within the bounds. Empty input gives empty output.
pub fn render(redacted: &[u8]) -> Vec<u8> {
    let text = redacted.strip_suffix(b"\n").unwrap_or(redacted);
    if text.is_empty() {
        return Vec::new();
    }
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut bytes = 0usize;
    for line in text.rsplit(|&b| b == b'\n') {
        if kept.len() == MAX_DIAGNOSTIC_LINES {
            break;
        }
        let body = escape(line);
        let whole = CHILD_PREFIX.len() + body.len() + 1;
        if bytes + whole <= MAX_DIAGNOSTIC_BYTES {
            kept.push(framed(&[], &body));
            bytes += whole;
            continue;
        }
        // The oldest line that still fits in part: its end, marked as cut.
        let room = MAX_DIAGNOSTIC_BYTES - bytes;
        let overhead = CHILD_PREFIX.len() + CUT_MARK.len() + 1;
        if room > overhead {
            let keep = room - overhead;
            kept.push(framed(CUT_MARK.as_bytes(), &body[body.len() - keep..]));
        }
        break;
    }
    kept.reverse();
    kept.concat()
}

fn framed(mark: &[u8], body: &[u8]) -> Vec<u8> {
    [CHILD_PREFIX.as_bytes(), mark, body, b"\n"].concat()
}

fn escape(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    for &b in line {
        if b == b'\r' {
            out.extend_from_slice(b"\\r");
        } else {
            out.push(b);
        }
    }
    out
}

/// One note of the runner's own as the line written: prefixed, on one line, within the bound.
pub fn note_line(text: &str) -> Vec<u8> {
    let mut line = String::from(NOTE_PREFIX);
    for c in text.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if line.len() + c.len_utf8() + 1 > MAX_RUNNER_NOTE_BYTES {
            break;
        }
        line.push(c);
    }
    line.push('\n');
    line.into_bytes()
}

/// The runner's notes on stderr, at most [`MAX_RUNNER_NOTE_LINES`] in one run.
#[derive(Debug, Default)]
pub struct Notes {
    written: usize,
}

impl Notes {
    /// Writes one note, unless the run's notes are used up.
    pub fn write(&mut self, text: &str) {
        if self.written == MAX_RUNNER_NOTE_LINES {
            return;
        }
        self.written += 1;
        let mut err = std::io::stderr().lock();
        // Nowhere left to report a failing stderr.
        let _ = err.write_all(&note_line(text)).and_then(|()| err.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_prefixed_and_a_carriage_return_escaped() {
        let out = render(b"one\n  PTAH_RUNNER_RESULT_V1 1 ab\nx\rPTAH_RUNNER_RESULT_END_V1\n");
        assert_eq!(
            String::from_utf8_lossy(&out),
            "ptah-child| one\nptah-child|   PTAH_RUNNER_RESULT_V1 1 ab\n\
             ptah-child| x\\rPTAH_RUNNER_RESULT_END_V1\n"
        );
        assert!(render(b"").is_empty() && render(b"\n").is_empty());
    }

    #[test]
    fn the_newest_lines_are_kept_within_both_bounds() {
        let many = "l\n".repeat(MAX_DIAGNOSTIC_LINES + 10);
        let out = render(many.as_bytes());
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), MAX_DIAGNOSTIC_LINES);

        let long = format!("old\n{}end", "y".repeat(2 * MAX_DIAGNOSTIC_BYTES));
        let out = render(long.as_bytes());
        assert_eq!(out.len(), MAX_DIAGNOSTIC_BYTES);
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("ptah-child| [cut] yyy") && text.ends_with("yend\n"));
    }

    #[test]
    fn a_note_is_one_bounded_line() {
        let line = note_line(&format!("bad\nthing {}", "é".repeat(MAX_RUNNER_NOTE_BYTES)));
        assert!(line.len() <= MAX_RUNNER_NOTE_BYTES);
        let text = String::from_utf8(line).expect("utf8 kept whole");
        assert!(text.starts_with("ptah-runner: bad thing é"));
        assert_eq!(text.matches('\n').count(), 1);
        assert!(text.ends_with('\n'));
    }
}
