//! Single-file migrations as goose and dbmate write them: both directions in one `<digits>_x.sql`.
//!
//! These are read natively rather than converted, because every annotation has one meaning and
//! the file's checksum then covers the file exactly as its authors wrote and reviewed it:
//!
//! - goose: `-- +goose Up` and `-- +goose Down` open the sections; `-- +goose StatementBegin` …
//!   `-- +goose StatementEnd` delimit one statement that is sent whole; `-- +goose NO TRANSACTION`
//!   (anywhere, as goose reads it) runs the file without a transaction. `-- +goose ENVSUB ON` is
//!   refused: it would substitute environment variables at run time, so the SQL that runs would
//!   not be the SQL the checksum covers.
//! - dbmate: `-- migrate:up [transaction:false]` and `-- migrate:down [transaction:false]`; code
//!   outside the two sections is refused, as dbmate refuses it.
//!
//! Only the up section ever runs here (this executor never rolls back); the down section is read
//! so that it is well-formed and covered by the checksum.

use std::ops::Range;

use crate::Error;

/// The tool whose annotations a single file carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `-- +goose Up` / `-- +goose Down`.
    Goose,
    /// `-- migrate:up` / `-- migrate:down`.
    Dbmate,
}

impl Tool {
    /// The annotation that makes this tool's file run without a transaction.
    pub fn no_transaction_header(self) -> &'static str {
        match self {
            Tool::Goose => "-- +goose NO TRANSACTION",
            Tool::Dbmate => "-- migrate:up transaction:false",
        }
    }
}

/// The parts of a single file that matter for running it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sections {
    /// The tool the annotations belong to.
    pub tool: Tool,
    /// Bytes of the up section's body (after its marker line, before the next marker).
    pub up: Range<usize>,
    /// goose's `StatementBegin` … `StatementEnd` bodies inside the up section, in order.
    pub blocks: Vec<Range<usize>>,
    /// The up section runs without a transaction.
    pub no_transaction: bool,
}

/// One annotation line.
enum Mark<'a> {
    Goose(&'a str),
    Dbmate { up: bool, options: &'a str },
}

fn mark(line: &str) -> Option<Mark<'_>> {
    let comment = line.trim().strip_prefix("--")?.trim_start();
    if let Some(rest) = comment.strip_prefix("+goose") {
        return Some(Mark::Goose(rest.trim()));
    }
    let rest = comment.strip_prefix("migrate:")?;
    let (word, options) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    match word {
        "up" => Some(Mark::Dbmate { up: true, options }),
        "down" => Some(Mark::Dbmate { up: false, options }),
        _ => None,
    }
}

/// Lines with their byte offsets and 1-based numbers.
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').enumerate().map(move |(i, line)| {
        let start = at;
        at += line.len();
        (i + 1, start, line)
    })
}

/// Refuses goose/dbmate annotations in a `.up.sql`/`.down.sql` file, where they would mean nothing.
pub fn refuse_in_pair(path: &str, text: &str) -> Result<(), Error> {
    match lines(text).find(|(_, _, line)| mark(line).is_some()) {
        Some((line, _, _)) => Err(Error::Header {
            path: path.to_owned(),
            line,
            reason: "goose and dbmate annotations are read in a single `<digits>_<name>.sql` file, \
                     not in an .up.sql/.down.sql pair"
                .into(),
        }),
        None => Ok(()),
    }
}

/// Reads the sections of a single file; refuses what no tool would run as written.
pub fn parse(path: &str, text: &str) -> Result<Sections, Error> {
    let err = |line: usize, reason: &str| Error::Header {
        path: path.to_owned(),
        line,
        reason: reason.to_owned(),
    };
    let goose = lines(text).find(|(_, _, l)| matches!(mark(l), Some(Mark::Goose(_))));
    let dbmate = lines(text).find(|(_, _, l)| matches!(mark(l), Some(Mark::Dbmate { .. })));
    match (goose, dbmate) {
        (Some(_), None) => goose_sections(text, &err),
        (None, Some(_)) => dbmate_sections(text, &err),
        (Some((a, _, _)), Some((b, _, _))) => Err(err(a.max(b), "goose and dbmate annotations in one file")),
        (None, None) => Err(err(
            1,
            "a single-file migration needs `-- +goose Up` (goose) or `-- migrate:up` (dbmate); \
             ptah's own layout is an .up.sql/.down.sql pair",
        )),
    }
}

/// True for a line that is blank or only a `--` comment.
fn is_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with("--")
}

#[derive(PartialEq)]
enum Where {
    Before,
    Up,
    Down,
}

