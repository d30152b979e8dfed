//! The nesting guard: the `schema.hcl` text is measured before `hcl-edit` parses it.
//!
//! A recursive-descent parser descends once per nested block, bracket, parenthesis or template
//! interpolation, so a document nested 100,000 levels deep overflows the thread's stack unless
//! something stops it. `hcl-edit` 0.10 stops itself at 64 levels, with a syntax error whose only
//! trace is its message; this guard refuses such a document first, with a typed
//! [`ReadError::NestingTooDeep`](crate::read::ReadError::NestingTooDeep), and keeps refusing it whatever
//! a later parser version does. It counts with a bounded stack and never recurses.
//!
//! It knows just enough HCL to not count brackets that are text: comments (`#`, `//`, `/* */`),
//! quoted strings with their escapes, and heredocs (`<<EOT`, `<<-EOT`). Inside strings and
//! heredocs, `${ … }` opens an expression again (`$${` and `%%{` are escapes); it
//! counts as a level, since the parser descends into it too. Unbalanced closers are left to
//! the parser, which reports them as syntax errors.
//!
//! It also refuses every template directive (`%{`, in a template or not). A schema document
//! never needs one (a literal `%{` is written `%%{`), and `hcl-edit` 0.10 takes exponential
//! time on some short inputs mixing `%{` with `-` (the `schema_hcl` fuzz campaign found 985
//! bytes that took over a minute).

/// The deepest nesting a `schema.hcl` document may have: blocks, `[`, `(`, `{` and template
/// interpolations together. Real documents stay under 10 (`table { column { … } }`,
/// `rows = [{ … }]`); 64 is also `hcl-edit` 0.10's own limit, so the two agree.
pub const MAX_NESTING: usize = 64;

/// What a level of nesting was opened by.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Frame<'a> {
    /// `{`, `[` or `(` in an expression or body.
    Bracket,
    /// `${` or `%{` inside a quoted string: its `}` returns to the string.
    InString,
    /// `${` or `%{` inside a heredoc ending at this marker: its `}` returns to the heredoc.
    InHeredoc(&'a [u8]),
}

/// Where the scanner is when it is not in an expression.
enum Text<'a> {
    Quoted,
    Heredoc(&'a [u8]),
}

/// Why the scan refused a document, with the byte offset of the opener that made it refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// An opener past [`MAX_NESTING`].
    TooDeep(usize),
    /// A template directive `%{`.
    Directive(usize),
}

/// Scans `text`: the first refusal, if any.
pub(super) fn check(text: &str) -> Result<(), Refusal> {
    Scan {
        b: text.as_bytes(),
        i: 0,
        stack: Vec::new(),
    }
    .run()
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    stack: Vec<Frame<'a>>,
}

impl<'a> Scan<'a> {
    fn run(mut self) -> Result<(), Refusal> {
        while self.i < self.b.len() {
            let rest = &self.b[self.i..];
            match rest[0] {
                b'#' => self.skip_line(),
                b'/' if rest.get(1) == Some(&b'/') => self.skip_line(),
                b'/' if rest.get(1) == Some(&b'*') => self.skip_block_comment(),
                b'%' if rest.get(1) == Some(&b'{') => return Err(Refusal::Directive(self.i)),
                b'{' | b'[' | b'(' => {
                    self.i += 1;
                    self.open(Frame::Bracket)?;
                }
                b'}' | b']' | b')' => {
                    self.i += 1;
                    match self.stack.pop() {
                        Some(Frame::InString) => self.text(Text::Quoted)?,
                        Some(Frame::InHeredoc(marker)) => self.text(Text::Heredoc(marker))?,
                        Some(Frame::Bracket) | None => {}
                    }
                }
                b'"' => {
                    self.i += 1;
                    self.text(Text::Quoted)?;
                }
                b'<' if rest.starts_with(b"<<") => match heredoc_marker(rest) {
                    Some((marker, header)) => {
                        self.i += header;
                        self.text(Text::Heredoc(marker))?;
                    }
                    None => self.i += 2,
                },
                _ => self.i += 1,
            }
        }
        Ok(())
    }

    /// Pushes a level (its opener ends just before the current position); past the limit, the
    /// opener's offset is the error.
    fn open(&mut self, frame: Frame<'a>) -> Result<(), Refusal> {
        if self.stack.len() >= MAX_NESTING {
            return Err(Refusal::TooDeep(self.i - 1));
        }
        self.stack.push(frame);
        Ok(())
    }

    fn skip_line(&mut self) {
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        self.i += 2;
        while self.i < self.b.len() && !self.b[self.i..].starts_with(b"*/") {
            self.i += 1;
        }
        self.i = (self.i + 2).min(self.b.len());
    }

    /// Reads template text until it ends, or an interpolation opens and the expression inside
    /// it continues in [`Scan::run`].
    fn text(&mut self, text: Text<'a>) -> Result<(), Refusal> {
        while self.i < self.b.len() {
            let rest = &self.b[self.i..];
            if rest.starts_with(b"$${") || rest.starts_with(b"%%{") {
                self.i += 3;
                continue;
            }
            if rest.starts_with(b"%{") {
                return Err(Refusal::Directive(self.i));
            }
            if rest.starts_with(b"${") {
                self.i += 2;
                return self.open(match text {
                    Text::Quoted => Frame::InString,
                    Text::Heredoc(marker) => Frame::InHeredoc(marker),
                });
            }
            match (&text, rest[0]) {
                (Text::Quoted, b'\\') => self.i += 2,
                (Text::Quoted, b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                (Text::Heredoc(marker), b'\n') => {
                    self.i += 1;
                    let line = &self.b[self.i..];
                    let end = line.iter().position(|c| *c == b'\n').unwrap_or(line.len());
                    if line[..end].trim_ascii() == *marker {
                        self.i += end;
                        return Ok(());
                    }
                }
                _ => self.i += 1,
            }
        }
        Ok(())
    }
}

/// A heredoc header at `rest` (`<<EOT` or `<<-EOT` and the end of its line): the marker and
/// the header's length without its line break, so the body starts at that line break.
fn heredoc_marker(rest: &[u8]) -> Option<(&[u8], usize)> {
    let start = if rest.get(2) == Some(&b'-') { 3 } else { 2 };
    let len = rest[start..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'-')
        .count();
    if len == 0 {
        return None;
    }
    let after = start + len;
    let trailing = rest[after..]
        .iter()
        .take_while(|c| **c == b' ' || **c == b'\t' || **c == b'\r')
        .count();
    (rest.get(after + trailing) == Some(&b'\n')).then_some((&rest[start..after], after + trailing))
}
