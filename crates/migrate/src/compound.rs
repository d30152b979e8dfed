//! MySQL/MariaDB compound statements without `DELIMITER`: where a `;` ends the statement.
//!
//! The server parses `CREATE PROCEDURE|FUNCTION|TRIGGER|EVENT … BEGIN … END` (and MariaDB's
//! anonymous `BEGIN NOT ATOMIC … END`) as one statement whose body holds statements of its own,
//! each ended by `;`. The mysql client needs a `DELIMITER` to send such a statement whole; tools
//! that send files through a driver (golang-migrate, goose, dbmate, Mattermost's morph) do not, so
//! files written for them have none. This tracker follows the body's block structure the way the
//! server's grammar does, so a `;` inside a body does not end the statement:
//!
//! - `BEGIN` and `CASE` always open a block (a `CASE` expression also ends with `END`);
//! - `IF`, `LOOP`, `WHILE`, `REPEAT` and MariaDB's `FOR` open one only where a statement starts (after `;`, a
//!   label's `:`, `BEGIN`, `THEN`, `ELSE`, `DO`, …), so the functions `IF(…)` and `REPEAT(…)` and
//!   `DROP TABLE IF EXISTS` do not;
//! - `END` closes one and takes the `IF`/`CASE`/`LOOP`/`WHILE`/`REPEAT`/`FOR` after it with it.
//!
//! Only statements whose head is a routine definition are tracked: a plain `BEGIN;` is a
//! transaction and a `CASE … END` in a `SELECT` never holds a `;`.

/// What the current statement's head has shown so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Head {
    /// No word yet.
    #[default]
    Start,
    /// `CREATE` and only definer/replace words after it.
    Create,
    /// `BEGIN` as the first word (MariaDB's `BEGIN NOT ATOMIC`, or a transaction).
    Begin,
    /// `BEGIN NOT`.
    BeginNot,
    /// A routine definition or anonymous block: bodies are tracked.
    Routine,
    /// Anything else: `;` ends the statement.
    Plain,
}

/// The previous significant token, for "does a statement start here?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Prev {
    /// Nothing yet, or a token after which a statement starts (`;`, `:`, `BEGIN`, `THEN`, …).
    #[default]
    StatementStart,
    /// The word `END`.
    End,
    /// `=` or `@` (a definer's parts follow them).
    DefinerPart,
    /// Anything else.
    Other,
}

/// Block depth of the current MySQL statement; zero when a `;` ends it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracker {
    head: Head,
    prev: Prev,
    depth: usize,
}

fn is(word: &[u8], keyword: &[u8]) -> bool {
    word.eq_ignore_ascii_case(keyword)
}

fn any(word: &[u8], keywords: &[&[u8]]) -> bool {
    keywords.iter().any(|k| is(word, k))
}

/// Words after which a statement (and so an `IF`/`LOOP`/`WHILE`/`REPEAT` block) may start: block
/// keywords, and the last words of a routine's characteristics and a trigger's `FOR EACH ROW`.
const STARTS_AFTER: &[&[u8]] = &[
    b"begin",
    b"then",
    b"else",
    b"do",
    b"loop",
    b"repeat",
    b"row",
    b"deterministic",
    b"sql",
    b"data",
    b"definer",
    b"invoker",
];

impl Tracker {
    /// Forgets everything: a new statement starts.
    pub(crate) fn reset(&mut self) {
        *self = Tracker::default();
    }

    /// The open blocks; a `;` ends the statement only at zero.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// A literal or quoted identifier.
    pub(crate) fn other(&mut self) {
        if self.head == Head::Start {
            self.head = Head::Plain;
        }
        if self.head == Head::Plain {
            return;
        }
        if self.prev != Prev::DefinerPart {
            self.prev = Prev::Other;
        }
    }

    /// A punctuation byte outside literals and comments.
    pub(crate) fn punct(&mut self, c: u8) {
        if self.head == Head::Start {
            self.head = Head::Plain;
        }
        if self.head == Head::Plain {
            return;
        }
        self.prev = match c {
            b';' | b':' | b')' => Prev::StatementStart,
            b'=' | b'@' => Prev::DefinerPart,
            // `CURRENT_USER()` in a definer.
            b'(' if self.head == Head::Create => self.prev,
            _ => Prev::Other,
        };
    }

