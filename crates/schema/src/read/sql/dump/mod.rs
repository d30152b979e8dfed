//! What a `pg_dump --schema-only` or `mysqldump --no-data` file holds besides the schema, and the
//! dump statements sqlparser cannot read, recognised from their tokens.
//!
//! A statement is one of three things here:
//! - skipped by rule and reported ([`Ignored`]): session settings that change nothing about the
//!   objects (`SET statement_timeout = 0`, `SELECT pg_catalog.set_config('search_path', '', false)`,
//!   `/*!40101 SET NAMES utf8mb4 */`), ownership (`ALTER … OWNER TO`), and the lock and key
//!   toggles of a data load;
//! - refused by name, because it describes schema the model does not hold yet (`CREATE RULE`,
//!   MySQL's `GRANT`, a setting that places objects, such as a `search_path` other than `public`);
//!   PostgreSQL's row-level security, policies and grants are read by `super::security` before
//!   these rules are consulted;
//! - read: everything else goes to sqlparser, and the two dump forms it cannot parse
//!   (`ALTER SEQUENCE … OWNED BY …` and an identity added with `SEQUENCE NAME`) are read here;
//!   MySQL views and triggers are read from their text ([`super::program`]), because their bodies
//!   are kept as written.
//!   PostgreSQL routines, triggers and routine comments are recognised here and read by
//!   `super::pg_program` from their text.

use sqlparser::ast::{Ident, ObjectName};
use sqlparser::tokenizer::Token;

use crate::model::{Dialect, Identity};

use super::super::IgnoreReason;

mod forms;
mod settings;

use forms::{add_identity, owned_by, value_text, word};
use settings::{select_set_config, setting};

/// What to do with one statement.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Skip it, and report why.
    Ignore(IgnoreReason),
    /// Refuse it: the construct, named for the error.
    Refuse(String),
    /// `ALTER SEQUENCE <sequence> OWNED BY <table>.<column>`.
    OwnedBy {
        /// The sequence.
        sequence: ObjectName,
        /// The owning column's table, qualified as written.
        table: ObjectName,
        /// The owning column.
        column: Ident,
    },
    /// `ALTER TABLE … ALTER COLUMN … ADD GENERATED … AS IDENTITY (…)`.
    AddIdentity {
        /// The table.
        table: ObjectName,
        /// The column.
        column: Ident,
        /// ALWAYS or BY DEFAULT.
        identity: Identity,
        /// Its sequence's options as written.
        options: crate::model::SequenceOptions,
    },
    /// A MySQL `CREATE … VIEW`, read from its text ([`super::program`]).
    MysqlView,
    /// A MySQL `CREATE … TRIGGER`, read from its text ([`super::program`]).
    MysqlTrigger,
    /// A MySQL `CREATE … FUNCTION|PROCEDURE`, read from its text ([`super::program`]).
    MysqlRoutine,
    /// A MySQL `CREATE … EVENT`, read from its text ([`super::program`]).
    MysqlEvent,
    /// A MySQL `CREATE|DROP|ALTER DATABASE|SCHEMA` or `USE`: the document's own database or
    /// another one ([`super::program`]).
    MysqlDatabase,
    /// A MySQL `DROP FUNCTION|PROCEDURE|EVENT|TRIGGER`.
    MysqlDrop,
    /// A MySQL `CREATE TABLE … PARTITION BY …` ([`super::program`]).
    MysqlPartitioned,
    /// PostgreSQL `CREATE [OR REPLACE] FUNCTION|PROCEDURE`, read from its tokens and text.
    Routine,
    /// PostgreSQL `CREATE [OR REPLACE] [CONSTRAINT] TRIGGER`, kept as the statement's text.
    Trigger,
    /// PostgreSQL `COMMENT ON FUNCTION|PROCEDURE|ROUTINE|AGGREGATE name(args) IS …`.
    RoutineComment,
    /// PostgreSQL `COMMENT ON TRIGGER name ON table IS …`.
    TriggerComment,
    /// Hand it to sqlparser.
    Parse,
}