fn goose_sections(text: &str, err: &dyn Fn(usize, &str) -> Error) -> Result<Sections, Error> {
    let mut at = Where::Before;
    let mut up: Option<Range<usize>> = None;
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    let mut no_transaction = false;
    for (number, start, line) in lines(text) {
        let end = start + line.len();
        let Some(Mark::Goose(command)) = mark(line) else {
            if at == Where::Before && !is_comment(line) {
                return Err(err(number, "SQL before `-- +goose Up` belongs to no direction"));
            }
            continue;
        };
        match command.to_ascii_lowercase().as_str() {
            "up" if at == Where::Before => {
                at = Where::Up;
                up = Some(end..text.len());
            }
            "up" => return Err(err(number, "a second `-- +goose Up`")),
            "down" if open.is_some() => {
                return Err(err(number, "`-- +goose Down` inside a StatementBegin block"));
            }
            "down" if at == Where::Down => return Err(err(number, "a second `-- +goose Down`")),
            "down" => {
                if let Some(range) = up.as_mut() {
                    range.end = start;
                }
                at = Where::Down;
            }
            "statementbegin" if open.is_some() => {
                return Err(err(number, "StatementBegin inside a StatementBegin block"));
            }
            "statementbegin" => open = Some((number, end)),
            "statementend" => {
                let Some((_, body)) = open.take() else {
                    return Err(err(number, "StatementEnd without StatementBegin"));
                };
                if at == Where::Up {
                    blocks.push(body..start);
                }
            }
            "no transaction" => no_transaction = true,
            "envsub on" | "envsub off" => {
                return Err(err(
                    number,
                    "`-- +goose ENVSUB` substitutes environment variables when the file runs, so the \
                     checksum would not cover the SQL that runs; write the values into the file",
                ));
            }
            _ => {
                return Err(err(
                    number,
                    &format!("unknown goose annotation `+goose {command}`"),
                ));
            }
        }
    }
    if let Some((line, _)) = open {
        return Err(err(line, "StatementBegin without StatementEnd"));
    }
    let up = up.ok_or_else(|| err(1, "no `-- +goose Up` section"))?;
    Ok(Sections {
        tool: Tool::Goose,
        up,
        blocks,
        no_transaction,
    })
}

fn dbmate_sections(text: &str, err: &dyn Fn(usize, &str) -> Error) -> Result<Sections, Error> {
    let mut at = Where::Before;
    let mut up: Option<Range<usize>> = None;
    let mut no_transaction = false;
    let mut seen_down = false;
    for (number, start, line) in lines(text) {
        let end = start + line.len();
        let Some(Mark::Dbmate { up: is_up, options }) = mark(line) else {
            if at == Where::Before && !is_comment(line) {
                return Err(err(
                    number,
                    "SQL outside the `-- migrate:up` and `-- migrate:down` sections (dbmate refuses it too)",
                ));
            }
            continue;
        };
        let mut transaction = true;
        for option in options.split_whitespace() {
            match option {
                "transaction:false" => transaction = false,
                "transaction:true" => transaction = true,
                other => return Err(err(number, &format!("unknown dbmate option `{other}`"))),
            }
        }
        if let (Where::Up, Some(range)) = (&at, up.as_mut()) {
            range.end = start;
        }
        if is_up {
            if up.is_some() {
                return Err(err(number, "a second `-- migrate:up`"));
            }
            up = Some(end..text.len());
            no_transaction = !transaction;
            at = Where::Up;
        } else {
            if seen_down {
                return Err(err(number, "a second `-- migrate:down`"));
            }
            seen_down = true;
            at = Where::Down;
        }
    }
    let up = up.ok_or_else(|| err(1, "no `-- migrate:up` section"))?;
    Ok(Sections {
        tool: Tool::Dbmate,
        up,
        blocks: Vec::new(),
        no_transaction,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goose_sections_blocks_and_no_transaction() {
        let text = "-- a note\n-- +goose NO TRANSACTION\n-- +goose Up\nCREATE TABLE t (a int);\n\
                    -- +goose StatementBegin\nCREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\n\
                    -- +goose StatementEnd\n-- +goose Down\n-- +goose StatementBegin\nDROP FUNCTION f;\n\
                    -- +goose StatementEnd\nDROP TABLE t;\n";
        let s = parse("f.sql", text).expect("goose");
        assert_eq!(s.tool, Tool::Goose);
        assert!(s.no_transaction);
        assert!(text[s.up.clone()].starts_with("CREATE TABLE"));
        assert!(!text[s.up.clone()].contains("DROP"));
        assert_eq!(s.blocks.len(), 1, "the down section's block is not run");
        assert!(text[s.blocks[0].clone()].starts_with("CREATE FUNCTION"));
    }

    #[test]
    fn dbmate_sections_and_options() {
        let text = "-- migrate:up transaction:false\nCREATE INDEX CONCURRENTLY i ON t (a);\n\n-- migrate:down\nDROP INDEX i;\n";
        let s = parse("f.sql", text).expect("dbmate");
        assert_eq!((s.tool, s.no_transaction), (Tool::Dbmate, true));
        assert_eq!(&text[s.up.clone()], "CREATE INDEX CONCURRENTLY i ON t (a);\n\n");
        let s = parse("f.sql", "-- migrate:up\nSELECT 1;\n").expect("up only");
        assert!(!s.no_transaction);
    }

    #[test]
    fn refuses_what_no_tool_would_run() {
        for (bad, line) in [
            ("SELECT 1;\n", 1),
            ("SELECT 1;\n-- +goose Up\nSELECT 2;\n", 1),
            ("-- +goose Up\n-- +goose Up\n", 2),
            ("-- +goose Up\n-- +goose StatementBegin\nSELECT 1;\n", 2),
            ("-- +goose Up\n-- +goose StatementEnd\n", 2),
            ("-- +goose ENVSUB ON\n-- +goose Up\nSELECT '${X}';\n", 1),
            ("-- +goose Upp\n", 1),
            ("-- +goose Down\nSELECT 1;\n", 1),
            ("-- migrate:up\nSELECT 1;\n-- +goose Down\n", 3),
            ("SELECT 0;\n-- migrate:up\nSELECT 1;\n", 1),
            ("-- migrate:up transaction:maybe\n", 1),
            ("-- migrate:down\nSELECT 1;\n", 1),
        ] {
            match parse("f.sql", bad) {
                Err(Error::Header { line: l, .. }) => assert_eq!(l, line, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
        assert!(refuse_in_pair("a.up.sql", "-- +goose Up\nSELECT 1;").is_err());
        assert!(refuse_in_pair("a.up.sql", "-- +ptah no_transaction\nSELECT 1;").is_ok());
    }
}
