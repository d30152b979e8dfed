//! `CREATE [OR REPLACE] AGGREGATE name(args) (SFUNC = …, STYPE = …, …)`, as pg_dump writes it.
//!
//! The argument list is kept as written (pg_dump prints it with `pg_get_function_arguments`);
//! the options become one definition text in the catalog's spelling
//! ([`Routine::aggregate_definition`]), so a hand-written `sfunc = f, stype = int` and a dump's
//! `SFUNC = public.f,\n    STYPE = integer` read alike. Options the model has no place for
//! (moving-aggregate, ordered-set and the old `BASETYPE` form) are refused by name.

use sqlparser::tokenizer::Token;

use crate::model::{AGGREGATE_OPTIONS, Dialect, Routine, RoutineKind, RoutineOptions, Volatility};
use crate::types::{parse_type, quote_pg_ident, render_type};

use super::super::super::{Location, ReadError};
use super::super::Reader;
use super::Source;
use super::routine::identity;

/// Options whose value names a function.
const FUNCTIONS: &[&str] = &["SFUNC", "FINALFUNC", "COMBINEFUNC", "SERIALFUNC", "DESERIALFUNC"];

impl Reader {
    /// Reads an aggregate whose `AGGREGATE` keyword is token `i`.
    pub(super) fn create_aggregate(
        &mut self,
        src: &Source<'_>,
        i: usize,
        replace: bool,
        at: Location,
    ) -> Result<(), ReadError> {
        let (name, after) = src
            .name(i + 1)
            .ok_or_else(|| self.expected(src, i + 1, "an aggregate name", &at))?;
        let name = self.qualified(&name, &at)?;
        self.check_namespace(&name, &at)?;
        if src.token(after) != Some(&Token::LParen) {
            return Err(self.expected(src, after, "(", &at));
        }
        let close = src
            .closing(after)
            .ok_or_else(|| self.expected(src, src.tokens.len(), ")", &at))?;
        if (after + 1..close).any(|k| src.word(k).as_deref() == Some("ORDER")) {
            return Err(self.unsupported(&at, "an ordered-set aggregate (… ORDER BY …) is not modelled"));
        }
        let arguments = if close > after + 1 {
            src.between(after + 1, close - 1).trim().to_owned()
        } else {
            String::new()
        };
        let identity_arguments = identity(src, after, close);
        let open = close + 1;
        if src.token(open) != Some(&Token::LParen) {
            return Err(self.expected(src, open, "( SFUNC = …, STYPE = … )", &at));
        }
        let end = src
            .closing(open)
            .ok_or_else(|| self.expected(src, src.tokens.len(), ")", &at))?;
        if end + 1 != src.tokens.len() {
            return Err(self.expected(src, end + 1, "end of statement", &at));
        }
        let mut options = Vec::new();
        for (first, last) in items(src, open, end) {
            let (key, value) = self.aggregate_option(src, first, last, &at)?;
            // Written defaults, which pg_dump leaves out.
            let default = matches!(
                (key.as_str(), value.as_deref()),
                ("FINALFUNC_MODIFY", Some("READ_ONLY"))
                    | ("PARALLEL", Some("unsafe"))
                    | ("SSPACE", Some("0"))
            );
            if !default {
                options.push((key, value));
            }
        }
        for required in ["SFUNC", "STYPE"] {
            if !options.iter().any(|(k, _)| k == required) {
                return Err(self.unsupported(&at, format!("an aggregate without {required}")));
            }
        }
        let routine = Routine {
            name,
            kind: RoutineKind::Aggregate,
            arguments,
            identity_arguments,
            returns: None,
            language: "internal".to_owned(),
            body: Routine::aggregate_definition(&options),
            volatility: Volatility::Volatile,
            strict: false,
            security_definer: false,
            comment: None,
            options: RoutineOptions::default(),
        };
        let key = routine.key();
        match self.schema.routines.get(&key) {
            Some(_) if !replace => Err(ReadError::Duplicate {
                at,
                what: format!("aggregate {key}"),
            }),
            previous => {
                let comment = previous.and_then(|p| p.comment.clone());
                self.schema.routines.insert(key, Routine { comment, ..routine });
                Ok(())
            }
        }
    }

