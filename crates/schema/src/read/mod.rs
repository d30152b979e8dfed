//! Readers from desired-schema documents into the model: Ptah's `schema.hcl` subset and SQL DDL.
//!
//! Both refuse what they do not understand (never dropping anything silently) and report
//! `file:line:column`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use thiserror::Error;

use crate::model::{Dialect, Schema};

mod check;
pub mod hcl;
pub mod sql;

/// Where in a document something is (1-based line and column, columns in characters).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    /// The file name as given.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// Where each line of a text starts, so a byte offset becomes a line and column by a binary
/// search instead of a scan from the top (a reader asks for thousands of locations in a 5 MB
/// document; rescanning made reading it quadratic).
#[derive(Debug, Clone)]
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// The index of `text`.
    pub(crate) fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts }
    }

    /// The location of byte `offset` of `text` (the text this index was built from).
    pub(crate) fn locate(&self, file: &str, text: &str, offset: usize) -> Location {
        let offset = offset.min(text.len());
        let line = self.starts.partition_point(|start| *start <= offset).max(1);
        let line_start = self.starts.get(line - 1).copied().unwrap_or(0);
        let column = text.get(line_start..offset).map_or(0, |s| s.chars().count()) + 1;
        Location {
            file: file.to_owned(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// A document read: the schema, and every statement skipped by rule.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// The schema the document declares.
    pub schema: Schema,
    /// The statements skipped, in document order (reported, never dropped silently).
    pub ignored: Vec<Ignored>,
}

/// A statement skipped by rule because it does not describe schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Ignored {
    /// Where it starts.
    pub at: Location,
    /// Why it was skipped.
    pub reason: IgnoreReason,
    /// Its text, whitespace collapsed and shortened.
    pub statement: String,
}

impl fmt::Display for Ignored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ignored ({}): {}", self.at, self.reason, self.statement)
    }
}

/// Why a statement was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IgnoreReason {
    /// A client command (psql's `\restrict`, the mysql client's `DELIMITER`), not SQL.
    ClientCommand,
    /// A session setting that changes nothing about the objects declared.
    SessionSetting,
    /// Ownership (`ALTER … OWNER TO`, `SET ROLE`): roles are out of scope.
    Ownership,
    /// The locks and key toggles of a data load.
    DataLoad,
    /// A comment every database has from the start (on `public`) or an extension's own.
    DefaultComment,
    /// `DROP … IF EXISTS` of something not declared before it (dumps drop before they create).
    UndeclaredDrop,
    /// A table's `AUTO_INCREMENT=` counter: the next value is data, not schema.
    AutoIncrementCounter,
    /// A MySQL view's or trigger's `DEFINER` (the applying user becomes it), `ALGORITHM=UNDEFINED`
    /// or `SQL SECURITY DEFINER` (the defaults).
    DefinerOrDefault,
    /// MySQL `CREATE|DROP DATABASE`, `USE` or `ALTER DATABASE` of the database the document
    /// describes (the first one a script names), or PostgreSQL's `DROP SCHEMA IF EXISTS` of a
    /// schema it creates next: a restore script's preamble.
    TargetDatabase,
}

impl fmt::Display for IgnoreReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IgnoreReason::ClientCommand => "client command",
            IgnoreReason::SessionSetting => "session setting",
            IgnoreReason::Ownership => "ownership",
            IgnoreReason::DataLoad => "data load",
            IgnoreReason::DefaultComment => "default comment",
            IgnoreReason::UndeclaredDrop => "drop of an undeclared object",
            IgnoreReason::AutoIncrementCounter => "AUTO_INCREMENT counter",
            IgnoreReason::DefinerOrDefault => "definer or default view clause",
            IgnoreReason::TargetDatabase => "the document's own database",
        })
    }
}

