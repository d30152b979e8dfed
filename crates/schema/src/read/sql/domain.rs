//! PostgreSQL `CREATE DOMAIN name [AS] type [COLLATE c] [DEFAULT expr] [[CONSTRAINT n] NOT NULL
//! | NULL | CHECK (expr)]…`, read from its tokens (sqlparser does not parse it), as `pg_dump`
//! writes it or as a person does. An unnamed check gets the server's name, `<domain>_check`
//! (then `_check1`, `_check2`, …).

use std::collections::BTreeMap;

use sqlparser::ast::{Ident, ObjectName};
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::model::{DefaultValue, Domain, Literal};
use crate::normalize::{default_value, domain_base, domain_check};

use super::super::{Location, ReadError};
use super::Reader;
use super::tokens::{keyword, object_name, slice};

/// Whether the statement starts `CREATE DOMAIN`.
pub(super) fn is_create_domain(tokens: &[TokenWithSpan]) -> bool {
    matches!(
        (
            keyword(tokens.first()).as_deref(),
            keyword(tokens.get(1)).as_deref()
        ),
        (Some("CREATE"), Some("DOMAIN"))
    )
}

/// Words that start a clause after the base type.
const CLAUSES: &[&str] = &["COLLATE", "DEFAULT", "NOT", "NULL", "CONSTRAINT", "CHECK"];

impl Reader {
    /// Reads one `CREATE DOMAIN` statement.
    pub(super) fn create_domain(
        &mut self,
        text: &str,
        tokens: &[TokenWithSpan],
        at: Location,
    ) -> Result<(), ReadError> {
        let mut i = 2;
        let name = self.qualified(&object_name(tokens, &mut i), &at)?;
        self.check_namespace(&name, &at)?;
        if keyword(tokens.get(i)).as_deref() == Some("AS") {
            i += 1;
        }
        // Every clause runs to the next clause word outside parentheses.
        let mut clauses: Vec<(usize, usize)> = Vec::new();
        let mut depth = 0usize;
        let mut start = i;
        for (j, t) in tokens.iter().enumerate().skip(i) {
            match &t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth = depth.saturating_sub(1),
                _ => {}
            }
            let at_clause = depth == 0 && keyword(Some(t)).is_some_and(|w| CLAUSES.contains(&w.as_str()));
            // `NOT NULL` and `CONSTRAINT n CHECK` are one clause each.
            let continues = matches!(keyword(tokens.get(j.wrapping_sub(1))).as_deref(), Some("NOT"))
                || (j >= 2 && keyword(tokens.get(j - 2)).as_deref() == Some("CONSTRAINT"));
            if at_clause && j > start && !continues {
                clauses.push((start, j));
                start = j;
            }
        }
        clauses.push((start, tokens.len()));
        let (base_from, base_to) = clauses[0];
        if base_to <= base_from {
            return Err(self.unsupported(&at, format!("CREATE DOMAIN {name} without a type")));
        }
        let mut domain = Domain {
            name: name.clone(),
            base: domain_base(&slice(text, &tokens[base_from..base_to])),
            collation: None,
            default: None,
            not_null: false,
            checks: BTreeMap::new(),
            comment: None,
        };
        for &(from, to) in &clauses[1..] {
            let clause = &tokens[from..to];
            let rest = |n: usize| slice(text, clause.get(n..).unwrap_or(&[]));
            let mut constraint = None;
            let mut body = clause;
            if keyword(clause.first()).as_deref() == Some("CONSTRAINT") {
                constraint = match clause.get(1).map(|t| &t.token) {
                    Some(Token::Word(w)) => Some(self.ident(&Ident {
                        value: w.value.clone(),
                        quote_style: w.quote_style,
                        span: clause[1].span,
                    })),
                    _ => {
                        return Err(
                            self.unsupported(&at, format!("a constraint of domain {name} without a name"))
                        );
                    }
                };
                body = clause.get(2..).unwrap_or(&[]);
            }
            let offset = clause.len() - body.len();
            match keyword(body.first()).as_deref() {
                Some("COLLATE") => {
                    let written = rest(offset + 1);
                    let plain = written
                        .strip_prefix("pg_catalog.")
                        .unwrap_or(&written)
                        .trim_matches('"');
                    if plain.contains('.') || plain.contains('"') {
                        return Err(self.unsupported(
                            &at,
                            format!("collation {written} of domain {name} (collations outside pg_catalog are not modelled)"),
                        ));
                    }
                    domain.collation = Some(plain.to_owned());
                }
                Some("DEFAULT") => {
                    let expr = rest(offset + 1);
                    domain.default = match default_value(self.dialect, &expr) {
                        _ if expr.is_empty() => None,
                        DefaultValue::Literal(Literal::Null) => None,
                        other => Some(other),
                    };
                }
                Some("NOT") => domain.not_null = true,
                Some("NULL") => domain.not_null = false,
                Some("CHECK") => {
                    let check = constraint.unwrap_or_else(|| unnamed_check(&domain));
                    domain.checks.insert(check, domain_check(&rest(offset)));
                }
                _ => return Err(self.unsupported(&at, format!("clause {} of domain {name}", rest(0)))),
            }
        }
        if self.schema.domains.contains_key(&name) || self.schema.enums.contains_key(&name) {
            return Err(ReadError::Duplicate {
                at,
                what: format!("type {name}"),
            });
        }
        self.schema.domains.insert(name, domain);
        Ok(())
    }

    /// `COMMENT ON DOMAIN`.
    pub(super) fn domain_comment(
        &mut self,
        name: &ObjectName,
        comment: Option<String>,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(name, &at)?;
        match self.schema.domains.get_mut(&q) {
            Some(d) => {
                d.comment = comment;
                Ok(())
            }
            None => Err(ReadError::BadReference {
                at,
                what: format!("domain {q}"),
            }),
        }
    }
}

/// The name PostgreSQL gives a domain's next unnamed check.
fn unnamed_check(domain: &Domain) -> String {
    let base = format!("{}_check", domain.name.name);
    (0..)
        .map(|n: u32| {
            if n == 0 {
                base.clone()
            } else {
                format!("{base}{n}")
            }
        })
        .find(|c| !domain.checks.contains_key(c))
        .unwrap_or(base)
}
