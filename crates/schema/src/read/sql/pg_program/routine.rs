//! `CREATE [OR REPLACE] FUNCTION|PROCEDURE` and `COMMENT ON FUNCTION|PROCEDURE`.
//!
//! pg_dump prints the argument list with `pg_get_function_arguments` and the result with
//! `pg_get_function_result`, so both are kept verbatim; the identity arguments are the argument
//! list without its defaults, which is what `pg_get_function_identity_arguments` prints (modes,
//! names and OUT arguments included). Attributes the model cannot hold are refused by name.

use sqlparser::tokenizer::Token;

use crate::model::{Parallel, Routine, RoutineKind, RoutineOptions, Volatility};

use super::super::super::{Location, ReadError};
use super::super::Reader;
use super::Source;

/// Words that end a `RETURNS` type: the attributes that may follow it.
const ATTRIBUTES: &[&str] = &[
    "LANGUAGE",
    "IMMUTABLE",
    "STABLE",
    "VOLATILE",
    "STRICT",
    "CALLED",
    "RETURNS",
    "SECURITY",
    "EXTERNAL",
    "LEAKPROOF",
    "NOT",
    "PARALLEL",
    "COST",
    "ROWS",
    "SUPPORT",
    "SET",
    "AS",
    "WINDOW",
    "TRANSFORM",
    "BEGIN",
    "RETURN",
];

/// The attributes read so far.
#[derive(Default)]
struct Attributes {
    language: Option<String>,
    volatility: Option<Volatility>,
    strict: Option<bool>,
    security_definer: bool,
    body: Option<String>,
    options: RoutineOptions,
}

