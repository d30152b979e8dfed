//! Colour on a terminal, plain text in a pipe.

/// ANSI styles, or none.
#[derive(Clone, Copy)]
pub(crate) struct Style {
    on: bool,
}

impl Style {
    /// Colours when `on`.
    pub fn new(on: bool) -> Style {
        Style { on }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Good news.
    pub fn good(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Needs a person.
    pub fn attention(self, text: &str) -> String {
        self.paint("33", text)
    }

    /// Something failed.
    pub fn bad(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Headings.
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
}