/// Why a document could not be read into a schema.
#[derive(Debug, Error)]
pub enum ReadError {
    /// The file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The path is neither `.hcl`, `.sql` nor a directory.
    #[error("{0}: not a schema document (expected a .hcl or .sql file, or a directory of .sql files)")]
    UnknownKind(PathBuf),
    /// The text is not valid HCL or SQL.
    #[error("{at}: syntax error: {message}")]
    Syntax {
        /// Where.
        at: Location,
        /// The parser's message.
        message: String,
    },
    /// A construct the reader does not support (a block, attribute, statement or option).
    #[error("{at}: unsupported: {what}")]
    Unsupported {
        /// Where.
        at: Location,
        /// What was found.
        what: String,
    },
    /// The same object is declared twice.
    #[error("{at}: {what} is declared twice")]
    Duplicate {
        /// Where the second declaration is.
        at: Location,
        /// The object.
        what: String,
    },
    /// A reference to something that does not exist (a table, column, schema or enum).
    #[error("{at}: {what} does not exist")]
    BadReference {
        /// Where.
        at: Location,
        /// The missing object.
        what: String,
    },
    /// A value of the wrong kind or shape (a bad type, a missing attribute…).
    #[error("{at}: {message}")]
    Invalid {
        /// Where.
        at: Location,
        /// What is wrong.
        message: String,
    },
    /// Blocks, brackets, parentheses or interpolations nested deeper than the reader allows
    /// (`schema.hcl`: [`hcl::MAX_NESTING`], checked before parsing; SQL: sqlparser's recursion
    /// limit, [`sql::MAX_NESTING`]); a parser would otherwise overflow its stack.
    #[error("{at}: nested deeper than {limit} levels")]
    NestingTooDeep {
        /// Where the first level past the limit opens (SQL: where the statement starts).
        at: Location,
        /// The deepest nesting allowed.
        limit: usize,
    },
    /// A MySQL statement about another database than the one the document describes (the first
    /// one a script names with `USE`, `CREATE DATABASE` or `DROP DATABASE`): a document
    /// describes one database.
    #[error("{at}: {statement} names database `{named}`, but this document describes `{target}`")]
    OtherDatabase {
        /// Where.
        at: Location,
        /// The statement's verb (`USE`, `CREATE DATABASE`…).
        statement: String,
        /// The database the statement names.
        named: String,
        /// The database the document describes.
        target: String,
    },
}

impl ReadError {
    /// The location the error points at, when it has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ReadError::Io { .. } | ReadError::UnknownKind(_) => None,
            ReadError::Syntax { at, .. }
            | ReadError::Unsupported { at, .. }
            | ReadError::Duplicate { at, .. }
            | ReadError::BadReference { at, .. }
            | ReadError::Invalid { at, .. }
            | ReadError::NestingTooDeep { at, .. }
            | ReadError::OtherDatabase { at, .. } => Some(at),
        }
    }
}

fn read_text(path: &Path) -> Result<String, ReadError> {
    std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Reads the desired schema at `path` (see [`document`]).
pub fn from_path(dialect: Dialect, path: &Path) -> Result<Schema, ReadError> {
    document(dialect, path).map(|d| d.schema)
}

/// Reads the document at `path`: a `.hcl` file, a `.sql` file, or a directory whose `.sql` files
/// are read in name order as one script (other files in it are refused).
pub fn document(dialect: Dialect, path: &Path) -> Result<Document, ReadError> {
    let display = path.display().to_string();
    if path.is_dir() {
        let entries = std::fs::read_dir(path).map_err(|source| ReadError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| ReadError::Io {
                path: path.to_owned(),
                source,
            })?;
            files.push(entry.path());
        }
        files.sort();
        let mut reader = sql::Reader::new(dialect);
        for file in files {
            if file.extension().and_then(|e| e.to_str()) != Some("sql") {
                return Err(ReadError::UnknownKind(file));
            }
            let text = read_text(&file)?;
            reader.feed(&file.display().to_string(), &text)?;
        }
        return reader.finish();
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some("hcl") => hcl::parse(dialect, &display, &read_text(path)?).map(|schema| Document {
            schema,
            ignored: Vec::new(),
        }),
        Some("sql") => sql::parse_document(dialect, &display, &read_text(path)?),
        _ => Err(ReadError::UnknownKind(path.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    #[test]
    fn every_offset_locates_to_its_line_and_character_column() {
        let text = "ab\n\nçd€x\n  y";
        let index = LineIndex::new(text);
        let at = |offset| {
            let l = index.locate("f", text, offset);
            (l.line, l.column)
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3));
        assert_eq!(at(3), (2, 1));
        assert_eq!(at(4), (3, 1));
        // `ç` is two bytes and `€` three: columns count characters.
        assert_eq!(at(4 + 2 + 1 + 3), (3, 4));
        assert_eq!(at(text.len()), (4, 4));
        assert_eq!(at(text.len() + 10), (4, 4), "past the end is the end");
    }
}
