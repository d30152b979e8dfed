//! Severity rules over one statement's tokens (Ptah's `migration/safety` families).
//!
//! From text alone the old type of a column is unknown, so every type change is treated as a
//! possible narrowing (destructive), as are MySQL `MODIFY`/`CHANGE`.

use super::Tok;
use super::privilege::{has_seq, kind};
use crate::model::Dialect;
use crate::plan::Severity::{self, Destructive, Safe, Warning};

/// The severity of one statement.
pub(super) fn severity(s: &[Tok], dialect: Dialect) -> Severity {
    let privilege = if kind(s).is_some() { Warning } else { Safe };
    let w = |i: usize| match s.get(i) {
        Some(Tok::Word(x)) => x.as_str(),
        _ => "",
    };
    let base = match w(0) {
        "TRUNCATE" | "DELETE" => Destructive,
        "UPDATE" | "RENAME" | "GRANT" | "REVOKE" => Warning,
        "INSERT" | "SELECT" | "COMMENT" | "ANALYZE" | "WITH" | "VALUES" => Safe,
        "DROP" => drop_object(w(1), dialect),
        "CREATE" => create(s),
        "ALTER" if w(1) == "TABLE" => alter_table(s, dialect),
        "ALTER" if w(1) == "TYPE" => alter_type(s),
        _ => Warning,
    };
    base.max(privilege)
}

/// `DROP <object>`: everything loses data or definitions except a plain index on PostgreSQL.
fn drop_object(object: &str, dialect: Dialect) -> Severity {
    match (object, dialect) {
        ("INDEX", Dialect::Postgres) => Warning,
        _ => Destructive,
    }
}

fn create(s: &[Tok]) -> Severity {
    if has_seq(s, &["OR", "REPLACE"]) || has_seq(s, &["UNIQUE", "INDEX"]) {
        Warning
    } else {
        Safe
    }
}

fn alter_type(s: &[Tok]) -> Severity {
    if has_seq(s, &["DROP", "ATTRIBUTE"]) || has_seq(s, &["DROP", "VALUE"]) {
        Destructive
    } else {
        Warning
    }
}

/// `ALTER TABLE name clause, clause …`: the highest clause severity.
fn alter_table(s: &[Tok], dialect: Dialect) -> Severity {
    let mut i = 2;
    while s
        .get(i)
        .is_some_and(|t| t.is("IF") || t.is("EXISTS") || t.is("ONLY"))
    {
        i += 1;
    }
    // The table name: name ( . name )*
    i += 1;
    while matches!(s.get(i), Some(Tok::Sym(x)) if x == ".") {
        i += 2;
    }
    let rest = s.get(i..).unwrap_or_default();
    let mut clauses: Vec<&[Tok]> = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (j, t) in rest.iter().enumerate() {
        match t {
            Tok::Sym(x) if x == "(" => depth += 1,
            Tok::Sym(x) if x == ")" => depth -= 1,
            Tok::Sym(x) if x == "," && depth == 0 => {
                clauses.push(&rest[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    clauses.push(&rest[start..]);
    clauses
        .into_iter()
        .map(|c| clause(c, dialect))
        .max()
        .unwrap_or(Warning)
}

fn clause(c: &[Tok], dialect: Dialect) -> Severity {
    let w = |i: usize| match c.get(i) {
        Some(Tok::Word(x)) => x.as_str(),
        _ => "",
    };
    match w(0) {
        "ADD" => match w(1) {
            "CONSTRAINT" | "PRIMARY" | "UNIQUE" | "FOREIGN" | "CHECK" | "EXCLUDE" => Warning,
            "INDEX" | "KEY" | "FULLTEXT" | "SPATIAL" => Safe,
            "VALUE" | "PARTITION" => Warning,
            _ if has_seq(c, &["NOT", "NULL"]) => Warning,
            _ if c
                .iter()
                .any(|t| t.is("UNIQUE") || t.is("PRIMARY") || t.is("REFERENCES")) =>
            {
                Warning
            }
            _ => Safe,
        },
        "DROP" => match w(1) {
            "DEFAULT" | "IDENTITY" | "EXPRESSION" => Warning,
            // The helper check of a lock-safe `SET NOT NULL`, the plan's own.
            "CONSTRAINT" if helper_check(c) => Safe,
            "INDEX" | "KEY" if dialect == Dialect::Postgres => Warning,
            _ => Destructive,
        },
        "ALTER" => alter_column(c),
        "MODIFY" | "CHANGE" => Destructive,
        "RENAME" | "OWNER" => Warning,
        // MySQL's online options change nothing themselves.
        "ALGORITHM" | "LOCK" if dialect == Dialect::Mysql => Safe,
        "DISABLE" if has_seq(c, &["ROW", "LEVEL", "SECURITY"]) => Destructive,
        "COMMENT" => Safe,
        _ => Warning,
    }
}

/// Whether a `DROP CONSTRAINT [IF EXISTS] name` clause names a reserved `SET NOT NULL` helper
/// ([`crate::names::NOT_NULL_CHECK_PREFIX`]).
fn helper_check(c: &[Tok]) -> bool {
    let name = match c {
        [_, _, name] => name,
        [_, _, i, e, name] if i.is("IF") && e.is("EXISTS") => name,
        _ => return false,
    };
    match name {
        Tok::Quoted(n) => crate::names::is_not_null_check(n),
        Tok::Word(n) => crate::names::is_not_null_check(&n.to_ascii_lowercase()),
        _ => false,
    }
}

/// `ALTER [COLUMN] name …`.
fn alter_column(c: &[Tok]) -> Severity {
    if has_seq(c, &["DROP", "NOT", "NULL"]) || c.iter().any(|t| t.is("TYPE")) {
        Destructive
    } else if has_seq(c, &["SET", "DEFAULT"]) {
        Safe
    } else {
        Warning
    }
}
