//! `-- ptah:renamed-from <old>` annotations in `CREATE TABLE`: the old name of the table or of a
//! column, which lets a plan rename it instead of dropping it and creating it again.
//!
//! Which object an annotation names follows where it stands. Before the column list's opening
//! parenthesis, or right after it on its line, it names the table. Inside the list, an annotation
//! that ends a line of code names the column defined on that line, and one on a line of its own
//! names the next column.

use sqlparser::ast::{ColumnDef, Ident};
use sqlparser::tokenizer::{Location as SqlLocation, Token, TokenWithSpan, Tokenizer, Whitespace};

use crate::model::{ColumnRename, QualifiedName, TableRename};
use crate::normalize::sql_dialect;

use super::super::{Location, ReadError};
use super::Reader;

/// The comment's keyword.
const KEYWORD: &str = "ptah:renamed-from";

/// One annotation of the statement being read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Annotation {
    /// Where the comment starts, in the statement.
    at: SqlLocation,
    /// Whether code precedes it on its line.
    trailing: bool,
    /// Whether it stands before the column list (or right after its opening parenthesis).
    before_list: bool,
    /// The old name as written (quotes kept, for the dialect's case folding).
    from: Ident,
}

impl Reader {
    /// The annotations among a statement's tokens (comments included), in order.
    pub(super) fn annotations(&self, tokens: &[TokenWithSpan]) -> Result<Vec<Annotation>, ReadError> {
        let mut out = Vec::new();
        let mut code_line = 0;
        // Open parentheses so far, and whether the last code token opened the first one.
        let (mut opened, mut just_opened) = (0usize, false);
        for t in tokens {
            match &t.token {
                Token::Whitespace(Whitespace::SingleLineComment { comment, .. }) => {
                    let Some(rest) = comment.trim().strip_prefix(KEYWORD) else {
                        continue;
                    };
                    let from = self.old_name(rest).ok_or_else(|| ReadError::Invalid {
                        at: self.at(t.span.start),
                        message: format!("`-- {KEYWORD}` takes one name, the object's old name"),
                    })?;
                    let trailing = code_line == t.span.start.line;
                    out.push(Annotation {
                        at: t.span.start,
                        trailing,
                        before_list: opened == 0 || (trailing && just_opened),
                        from,
                    });
                }
                Token::Whitespace(_) => {}
                token => {
                    code_line = t.span.end.line;
                    just_opened = *token == Token::LParen && opened == 0;
                    if *token == Token::LParen {
                        opened += 1;
                    }
                }
            }
        }
        Ok(out)
    }

    fn old_name(&self, text: &str) -> Option<Ident> {
        let dialect = sql_dialect(self.dialect);
        let tokens = Tokenizer::new(dialect.as_ref(), text).tokenize().ok()?;
        let mut words = tokens.into_iter().filter(|t| !matches!(t, Token::Whitespace(_)));
        match (words.next(), words.next()) {
            (Some(Token::Word(w)), None) => Some(Ident {
                value: w.value,
                quote_style: w.quote_style,
                span: sqlparser::tokenizer::Span::empty(),
            }),
            _ => None,
        }
    }

    /// Records the renames the pending annotations declare for `table`, created with `columns`.
    pub(super) fn take_renames(
        &mut self,
        table: &QualifiedName,
        columns: &[ColumnDef],
        at: &Location,
    ) -> Result<(), ReadError> {
        let starts: Vec<SqlLocation> = columns.iter().map(|c| c.name.span.start).collect();
        for a in std::mem::take(&mut self.pending_renames) {
            let from = self.ident(&a.from);
            let before = |s: &SqlLocation| (s.line, s.column) <= (a.at.line, a.at.column);
            if a.before_list {
                self.schema.renames.tables.push(TableRename {
                    table: table.clone(),
                    from,
                });
                continue;
            }
            let column = match a.trailing {
                // The last column that starts on or before the comment's line.
                true => starts.iter().rposition(|s| s.line <= a.at.line),
                false => starts.iter().position(|s| !before(s)),
            };
            let Some(column) = column.and_then(|i| columns.get(i)) else {
                return Err(self.unsupported(at, format!("`-- {KEYWORD}` that names no column of {table}")));
            };
            self.schema.renames.columns.push(ColumnRename {
                table: table.clone(),
                column: self.ident(&column.name),
                from,
            });
        }
        Ok(())
    }

    /// Refuses an annotation in `range` of `text`, which holds only comments and terminators (a
    /// comment after the last statement, or before a bare `;`): it precedes no `CREATE TABLE`, so
    /// it would name nothing and the rename would silently become a drop and an add.
    pub(super) fn no_stray_rename(
        &self,
        file: &str,
        text: &str,
        range: std::ops::Range<usize>,
        lines: &mut super::text::LineCounter,
    ) -> Result<(), ReadError> {
        let Some(gap) = text.get(range.clone()) else {
            return Ok(());
        };
        let mut offset = range.start;
        for line in gap.split_inclusive('\n') {
            let comment = line.trim_start().strip_prefix("--").map(str::trim_start);
            if comment.is_some_and(|c| c.starts_with(KEYWORD)) {
                let at = lines.locate(file, text, offset + (line.len() - line.trim_start().len()));
                return Err(self.unsupported(
                    &at,
                    format!("`-- {KEYWORD}` before no CREATE TABLE names nothing"),
                ));
            }
            offset += line.len();
        }
        Ok(())
    }

    /// Refuses annotations the statement just read did not take (they belong to `CREATE TABLE`).
    pub(super) fn no_pending_renames(&mut self, at: &Location) -> Result<(), ReadError> {
        match self.pending_renames.is_empty() {
            true => Ok(()),
            false => {
                self.pending_renames.clear();
                Err(self.unsupported(at, format!("`-- {KEYWORD}` outside CREATE TABLE")))
            }
        }
    }
}
