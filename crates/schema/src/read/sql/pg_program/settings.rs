//! A routine's `SET name = value` clauses and planner estimates, in the spelling `pg_proc` keeps.
//!
//! The server flattens a `SET` clause into one `name=value` text (`proconfig`): names fold to
//! lowercase, each value is its text (a string's content, a number as written, an unquoted word
//! in lowercase), values are joined with `, `, and for settings that list names (`search_path`)
//! each value is quoted as an identifier where it needs it (`"$user", public`). Reading the
//! clause the same way makes a dump's `SET search_path TO 'public', 'pg_temp'` and a hand-written
//! `SET search_path = public, pg_temp` one setting.

use sqlparser::tokenizer::Token;

use crate::model::RoutineOptions;
use crate::types::quote_pg_ident;

use super::super::super::{Location, ReadError};
use super::super::Reader;
use super::Source;

impl Reader {
    /// The `SET` clause whose `SET` is token `i`: the setting as `proconfig` holds it, and the
    /// number of tokens it takes.
    pub(super) fn setting(
        &self,
        src: &Source<'_>,
        i: usize,
        what: &str,
        at: &Location,
    ) -> Result<(String, usize), ReadError> {
        let mut k = i + 1;
        let mut name = String::new();
        loop {
            match src.token(k) {
                Some(Token::Word(w)) => name.push_str(&w.value.to_lowercase()),
                _ => return Err(self.expected(src, k, "a setting name", at)),
            }
            k += 1;
            if src.token(k) != Some(&Token::Period) {
                break;
            }
            name.push('.');
            k += 1;
        }
        match (src.token(k), src.word(k).as_deref()) {
            (Some(Token::Eq), _) | (_, Some("TO")) => k += 1,
            (_, Some("FROM")) => {
                let here = self.at_token(src, i, at);
                let why = format!(
                    "SET {name} FROM CURRENT on a {what} (the value at creation time is not modelled)"
                );
                return Err(self.unsupported(&here, why));
            }
            _ => return Err(self.expected(src, k, "TO or =", at)),
        }
        let mut values = Vec::new();
        loop {
            let value = match src.token(k) {
                Some(Token::SingleQuotedString(s)) => s.clone(),
                Some(Token::Word(w)) if w.quote_style.is_some() => w.value.clone(),
                Some(Token::Word(w)) => w.value.to_lowercase(),
                Some(Token::Number(n, _)) => n.clone(),
                Some(Token::Minus) => match src.token(k + 1) {
                    Some(Token::Number(n, _)) => {
                        k += 1;
                        format!("-{n}")
                    }
                    _ => return Err(self.expected(src, k + 1, "a number", at)),
                },
                _ => return Err(self.expected(src, k, "a setting value", at)),
            };
            values.push(if RoutineOptions::quotes_names(&name) {
                quote_pg_ident(&value)
            } else {
                value
            });
            k += 1;
            if src.token(k) != Some(&Token::Comma) {
                break;
            }
            k += 1;
        }
        Ok((format!("{name}={}", values.join(", ")), k - i))
    }

    /// The planner estimate (`COST`, `ROWS`) at token `i`, `None` when it is the default.
    pub(super) fn estimate(
        &self,
        src: &Source<'_>,
        i: usize,
        default: f32,
        at: &Location,
    ) -> Result<Option<String>, ReadError> {
        match src.token(i) {
            Some(Token::Number(n, _)) if n.parse::<f32>().is_ok() => Ok(RoutineOptions::estimate(n, default)),
            _ => Err(self.expected(src, i, "a number", at)),
        }
    }
}
