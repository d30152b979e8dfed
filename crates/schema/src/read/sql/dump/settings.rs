//! Session settings a dump opens with (`SET …`, `SELECT pg_catalog.set_config(…)`): skipped when
//! they keep the defaults the reader assumes, refused when they would place or quote objects
//! differently. Apart from the statement classification because the per-setting rules are a
//! table of their own.

use sqlparser::tokenizer::Token;

use super::Rule;
use super::forms::{ident_text, value_text, word};
use crate::model::Dialect;
use crate::read::IgnoreReason;

/// A `SET` statement: PostgreSQL's settings that place objects are refused unless they keep the
/// defaults the reader assumes; MySQL's `sql_mode` is refused when it makes `"` quote names.
pub(super) fn setting(dialect: Dialect, tokens: &[Token]) -> Rule {
    match dialect {
        Dialect::Postgres => {
            let mut rest = tokens.iter().skip(1).peekable();
            if rest
                .peek()
                .and_then(|t| word(t))
                .is_some_and(|w| w == "SESSION" || w == "LOCAL")
            {
                rest.next();
            }
            let Some(name) = rest.next().and_then(ident_text) else {
                return Rule::Parse;
            };
            let values: Vec<String> = rest
                .filter(|t| !matches!(t, Token::Eq | Token::Comma) && word(t).as_deref() != Some("TO"))
                .filter_map(value_text)
                .collect();
            pg_setting(&name.to_ascii_lowercase(), &values)
        }
        Dialect::Mysql => {
            let ansi_quotes = tokens.iter().any(|t| match t {
                Token::SingleQuotedString(s) => s.to_ascii_uppercase().contains("ANSI_QUOTES"),
                Token::Word(w) => {
                    w.value.eq_ignore_ascii_case("ANSI") || w.value.eq_ignore_ascii_case("ANSI_QUOTES")
                }
                _ => false,
            });
            if ansi_quotes {
                Rule::Refuse("SET sql_mode with ANSI_QUOTES (double quotes would name objects)".to_owned())
            } else {
                Rule::Ignore(IgnoreReason::SessionSetting)
            }
        }
    }
}

/// PostgreSQL settings by name and value (values as written, unquoted).
fn pg_setting(name: &str, values: &[String]) -> Rule {
    let plain = |allowed: &[&str]| values.iter().all(|v| allowed.contains(&v.as_str()));
    let refuse = |why: &str| Rule::Refuse(format!("SET {name} = {} ({why})", values.join(", ")));
    match name {
        "search_path" if plain(&["", "public", "pg_catalog", "\"$user\"", "$user"]) => {
            Rule::Ignore(IgnoreReason::SessionSetting)
        }
        "search_path" => refuse("unqualified names are read as public; qualify them instead"),
        "default_tablespace" if plain(&[""]) => Rule::Ignore(IgnoreReason::SessionSetting),
        "default_tablespace" => refuse("tablespaces are not modelled"),
        "default_table_access_method" if plain(&["heap"]) => Rule::Ignore(IgnoreReason::SessionSetting),
        "default_table_access_method" => refuse("table access methods are not modelled"),
        "role" | "session_authorization" => Rule::Ignore(IgnoreReason::Ownership),
        _ => Rule::Ignore(IgnoreReason::SessionSetting),
    }
}

/// `SELECT pg_catalog.set_config('name', 'value', false)`: a setting; any other query is refused.
pub(super) fn select_set_config(tokens: &[Token]) -> Rule {
    let mut i = 1;
    if tokens.get(i).and_then(ident_text).as_deref() == Some("pg_catalog")
        && tokens.get(i + 1) == Some(&Token::Period)
    {
        i += 2;
    }
    let is_set_config = tokens
        .get(i)
        .and_then(ident_text)
        .is_some_and(|n| n.eq_ignore_ascii_case("set_config"));
    match (
        is_set_config,
        tokens.get(i + 1),
        tokens.get(i + 2),
        tokens.get(i + 4),
    ) {
        (
            true,
            Some(Token::LParen),
            Some(Token::SingleQuotedString(name)),
            Some(Token::SingleQuotedString(value)),
        ) => {
            let values: Vec<String> = value.split(',').map(|v| v.trim().to_owned()).collect();
            pg_setting(&name.to_ascii_lowercase(), &values)
        }
        _ => Rule::Refuse("SELECT (a query; a schema document declares objects)".to_owned()),
    }
}