    /// A keyword or identifier.
    pub(crate) fn word(&mut self, word: &[u8]) {
        // Most statements are plain: nothing to follow in them (this keeps the splitter's
        // throughput on long INSERT files, `cargo xtask bench split`).
        if self.head == Head::Plain {
            return;
        }
        match self.head {
            Head::Start => {
                self.head = if is(word, b"create") {
                    Head::Create
                } else if is(word, b"begin") {
                    Head::Begin
                } else {
                    Head::Plain
                };
            }
            Head::Create => {
                if any(word, &[b"procedure", b"function", b"trigger", b"event"]) {
                    self.head = Head::Routine;
                } else if !(any(
                    word,
                    &[b"or", b"replace", b"aggregate", b"definer", b"current_user"],
                ) || self.prev == Prev::DefinerPart)
                {
                    self.head = Head::Plain;
                }
            }
            Head::Begin => {
                self.head = if is(word, b"not") {
                    Head::BeginNot
                } else {
                    Head::Plain
                }
            }
            Head::BeginNot => {
                if is(word, b"atomic") {
                    self.head = Head::Routine;
                    self.depth = 1;
                } else {
                    self.head = Head::Plain;
                }
            }
            Head::Routine => self.body_word(word),
            Head::Plain => {}
        }
        self.prev = if is(word, b"end") {
            Prev::End
        } else if any(word, STARTS_AFTER) && self.prev != Prev::End {
            // After `END LOOP` or `END REPEAT` no statement starts: a `;` or a label comes next.
            Prev::StatementStart
        } else {
            Prev::Other
        };
    }

    fn body_word(&mut self, word: &[u8]) {
        let after_end = self.prev == Prev::End;
        if is(word, b"end") {
            self.depth = self.depth.saturating_sub(1);
        } else if is(word, b"begin") {
            self.depth += 1;
        } else if is(word, b"case") {
            if !after_end {
                self.depth += 1;
            }
        } else if any(word, &[b"if", b"loop", b"while", b"repeat", b"for"])
            && !after_end
            && self.prev == Prev::StatementStart
        {
            self.depth += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_after(sql: &str) -> usize {
        let mut t = Tracker::default();
        for token in sql.split_whitespace() {
            match token {
                ";" | ":" | "(" | ")" | "=" | "@" | "," => t.punct(token.as_bytes()[0]),
                _ => t.word(token.as_bytes()),
            }
        }
        t.depth()
    }

    #[test]
    fn opens_blocks_only_where_the_server_does() {
        assert_eq!(depth_after("CREATE PROCEDURE p ( ) BEGIN"), 1);
        assert_eq!(
            depth_after("CREATE DEFINER = admin @ localhost PROCEDURE p ( ) BEGIN"),
            1
        );
        assert_eq!(depth_after("CREATE TABLE t ( event int ) ; BEGIN"), 0);
        assert_eq!(depth_after("BEGIN"), 0, "a transaction");
        assert_eq!(depth_after("BEGIN NOT ATOMIC"), 1);
        assert_eq!(
            depth_after("CREATE FUNCTION f ( ) RETURNS int RETURN IF ( 1 , 2 , 3 )"),
            0
        );
        assert_eq!(
            depth_after("CREATE PROCEDURE p ( ) BEGIN DROP TABLE IF EXISTS t ; IF x THEN"),
            2
        );
        assert_eq!(
            depth_after("CREATE PROCEDURE p ( ) BEGIN l : LOOP LEAVE l ; END LOOP l ; END"),
            0
        );
        assert_eq!(
            depth_after("CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW IF a THEN SET b = 1 ; END IF"),
            0
        );
        assert_eq!(
            depth_after(
                "CREATE PROCEDURE p ( ) BEGIN SET y = CASE WHEN x THEN 1 END ; REPEAT SET x = 1 ; UNTIL x END REPEAT ; END"
            ),
            0
        );
    }
}