/// Object kinds after `CREATE` that the model does not hold (yet), with how the refusal names them.
const UNMODELLED: &[(&str, &str)] = &[
    ("DOMAIN", "CREATE DOMAIN (domains are not modelled)"),
    ("FUNCTION", "CREATE FUNCTION (functions are not modelled)"),
    ("PROCEDURE", "CREATE PROCEDURE (procedures are not modelled)"),
    ("VIEW", "CREATE VIEW (views are not modelled)"),
    (
        "MATERIALIZED",
        "CREATE MATERIALIZED VIEW (materialized views are not modelled)",
    ),
    ("TRIGGER", "CREATE TRIGGER (triggers are not modelled)"),
    ("EVENT", "CREATE EVENT (scheduled events are not modelled)"),
    ("RULE", "CREATE RULE (rewrite rules are not modelled)"),
    ("AGGREGATE", "CREATE AGGREGATE (aggregates are not modelled)"),
    ("OPERATOR", "CREATE OPERATOR (operators are not modelled)"),
    ("CAST", "CREATE CAST (casts are not modelled)"),
    ("COLLATION", "CREATE COLLATION (collations are not modelled)"),
    ("CONVERSION", "CREATE CONVERSION (conversions are not modelled)"),
    (
        "TEXT",
        "CREATE TEXT SEARCH (text search configurations are not modelled)",
    ),
    (
        "FOREIGN",
        "CREATE FOREIGN (foreign tables and data wrappers are not modelled)",
    ),
    ("SERVER", "CREATE SERVER (foreign servers are not modelled)"),
    ("PUBLICATION", "CREATE PUBLICATION (replication is not modelled)"),
    (
        "SUBSCRIPTION",
        "CREATE SUBSCRIPTION (replication is not modelled)",
    ),
    (
        "STATISTICS",
        "CREATE STATISTICS (extended statistics are not modelled)",
    ),
    (
        "LANGUAGE",
        "CREATE LANGUAGE (procedural languages are not modelled)",
    ),
    ("ROLE", "CREATE ROLE (roles are out of scope)"),
    ("USER", "CREATE USER (roles are out of scope)"),
    ("TABLESPACE", "CREATE TABLESPACE (tablespaces are out of scope)"),
    (
        "DATABASE",
        "CREATE DATABASE (a schema document describes one database)",
    ),
];

/// Words that may stand between `CREATE` and the object kind on their own.
const CREATE_PREFIXES: &[&str] = &[
    "OR",
    "REPLACE",
    "TEMPORARY",
    "TEMP",
    "UNLOGGED",
    "GLOBAL",
    "LOCAL",
    "UNIQUE",
    "CONSTRAINT",
    "TRUSTED",
    "PROCEDURAL",
    "RECURSIVE",
    "FULLTEXT",
    "SPATIAL",
];

/// Words that end a MySQL `DEFINER = user@host` clause.
const DEFINER_ENDS: &[&str] = &[
    "SQL",
    "VIEW",
    "FUNCTION",
    "PROCEDURE",
    "TRIGGER",
    "EVENT",
    "AGGREGATE",
];

/// The object kind of a `CREATE` statement: its first word after the prefixes and MySQL's
/// `ALGORITHM = …`, `DEFINER = …` and `SQL SECURITY …` clauses.
fn create_kind(tokens: &[Token]) -> Option<String> {
    let mut i = 1;
    while let Some(w) = tokens.get(i).and_then(word) {
        match w.as_str() {
            w if CREATE_PREFIXES.contains(&w) => i += 1,
            "ALGORITHM" => i += 3,
            "SQL" => i += 3,
            "DEFINER" => {
                i += 2;
                while tokens
                    .get(i)
                    .is_some_and(|t| word(t).is_none_or(|w| !DEFINER_ENDS.contains(&w.as_str())))
                {
                    i += 1;
                }
            }
            _ => return Some(w),
        }
    }
    None
}

/// Decides what to do with a statement from its tokens (whitespace and comments removed).
pub(crate) fn classify(dialect: Dialect, tokens: &[Token]) -> Rule {
    let words: Vec<Option<String>> = tokens.iter().map(word).collect();
    let w = |i: usize| words.get(i).and_then(Option::as_deref);
    match w(0) {
        Some("SET") => setting(dialect, tokens),
        Some("SELECT") => select_set_config(tokens),
        Some("LOCK" | "UNLOCK") if dialect == Dialect::Mysql && w(1) == Some("TABLES") => {
            Rule::Ignore(IgnoreReason::DataLoad)
        }
        // PostgreSQL's table grants never reach here (`super::security` reads them).
        Some(verb @ ("GRANT" | "REVOKE")) => Rule::Refuse(format!("{verb} (privileges are not modelled)")),
        Some(verb @ ("INSERT" | "REPLACE" | "UPDATE" | "DELETE" | "COPY")) => Rule::Refuse(format!(
            "{verb} (data; reference rows are declared in schema.hcl)"
        )),
        Some("SECURITY") => Rule::Refuse("SECURITY LABEL (security labels are not modelled)".to_owned()),
        Some("CREATE") => create(dialect, tokens),
        Some("USE") if dialect == Dialect::Mysql => Rule::MysqlDatabase,
        Some("DROP" | "ALTER")
            if dialect == Dialect::Mysql && matches!(w(1), Some("DATABASE" | "SCHEMA")) =>
        {
            Rule::MysqlDatabase
        }
        Some("DROP")
            if dialect == Dialect::Mysql
                && matches!(w(1), Some("FUNCTION" | "PROCEDURE" | "EVENT" | "TRIGGER")) =>
        {
            Rule::MysqlDrop
        }
        Some("COMMENT")
            if dialect == Dialect::Postgres
                && w(1) == Some("ON")
                && matches!(w(2), Some("FUNCTION" | "PROCEDURE" | "ROUTINE" | "AGGREGATE")) =>
        {
            Rule::RoutineComment
        }
        Some("COMMENT") if dialect == Dialect::Postgres && w(1) == Some("ON") && w(2) == Some("TRIGGER") => {
            Rule::TriggerComment
        }
        Some("COMMENT")
            if dialect == Dialect::Postgres && w(1) == Some("ON") && w(2) == Some("CONSTRAINT") =>
        {
            // sqlparser has no such comment object; the refusal names what carries the comment.
            let kind = w(2).unwrap_or_default();
            let name = tokens.get(3).map(ToString::to_string).unwrap_or_default();
            let on: String = tokens
                .iter()
                .skip(5)
                .take_while(|t| word(t).as_deref() != Some("IS"))
                .map(ToString::to_string)
                .collect();
            Rule::Refuse(format!(
                "COMMENT ON {kind} {name} ON {on} (comments on constraints are not modelled)"
            ))
        }
        Some("COMMENT") => default_comment(tokens).unwrap_or(Rule::Parse),
        Some("ALTER") => alter(dialect, tokens, &words),
        _ => Rule::Parse,
    }
}