    /// One `KEY [= value]` option, its value in the catalog's spelling (`None`: dropped because it
    /// is the default, or a flag).
    fn aggregate_option(
        &self,
        src: &Source<'_>,
        first: usize,
        last: usize,
        at: &Location,
    ) -> Result<(String, Option<String>), ReadError> {
        let here = self.at_token(src, first, at);
        let key = src
            .word(first)
            .ok_or_else(|| self.expected(src, first, "an aggregate option", at))?;
        if !AGGREGATE_OPTIONS.contains(&key.as_str()) {
            let why =
                format!("aggregate option {key} (moving-aggregate and ordered-set options are not modelled)");
            return Err(self.unsupported(&here, why));
        }
        if key == "FINALFUNC_EXTRA" {
            return Ok((key, None));
        }
        if src.token(first + 1) != Some(&Token::Eq) || first + 2 > last {
            return Err(self.expected(src, first + 1, "= value", at));
        }
        let raw = src.between(first + 2, last).trim();
        let value = match key.as_str() {
            k if FUNCTIONS.contains(&k) => self.aggregate_function(src, first + 2, last, at)?,
            "STYPE" => parse_type(Dialect::Postgres, raw)
                .map_or_else(|_| raw.to_owned(), |t| render_type(Dialect::Postgres, &t)),
            "INITCOND" => {
                let text = match src.token(first + 2) {
                    Some(Token::SingleQuotedString(s)) if first + 2 == last => s.clone(),
                    _ => raw.to_owned(),
                };
                format!("'{}'", text.replace('\'', "''"))
            }
            "SORTOP" if raw.to_ascii_uppercase().starts_with("OPERATOR") => raw.to_owned(),
            // pg_dump names the operator with its schema.
            "SORTOP" => format!("OPERATOR(pg_catalog.{raw})"),
            "FINALFUNC_MODIFY" => raw.to_ascii_uppercase(),
            "PARALLEL" => raw.trim_matches('\'').to_ascii_lowercase(),
            _ => raw.to_owned(),
        };
        Ok((key, Some(value)))
    }

    /// A support function's name as `regproc` prints it with an empty `search_path`: a function
    /// the document declares is qualified, a built-in one (`int4pl`, `array_append`) is not.
    fn aggregate_function(
        &self,
        src: &Source<'_>,
        first: usize,
        last: usize,
        at: &Location,
    ) -> Result<String, ReadError> {
        let (object, _) = src
            .name(first)
            .filter(|(_, after)| *after == last + 1)
            .ok_or_else(|| self.expected(src, first, "a function name", at))?;
        let q = self.qualified(&object, at)?;
        let written_bare = object.0.len() == 1;
        let declared = self
            .schema
            .routines
            .values()
            .any(|r| r.name == q && r.kind != RoutineKind::Aggregate);
        Ok(if q.schema == "pg_catalog" || (written_bare && !declared) {
            quote_pg_ident(&q.name)
        } else {
            format!("{}.{}", quote_pg_ident(&q.schema), quote_pg_ident(&q.name))
        })
    }
}

/// The `(first, last)` token ranges of the comma-separated items between `open` and `close`.
fn items(src: &Source<'_>, open: usize, close: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = open + 1;
    let mut depth = 0usize;
    for k in open + 1..close {
        match src.token(k) {
            Some(Token::LParen) => depth += 1,
            Some(Token::RParen) => depth = depth.saturating_sub(1),
            Some(Token::Comma) if depth == 0 => {
                if k > start {
                    out.push((start, k - 1));
                }
                start = k + 1;
            }
            _ => {}
        }
    }
    if close > start {
        out.push((start, close - 1));
    }
    out
}
