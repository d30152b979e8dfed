//! Classifying arbitrary SQL text (hand-written migrations, plan files read back) by its tokens.
//!
//! The text is tokenized with `sqlparser` for the dialect, so words inside strings, comments and
//! quoted identifiers never count as keywords. Several statements may be given, separated by `;`:
//! the result is the highest severity, the first privilege kind, and credential-bearing if any is.
//! Error messages never repeat the SQL, which may hold a password.

mod privilege;
mod rules;

use serde::{Deserialize, Serialize};
use sqlparser::dialect::{Dialect as SqlDialect, MySqlDialect, PostgreSqlDialect};
use sqlparser::tokenizer::{Token, Tokenizer};
use thiserror::Error;

use crate::model::Dialect;
use crate::plan::Severity;

/// What kind of privilege change a statement makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrivilegeKind {
    /// `GRANT`.
    Grant,
    /// `REVOKE`.
    Revoke,
    /// Creating, altering or dropping a role, user or group; `SET ROLE`, `SET PASSWORD`.
    Role,
    /// `OWNER TO`, `REASSIGN OWNED`, `DROP OWNED`.
    Ownership,
    /// `ALTER DEFAULT PRIVILEGES`.
    DefaultPrivileges,
    /// `SECURITY DEFINER`, MySQL `DEFINER =` / `SQL SECURITY DEFINER`.
    SecurityDefiner,
    /// Row-level security: policies, `ENABLE`/`DISABLE ROW LEVEL SECURITY`.
    RowSecurity,
}

/// Why SQL text was not classified or was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClassifyError {
    /// The text could not be tokenized.
    #[error("cannot tokenize SQL at line {line}, column {column}: {message}")]
    Tokenize {
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// The tokenizer's message.
        message: String,
    },
    /// A statement creates or changes a principal's credentials; such SQL is never run or stored.
    #[error("statement {statement} sets a credential ({kind:?}); credentials are never planned or applied")]
    CredentialBearing {
        /// 1-based statement number in the text.
        statement: usize,
        /// Its privilege kind.
        kind: PrivilegeKind,
    },
}

/// The full classification of SQL text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    /// The highest severity of its statements (`safe` when it has none).
    pub severity: Severity,
    /// The privilege kinds its statements have, in statement order, without repeats.
    pub privileges: Vec<PrivilegeKind>,
}

/// One significant token: an unquoted word (uppercased), a quoted name, or punctuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// An unquoted word, uppercased.
    Word(String),
    /// A quoted identifier (never a keyword), with its text.
    Quoted(String),
    /// A string literal.
    Str,
    /// Any other token, by its text.
    Sym(String),
}

impl Tok {
    /// Whether this is the unquoted word `w` (uppercase).
    pub fn is(&self, w: &str) -> bool {
        matches!(self, Tok::Word(x) if x == w)
    }
}

/// The statements of `sql`, each as its significant tokens; empty statements are left out.
pub(crate) fn statements(sql: &str, dialect: Dialect) -> Result<Vec<Vec<Tok>>, ClassifyError> {
    let pg = PostgreSqlDialect {};
    let my = MySqlDialect {};
    let d: &dyn SqlDialect = match dialect {
        Dialect::Postgres => &pg,
        Dialect::Mysql => &my,
    };
    // MySQL ends a `--` comment at whitespace or a control character, and the server's text ends
    // in one (NUL), so a `--` at the very end is a comment there; sqlparser needs the whitespace.
    let terminated;
    let text = if dialect == Dialect::Mysql && sql.ends_with("--") {
        terminated = format!("{sql}\n");
        terminated.as_str()
    } else {
        sql
    };
    let tokens = Tokenizer::new(d, text)
        .tokenize_with_location()
        .map_err(|e| ClassifyError::Tokenize {
            line: e.location.line,
            column: e.location.column,
            message: e.message,
        })?;
    let mut out = Vec::new();
    let mut current = Vec::new();
    for t in tokens {
        let tok = match t.token {
            Token::Whitespace(_) | Token::EOF => continue,
            Token::SemiColon => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                continue;
            }
            Token::Word(w) if w.quote_style.is_none() => Tok::Word(w.value.to_ascii_uppercase()),
            Token::Word(w) => Tok::Quoted(w.value),
            Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::DollarQuotedString(_)
            | Token::NationalStringLiteral(_)
            | Token::EscapedStringLiteral(_)
            | Token::HexStringLiteral(_) => Tok::Str,
            other => Tok::Sym(other.to_string()),
        };
        current.push(tok);
    }
    if !current.is_empty() {
        out.push(current);
    }
    Ok(out)
}

/// The highest severity of the statements in `sql` (Ptah's destructive rules; unknown statements
/// are warnings, never safe).
pub fn statement_severity(sql: &str, dialect: Dialect) -> Result<Severity, ClassifyError> {
    Ok(statements(sql, dialect)?
        .iter()
        .map(|s| rules::severity(s, dialect))
        .max()
        .unwrap_or(Severity::Safe))
}

/// The privilege kind of the first privilege-changing statement in `sql`, if any.
pub fn privilege_kind(sql: &str, dialect: Dialect) -> Result<Option<PrivilegeKind>, ClassifyError> {
    Ok(statements(sql, dialect)?.iter().find_map(|s| privilege::kind(s)))
}

/// Whether any statement in `sql` creates or changes a principal's credentials
/// (`CREATE ROLE … PASSWORD`, `CREATE USER … IDENTIFIED BY`, `ALTER USER … PASSWORD`, `SET PASSWORD`).
pub fn is_credential_bearing(sql: &str, dialect: Dialect) -> Result<bool, ClassifyError> {
    Ok(statements(sql, dialect)?
        .iter()
        .any(|s| privilege::is_credential_bearing(s)))
}

/// Classifies `sql` for a gate, refusing credential-bearing principal DDL outright.
pub fn classify(sql: &str, dialect: Dialect) -> Result<Classification, ClassifyError> {
    let statements = statements(sql, dialect)?;
    let mut severity = Severity::Safe;
    let mut privileges = Vec::new();
    for (i, s) in statements.iter().enumerate() {
        if privilege::is_credential_bearing(s) {
            let kind = privilege::kind(s).unwrap_or(PrivilegeKind::Role);
            return Err(ClassifyError::CredentialBearing {
                statement: i + 1,
                kind,
            });
        }
        severity = severity.max(rules::severity(s, dialect));
        if let Some(kind) = privilege::kind(s).filter(|k| !privileges.contains(k)) {
            privileges.push(kind);
        }
    }
    Ok(Classification { severity, privileges })
}