fn create(dialect: Dialect, tokens: &[Token]) -> Rule {
    let kind = create_kind(tokens);
    if dialect == Dialect::Mysql {
        match kind.as_deref() {
            Some("VIEW") => return Rule::MysqlView,
            Some("TRIGGER") => return Rule::MysqlTrigger,
            Some("FUNCTION" | "PROCEDURE") => return Rule::MysqlRoutine,
            Some("EVENT") => return Rule::MysqlEvent,
            Some("DATABASE" | "SCHEMA") => return Rule::MysqlDatabase,
            Some("TABLE") if partitioned(tokens) => return Rule::MysqlPartitioned,
            _ => {}
        }
    }
    if dialect == Dialect::Postgres {
        match kind.as_deref() {
            Some("FUNCTION" | "PROCEDURE" | "AGGREGATE") => return Rule::Routine,
            Some("TRIGGER") => return Rule::Trigger,
            _ => {}
        }
    }
    // PostgreSQL's partitioning (`PARTITION BY`, `PARTITION OF`, `ON ONLY`) is read before these
    // rules (`super::partition`).
    match kind.and_then(|k| UNMODELLED.iter().find(|(u, _)| *u == k)) {
        Some((_, what)) => Rule::Refuse((*what).to_owned()),
        None => Rule::Parse,
    }
}

/// Whether `PARTITION BY` follows the table's parenthesised definition (outside it).
fn partitioned(tokens: &[Token]) -> bool {
    let mut depth = 0usize;
    tokens.iter().enumerate().any(|(i, t)| {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0
            && word(t).as_deref() == Some("PARTITION")
            && tokens.get(i + 1).and_then(word).as_deref() == Some("BY")
    })
}

fn alter(dialect: Dialect, tokens: &[Token], words: &[Option<String>]) -> Rule {
    let w = |i: usize| words.get(i).and_then(Option::as_deref);
    let n = words.len();
    if n >= 3 && w(n - 3) == Some("OWNER") && w(n - 2) == Some("TO") {
        return Rule::Ignore(IgnoreReason::Ownership);
    }
    let has = |pair: [&str; 2]| {
        words
            .windows(2)
            .any(|p| p[0].as_deref() == Some(pair[0]) && p[1].as_deref() == Some(pair[1]))
    };
    match (w(1), dialect) {
        (Some("DEFAULT"), _) if w(2) == Some("PRIVILEGES") => {
            Rule::Refuse("ALTER DEFAULT PRIVILEGES (privileges are not modelled)".to_owned())
        }
        (Some("SEQUENCE"), Dialect::Postgres) => owned_by(tokens).unwrap_or(Rule::Parse),
        (Some("TABLE"), Dialect::Mysql)
            if n >= 2 && w(n - 1) == Some("KEYS") && matches!(w(n - 2), Some("DISABLE" | "ENABLE")) =>
        {
            Rule::Ignore(IgnoreReason::DataLoad)
        }
        // PostgreSQL's are read before these rules (`super::partition`).
        (Some("TABLE"), Dialect::Mysql) if has(["ATTACH", "PARTITION"]) || has(["DETACH", "PARTITION"]) => {
            Rule::Refuse("ALTER TABLE … ATTACH PARTITION (MySQL partitioning is not modelled)".to_owned())
        }
        (Some("TABLE"), Dialect::Postgres) if has(["ADD", "GENERATED"]) => add_identity(tokens)
            .unwrap_or_else(|| {
                Rule::Refuse("ALTER TABLE … ADD GENERATED … AS IDENTITY in a form not read".to_owned())
            }),
        _ => Rule::Parse,
    }
}

/// The comments a database has before anyone writes one: on `public`, and an extension's own
/// (its install script sets it; extension comments are not modelled).
fn default_comment(tokens: &[Token]) -> Option<Rule> {
    let texts: Vec<String> = tokens.iter().filter_map(value_text).collect();
    let is = |kind: &str, name: &str, text: &str| {
        texts.len() == 6 && texts[2].eq_ignore_ascii_case(kind) && texts[3] == name && texts[5] == text
    };
    let extension = texts.len() == 6 && texts[2].eq_ignore_ascii_case("EXTENSION");
    (is("SCHEMA", "public", "standard public schema") || extension)
        .then_some(Rule::Ignore(IgnoreReason::DefaultComment))
}
