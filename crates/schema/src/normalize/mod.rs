//! Canonical text for defaults, CHECK expressions, index predicates and index expressions, so
//! what an author writes and what a catalog gives back compare equal.
//!
//! The text is parsed with `sqlparser` for the dialect and rewritten:
//! - parentheses are removed wherever operator precedence makes them redundant (catalogs add
//!   them everywhere: `((a > 0) AND (b > 0))` is `a > 0 and b > 0`);
//! - casts of literals are dropped (`'draft'::invoice_state`, `'x'::text`, `0::bigint`,
//!   `'t_id_seq'::regclass`); a numeric-looking string cast to a numeric type becomes the number
//!   (PostgreSQL prints `-1` as `'-1'::integer`);
//! - on PostgreSQL, `nextval('public.s')` loses its `public.` (dumps qualify every name);
//! - unquoted identifiers and keywords are lowercased; needless identifier quotes are removed
//!   (quotes stay where the name is a keyword or not a plain lowercase name);
//! - on MySQL, `CURRENT_TIMESTAMP`, `current_timestamp()`, `now()`, `localtimestamp` and
//!   `localtime` (with or without a precision) are all written `current_timestamp()` /
//!   `current_timestamp(n)`; PostgreSQL keeps `current_timestamp` and `now()` distinct because its
//!   catalog does;
//! - spacing is sqlparser's `Display`.
//!
//! Text that does not parse is returned with its whitespace collapsed and nothing else changed;
//! neither function ever panics.

use sqlparser::ast::{Expr, Value};
use sqlparser::dialect::{Dialect as SqlDialect, MySqlDialect, PostgreSqlDialect};
use sqlparser::parser::Parser;

use crate::model::{DefaultValue, Dialect, Literal};

use rewrite::rewrite;

mod casts;
mod collation;
mod domain;
mod mysql;
mod partition_mysql;
mod program;
mod rewrite;
mod temporal;

pub use casts::without_column_text_casts;
pub use collation::postgres_collation;
pub use domain::{domain_base, domain_check};
pub use mysql::{
    MysqlParameter, mysql_action, mysql_charset_name, mysql_data_access, mysql_on_update_default,
    mysql_parameter_list, mysql_parameters, mysql_split_on_update, mysql_type,
};
pub use partition_mysql::MysqlPartitioning;
pub use program::{mysql_quote, mysql_trigger_definition, mysql_view_definition};
pub use temporal::temporal_default;

/// The sqlparser dialect for `dialect`.
pub fn sql_dialect(dialect: Dialect) -> Box<dyn SqlDialect> {
    match dialect {
        Dialect::Postgres => Box::new(PostgreSqlDialect {}),
        Dialect::Mysql => Box::new(MySqlDialect {}),
    }
}

/// Collapses runs of whitespace to one space and trims: the fallback for unparsable text.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `text` has whitespace outside parentheses, brackets and quotes: an expression that
/// may not stand where the grammar takes only a simple one (a PostgreSQL `DEFAULT`).
pub fn has_top_level_space(text: &str) -> bool {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for c in text.trim().chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth = depth.saturating_sub(1),
            (None, c) if c.is_whitespace() && depth == 0 => return true,
            _ => {}
        }
    }
    false
}

fn parse(dialect: Dialect, text: &str) -> Option<Expr> {
    let sql = sql_dialect(dialect);
    let mut parser = Parser::new(sql.as_ref())
        .with_recursion_limit(crate::read::sql::MAX_NESTING)
        .try_with_sql(text)
        .ok()?;
    let expr = parser.parse_expr().ok()?;
    // Everything must have been consumed.
    if parser.peek_token().token != sqlparser::tokenizer::Token::EOF {
        return None;
    }
    Some(expr)
}

/// `text` parsed, else its whitespace-collapsed form parsed, else that form. Collapsing can
/// change what a `--` comment covers (a line break ended it), so a text that only parses once
/// collapsed must be read collapsed: normalizing normalized text then gives the same result.
fn parse_or_collapse(dialect: Dialect, text: &str) -> Result<Expr, String> {
    if let Some(expr) = parse(dialect, text) {
        return Ok(expr);
    }
    let collapsed = collapse_whitespace(text);
    parse(dialect, &collapsed).ok_or(collapsed)
}

/// The canonical text of an expression (see the module docs); unparsable text comes back with
/// its whitespace collapsed.
pub fn expression(dialect: Dialect, text: &str) -> String {
    match parse_or_collapse(dialect, text) {
        Ok(expr) => canonical(dialect, expr),
        Err(collapsed) => collapsed,
    }
}

/// A default read as a literal (compared by value) or an expression (compared by canonical text).
///
/// `NULL`, `TRUE`/`FALSE`, numbers and strings (after dropping casts) are literals; numbers get
/// a canonical decimal text (`1.50` → `1.5`, `+007` → `7`). On MySQL, which has no boolean type,
/// `TRUE`/`FALSE` are the numbers `1`/`0`, as its catalog reports them. Anything else, or text
/// that does not parse, is an [`DefaultValue::Expression`] with [`expression`]'s text.
pub fn default_value(dialect: Dialect, text: &str) -> DefaultValue {
    let expr = match parse_or_collapse(dialect, text) {
        Ok(expr) => expr,
        Err(collapsed) => return DefaultValue::Expression(collapsed),
    };
    let expr = rewrite(dialect, expr);
    match literal(&expr) {
        Some(Literal::Bool(b)) if dialect == Dialect::Mysql => {
            DefaultValue::Literal(Literal::Number(if b { "1" } else { "0" }.to_owned()))
        }
        Some(lit) => DefaultValue::Literal(lit),
        None => DefaultValue::Expression(finish(&expr)),
    }
}

/// The canonical decimal text of a number: no sign for zero, no `+`, no leading or trailing
/// zeros; exponent forms are only lowercased.
pub fn canonical_number(text: &str) -> String {
    let t = text.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if !digits.chars().any(|c| c.is_ascii_digit())
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        || digits.matches('.').count() > 1
    {
        return t.to_ascii_lowercase();
    }
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let mut out = if int.is_empty() {
        "0".to_owned()
    } else {
        int.to_owned()
    };
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    if negative && out != "0" {
        out.insert(0, '-');
    }
    out
}

fn literal(expr: &Expr) -> Option<Literal> {
    match expr {
        Expr::Value(v) => match &v.value {
            Value::Null => Some(Literal::Null),
            Value::Boolean(b) => Some(Literal::Bool(*b)),
            Value::Number(n, _) => Some(Literal::Number(canonical_number(n))),
            Value::SingleQuotedString(s)
            | Value::DoubleQuotedString(s)
            | Value::EscapedStringLiteral(s)
            | Value::NationalStringLiteral(s) => Some(Literal::String(s.clone())),
            _ => None,
        },
        _ => None,
    }
}

fn canonical(dialect: Dialect, expr: Expr) -> String {
    finish(&rewrite(dialect, expr))
}

/// Renders, then lowercases everything outside quotes.
fn finish(expr: &Expr) -> String {
    let text = expr.to_string();
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => {
                if matches!(c, '\'' | '"' | '`') {
                    quote = Some(c);
                }
                out.push(c.to_ascii_lowercase());
            }
        }
    }
    out
}