/// The argument list without defaults, each argument as written: the identity arguments.
pub(super) fn identity(src: &Source<'_>, open: usize, close: usize) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let (mut first, mut last): (Option<usize>, Option<usize>) = (None, None);
    let mut depth = 0usize;
    let mut in_default = false;
    for k in open + 1..close {
        let token = src.token(k);
        if depth == 0 && token == Some(&Token::Comma) {
            if let (Some(a), Some(b)) = (first, last) {
                parts.push(src.between(a, b).trim());
            }
            (first, last, in_default) = (None, None, false);
            continue;
        }
        if depth == 0 && (token == Some(&Token::Eq) || src.word(k).as_deref() == Some("DEFAULT")) {
            in_default = true;
        }
        match token {
            Some(Token::LParen | Token::LBracket) => depth += 1,
            Some(Token::RParen | Token::RBracket) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if !in_default {
            first.get_or_insert(k);
            last = Some(k);
        }
    }
    if let (Some(a), Some(b)) = (first, last) {
        parts.push(src.between(a, b).trim());
    }
    parts.join(", ")
}

/// The body of a string token as written: a dollar quote's content exactly, a plain string with
/// its doubled quotes undone. `None` for any other token.
fn body_text(src: &Source<'_>, i: usize) -> Option<String> {
    let raw = src.raw(i);
    match src.token(i)? {
        Token::DollarQuotedString(_) => {
            let tag_end = raw[1..].find('$')? + 2;
            let tag = &raw[..tag_end];
            raw.strip_prefix(tag)?.strip_suffix(tag).map(str::to_owned)
        }
        Token::SingleQuotedString(_) if raw.starts_with('\'') => {
            let inner = raw.strip_prefix('\'')?.strip_suffix('\'')?;
            Some(inner.replace("''", "'"))
        }
        _ => None,
    }
}

impl Reader {
    /// `CREATE [OR REPLACE] FUNCTION|PROCEDURE name(args) [RETURNS type] attributes… AS body`.
    pub(in super::super) fn create_routine(
        &mut self,
        src: &Source<'_>,
        at: Location,
    ) -> Result<(), ReadError> {
        let replace = src.word(1).as_deref() == Some("OR") && src.word(2).as_deref() == Some("REPLACE");
        let mut i = if replace { 3 } else { 1 };
        let kind = match src.word(i).as_deref() {
            Some("FUNCTION") => RoutineKind::Function,
            Some("PROCEDURE") => RoutineKind::Procedure,
            Some("AGGREGATE") => return self.create_aggregate(src, i, replace, at),
            _ => return Err(self.expected(src, i, "FUNCTION, PROCEDURE or AGGREGATE", &at)),
        };
        let what = if kind == RoutineKind::Function {
            "function"
        } else {
            "procedure"
        };
        let (name, after) = src
            .name(i + 1)
            .ok_or_else(|| self.expected(src, i + 1, "a routine name", &at))?;
        let name = self.qualified(&name, &at)?;
        self.check_namespace(&name, &at)?;
        if src.token(after) != Some(&Token::LParen) {
            return Err(self.expected(src, after, "(", &at));
        }
        let close = src
            .closing(after)
            .ok_or_else(|| self.expected(src, src.tokens.len(), ")", &at))?;
        let arguments = if close > after + 1 {
            src.between(after + 1, close - 1).trim().to_owned()
        } else {
            String::new()
        };
        let identity_arguments = identity(src, after, close);
        i = close + 1;
        let returns = if src.word(i).as_deref() == Some("RETURNS") {
            let start = i + 1;
            let mut k = start;
            let mut depth = 0usize;
            while let Some(t) = src.token(k) {
                match t {
                    Token::LParen => depth += 1,
                    Token::RParen => depth = depth.saturating_sub(1),
                    _ if depth == 0 && src.word(k).is_some_and(|w| ATTRIBUTES.contains(&w.as_str())) => break,
                    _ => {}
                }
                k += 1;
            }
            if k == start {
                return Err(self.expected(src, start, "a result type", &at));
            }
            i = k;
            Some(src.between(start, k - 1).trim().to_owned())
        } else {
            None
        };
        match (kind, &returns) {
            (RoutineKind::Procedure, Some(_)) => {
                return Err(self.unsupported(&at, "CREATE PROCEDURE … RETURNS (a procedure returns nothing)"));
            }
            (RoutineKind::Function, None) => {
                let what = "CREATE FUNCTION without RETURNS (write the result type the catalog prints)";
                return Err(self.unsupported(&at, what));
            }
            _ => {}
        }
        let attributes = self.attributes(src, i, what, &at)?;
        let o = &attributes.options;
        let function_only = o.parallel.is_some() || o.leakproof || o.cost.is_some() || o.rows.is_some();
        if kind == RoutineKind::Procedure
            && (attributes.volatility.is_some() || attributes.strict.is_some() || function_only)
        {
            return Err(self.unsupported(
                &at,
                "a procedure's volatility, strictness, PARALLEL, LEAKPROOF, COST or ROWS (procedures have none)",
            ));
        }
        let language = attributes
            .language
            .ok_or_else(|| self.unsupported(&at, format!("a {what} without LANGUAGE")))?;
        if matches!(language.as_str(), "c" | "internal") {
            let why = format!("LANGUAGE {language} (a body that names compiled code is not modelled)");
            return Err(self.unsupported(&at, why));
        }
        let body = attributes
            .body
            .ok_or_else(|| self.unsupported(&at, format!("a {what} without an AS body")))?;
        let routine = Routine {
            name,
            kind,
            arguments,
            identity_arguments,
            returns,
            language,
            body,
            volatility: attributes.volatility.unwrap_or_default(),
            strict: attributes.strict.unwrap_or(false),
            security_definer: attributes.security_definer,
            comment: None,
            options: attributes.options,
        };
        let key = routine.key();
        match self.schema.routines.get(&key) {
            Some(_) if !replace => Err(ReadError::Duplicate {
                at,
                what: format!("{what} {key}"),
            }),
            previous => {
                let comment = previous.and_then(|p| p.comment.clone());
                self.schema.routines.insert(key, Routine { comment, ..routine });
                Ok(())
            }
        }
    }

    /// The attributes from token `i` to the end of the statement.
    fn attributes(
        &self,
        src: &Source<'_>,
        mut i: usize,
        what: &str,
        at: &Location,
    ) -> Result<Attributes, ReadError> {
        let mut a = Attributes::default();
        let n = src.tokens.len();
        while i < n {
            let here = self.at_token(src, i, at);
            let refuse = |construct: String| Err(self.unsupported(&here, construct));
            let Some(w) = src.word(i) else {
                return Err(self.expected(src, i, "a routine attribute", at));
            };
            let next = src.word(i + 1);
            let next = next.as_deref();
            i += match (w.as_str(), next) {
                ("LANGUAGE", _) => {
                    let language = match src.token(i + 1) {
                        Some(Token::Word(l)) => l.value.to_lowercase(),
                        Some(Token::SingleQuotedString(l)) => l.to_lowercase(),
                        _ => return Err(self.expected(src, i + 1, "a language name", at)),
                    };
                    a.language = Some(language);
                    2
                }
                ("IMMUTABLE", _) => set(&mut a.volatility, Volatility::Immutable),
                ("STABLE", _) => set(&mut a.volatility, Volatility::Stable),
                ("VOLATILE", _) => set(&mut a.volatility, Volatility::Volatile),
                ("STRICT", _) => set(&mut a.strict, true),
                ("RETURNS", Some("NULL")) => set(&mut a.strict, true) + 4,
                ("CALLED", Some("ON")) => set(&mut a.strict, false) + 3,
                ("EXTERNAL", Some("SECURITY")) => 1,
                ("SECURITY", Some("DEFINER")) => {
                    a.security_definer = true;
                    2
                }
                ("SECURITY", Some("INVOKER")) => {
                    a.security_definer = false;
                    2
                }
                ("NOT", Some("LEAKPROOF")) => {
                    a.options.leakproof = false;
                    2
                }
                ("LEAKPROOF", _) => {
                    a.options.leakproof = true;
                    1
                }
                ("PARALLEL", Some(level @ ("UNSAFE" | "SAFE" | "RESTRICTED"))) => {
                    a.options.parallel = match level {
                        "SAFE" => Some(Parallel::Safe),
                        "RESTRICTED" => Some(Parallel::Restricted),
                        _ => None,
                    };
                    2
                }
                ("COST", _) => {
                    a.options.cost = self.estimate(src, i + 1, 100.0, at)?;
                    2
                }
                ("ROWS", _) => {
                    a.options.rows = self.estimate(src, i + 1, 1000.0, at)?;
                    2
                }
                ("SET", _) => {
                    let (setting, used) = self.setting(src, i, what, at)?;
                    a.options.settings.push(setting);
                    used
                }
                ("AS", _) => {
                    let body = body_text(src, i + 1)
                        .ok_or_else(|| self.expected(src, i + 1, "a quoted body", at))?;
                    if src.token(i + 2) == Some(&Token::Comma) {
                        return refuse("AS 'file', 'symbol' (compiled code is not modelled)".to_owned());
                    }
                    a.body = Some(body);
                    2
                }
                ("BEGIN", _) | ("RETURN", _) => {
                    return refuse(format!(
                        "a SQL-standard {what} body ({w} …; only a quoted AS body is modelled)"
                    ));
                }
                ("WINDOW" | "SUPPORT" | "TRANSFORM", _) => {
                    return refuse(format!("{w} on a {what} (not modelled)"));
                }
                _ => return Err(self.expected(src, i, "a routine attribute", at)),
            };
        }
        Ok(a)
    }

    /// `COMMENT ON FUNCTION|PROCEDURE|ROUTINE name(args) IS 'text' | NULL`: the routine is found
    /// by its identity arguments, or by its name alone when it has no overloads.
    pub(in super::super) fn comment_routine(
        &mut self,
        src: &Source<'_>,
        at: Location,
    ) -> Result<(), ReadError> {
        let (name, after) = src
            .name(3)
            .ok_or_else(|| self.expected(src, 3, "a routine name", &at))?;
        let name = self.qualified(&name, &at)?;
        if src.token(after) != Some(&Token::LParen) {
            return Err(self.expected(src, after, "(", &at));
        }
        let close = src
            .closing(after)
            .ok_or_else(|| self.expected(src, src.tokens.len(), ")", &at))?;
        if src.word(close + 1).as_deref() != Some("IS") || close + 3 != src.tokens.len() {
            return Err(self.expected(src, close + 1, "IS '<comment>'", &at));
        }
        let comment = match src.token(close + 2) {
            Some(Token::SingleQuotedString(s)) => Some(s.clone()),
            _ if src.word(close + 2).as_deref() == Some("NULL") => None,
            _ => return Err(self.expected(src, close + 2, "a string or NULL", &at)),
        };
        let key = crate::model::QualifiedName::new(
            name.schema.clone(),
            format!("{}({})", name.name, identity(src, after, close)),
        );
        let same_name: Vec<_> = self
            .schema
            .routines
            .iter()
            .filter(|(_, r)| r.name == name)
            .map(|(k, _)| k.clone())
            .collect();
        let target = if self.schema.routines.contains_key(&key) {
            Some(key.clone())
        } else if let [only] = same_name.as_slice() {
            Some(only.clone())
        } else {
            None
        };
        match target.and_then(|k| self.schema.routines.get_mut(&k)) {
            Some(routine) => {
                routine.comment = comment;
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("routine {key}"),
            }),
        }
    }
}

/// Records an attribute's value; returns the number of tokens its keyword takes.
fn set<T>(slot: &mut Option<T>, value: T) -> usize {
    *slot = Some(value);
    1
}
