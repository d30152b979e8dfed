//! A migration read for one dialect: its headers and the statements of its up direction.
//!
//! A pair's up file is read whole; a goose/dbmate single file is read for its up section only,
//! with goose's `StatementBegin` … `StatementEnd` bodies kept whole. Statement lines always count
//! from the top of the file as written. On PostgreSQL a file that runs in one transaction is
//! refused before any SQL when it holds a statement that cannot run in one.

use std::ops::Range;

use ptah_engine::Dialect;

use crate::{
    Directory, Error, Migration, SequenceEntry, TxMode, header,
    sections::{self, Sections},
    split, txcheck,
};

/// A migration read for one dialect: its headers and its statements.
#[derive(Debug, Clone)]
pub struct Script<'a> {
    /// The migration.
    pub migration: &'a Migration,
    /// Its header directives (a single file's tool annotations included).
    pub headers: header::Headers,
    /// Its up statements.
    pub statements: Vec<split::Statement>,
    /// The single file's sections; `None` for a pair.
    sections: Option<Sections>,
}

impl<'a> Script<'a> {
    /// Reads the up direction of `migration` for `dialect`, refusing (on PostgreSQL) a
    /// transactional file with a statement that cannot run in a transaction.
    pub fn prepare(migration: &'a Migration, dialect: Dialect) -> Result<Script<'a>, Error> {
        let script = Script::read(migration, dialect)?;
        if dialect == Dialect::Postgres {
            script.check_transaction(false)?;
        }
        Ok(script)
    }

    fn read(migration: &'a Migration, dialect: Dialect) -> Result<Script<'a>, Error> {
        let path = &migration.up.path;
        let text = std::str::from_utf8(&migration.up.bytes).map_err(|e| Error::Split {
            path: path.clone(),
            line: 1,
            reason: format!("not UTF-8 ({e})"),
        })?;
        let mut headers = header::parse_headers(path, text)?;
        let split_err = |e: split::SplitError| Error::Split {
            path: path.clone(),
            line: e.line,
            reason: e.reason,
        };
        let (statements, sections) = if migration.is_single_file() {
            let sections = sections::parse(path, text)?;
            if sections.no_transaction {
                if headers.lock_timeout.is_some() || headers.statement_timeout.is_some() {
                    return Err(Error::Header {
                        path: path.clone(),
                        line: 1,
                        reason: "lock_timeout and statement_timeout are refused without a transaction".into(),
                    });
                }
                headers.tx_mode = TxMode::None;
            }
            let statements = section_statements(text, &sections, dialect).map_err(split_err)?;
            (statements, Some(sections))
        } else {
            sections::refuse_in_pair(path, text)?;
            (split::split(text, dialect).map_err(split_err)?, None)
        };
        Ok(Script {
            migration,
            headers,
            statements,
            sections,
        })
    }

    /// Refuses a statement PostgreSQL cannot run in a transaction when this file runs in one;
    /// with `postgres_only`, only statements no other engine has count (the dialect is unknown).
    fn check_transaction(&self, postgres_only: bool) -> Result<(), Error> {
        if self.headers.tx_mode != TxMode::File {
            return Ok(());
        }
        let found = self.statements.iter().find_map(|s| {
            txcheck::non_transactional(&s.sql)
                .filter(|n| n.postgres_only || !postgres_only)
                .map(|n| (s.line, n.what))
        });
        let Some((line, what)) = found else {
            return Ok(());
        };
        let header = match &self.sections {
            Some(s) => s.tool.no_transaction_header(),
            None => "-- +ptah no_transaction",
        };
        Err(Error::NeedsNoTransaction {
            path: self.migration.up.path.clone(),
            line,
            statement: what,
            header,
        })
    }

    /// The entry an approver sees for this script.
    pub fn entry(&self) -> SequenceEntry {
        SequenceEntry {
            version: self.migration.version,
            checksum: self.migration.checksum(),
            transaction: self.headers.tx_mode,
        }
    }
}

/// Checks every migration of `dir` for statements that cannot run in the transaction their file
/// asks for, before anything is hashed or pushed. With an unknown dialect a file PostgreSQL cannot
/// split is skipped (it is MySQL's), and only PostgreSQL-only statements count.
pub fn check_transactions(dir: &Directory, dialect: Option<Dialect>) -> Result<(), Error> {
    for migration in dir.migrations() {
        match dialect {
            Some(d) => drop(Script::prepare(migration, d)?),
            None => match Script::read(migration, Dialect::Postgres) {
                Ok(script) => script.check_transaction(true)?,
                Err(Error::Split { .. }) => {}
                Err(e) => return Err(e),
            },
        }
    }
    Ok(())
}

/// The statements of a single file's up section, with lines counted from the top of the file.
fn section_statements(
    text: &str,
    sections: &Sections,
    dialect: Dialect,
) -> Result<Vec<split::Statement>, split::SplitError> {
    let mut out = Vec::new();
    let mut at = sections.up.start;
    for block in &sections.blocks {
        out.extend(split_range(text, at..block.start, dialect)?);
        // A goose block is one statement, sent as written without its final `;`.
        let body = &text[block.clone()];
        let first = body.len() - body.trim_start().len();
        let sql = body.trim();
        let sql = sql.strip_suffix(';').unwrap_or(sql).trim_end();
        if !sql.is_empty() {
            out.push(split::Statement {
                sql: sql.to_owned(),
                line: line_of(text, block.start + first),
            });
        }
        at = block.end;
    }
    out.extend(split_range(text, at..sections.up.end, dialect)?);
    Ok(out)
}

fn line_of(text: &str, at: usize) -> usize {
    1 + text.as_bytes()[..at].iter().filter(|b| **b == b'\n').count()
}

fn split_range(
    text: &str,
    range: Range<usize>,
    dialect: Dialect,
) -> Result<Vec<split::Statement>, split::SplitError> {
    let offset = line_of(text, range.start) - 1;
    let shift = |line: usize| line + offset;
    let statements = split::split(&text[range], dialect).map_err(|e| split::SplitError {
        line: shift(e.line),
        reason: e.reason,
    })?;
    Ok(statements
        .into_iter()
        .map(|s| split::Statement {
            line: shift(s.line),
            sql: s.sql,
        })
        .collect())
}
