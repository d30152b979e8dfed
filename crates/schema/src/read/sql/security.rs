//! PostgreSQL row-level security, policies and table grants, read from their tokens as `pg_dump`
//! writes them (or a person does):
//! - `ALTER TABLE [IF EXISTS] [ONLY] t ENABLE | DISABLE | FORCE | NO FORCE ROW LEVEL SECURITY`;
//! - `CREATE POLICY p ON t [AS PERMISSIVE | RESTRICTIVE] [FOR cmd] [TO role, …] [USING (e)]
//!   [WITH CHECK (e)]`, the expressions in the canonical form of check constraints;
//! - `GRANT privileges ON [TABLE] t, … TO role, … [WITH GRANT OPTION] [GRANTED BY r]` and
//!   `REVOKE [GRANT OPTION FOR] privileges ON [TABLE] t, … FROM role, … [GRANTED BY r]
//!   [CASCADE | RESTRICT]`, which take back what was granted before them (module `grant`).
//!
//! Refused by name: column privileges, privileges on anything but a table (schemas, sequences,
//! views, routines, types…), role membership (`GRANT role TO role`), and the roles
//! `CURRENT_USER`, `CURRENT_ROLE` and `SESSION_USER`, whose meaning depends on who applies.

use std::collections::BTreeSet;

use sqlparser::ast::Ident;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::model::{Dialect, PUBLIC, Policy, PolicyCommand, QualifiedName};
use crate::normalize::expression;

use super::super::{Location, ReadError};
use super::Reader;
use super::tokens::{keyword, object_name, slice};

/// A statement this module reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `ALTER TABLE … ROW LEVEL SECURITY`.
    RowSecurity,
    /// `CREATE POLICY`.
    Policy,
    /// `GRANT`.
    Grant,
    /// `REVOKE`.
    Revoke,
}

/// Which of this module's statements `tokens` is, if any.
pub(super) fn kind(tokens: &[TokenWithSpan]) -> Option<Kind> {
    let w = |i: usize| keyword(tokens.get(i));
    match (w(0).as_deref(), w(1).as_deref()) {
        (Some("GRANT"), _) => Some(Kind::Grant),
        (Some("REVOKE"), _) => Some(Kind::Revoke),
        (Some("CREATE"), Some("POLICY")) => Some(Kind::Policy),
        (Some("ALTER"), Some("TABLE"))
            if tokens.windows(3).any(|t| {
                (0..3)
                    .map(|k| keyword(t.get(k)))
                    .eq(["ROW", "LEVEL", "SECURITY"].map(|s| Some(s.to_owned())))
            }) =>
        {
            Some(Kind::RowSecurity)
        }
        _ => None,
    }
}

impl Reader {
    /// Reads one statement of `kind`.
    pub(super) fn security(
        &mut self,
        kind: Kind,
        text: &str,
        tokens: &[TokenWithSpan],
        at: Location,
    ) -> Result<(), ReadError> {
        match kind {
            Kind::RowSecurity => self.row_security(tokens, at),
            Kind::Policy => self.create_policy(text, tokens, at),
            Kind::Grant => self.grant(tokens, at, false),
            Kind::Revoke => self.grant(tokens, at, true),
        }
    }

    fn row_security(&mut self, tokens: &[TokenWithSpan], at: Location) -> Result<(), ReadError> {
        let mut i = 2;
        while matches!(keyword(tokens.get(i)).as_deref(), Some("IF" | "EXISTS" | "ONLY")) {
            i += 1;
        }
        let name = self.qualified(&object_name(tokens, &mut i), &at)?;
        let rest: Vec<Option<String>> = tokens[i..].iter().map(|t| keyword(Some(t))).collect();
        let words: Vec<&str> = rest.iter().map(|w| w.as_deref().unwrap_or("")).collect();
        let (enabled, forced) = match words.as_slice() {
            ["ENABLE", "ROW", "LEVEL", "SECURITY"] => (Some(true), None),
            ["DISABLE", "ROW", "LEVEL", "SECURITY"] => (Some(false), None),
            ["FORCE", "ROW", "LEVEL", "SECURITY"] => (None, Some(true)),
            ["NO", "FORCE", "ROW", "LEVEL", "SECURITY"] => (None, Some(false)),
            _ => {
                return Err(self.unsupported(
                    &at,
                    "ALTER TABLE … ROW LEVEL SECURITY together with other clauses (write it as its own statement)",
                ));
            }
        };
        let security = &mut self.secured_table(&name, &at)?.security;
        if let Some(e) = enabled {
            security.row_security = e;
        }
        if let Some(f) = forced {
            security.force_row_security = f;
        }
        Ok(())
    }

    fn create_policy(&mut self, text: &str, tokens: &[TokenWithSpan], at: Location) -> Result<(), ReadError> {
        let policy_name = match tokens.get(2).map(|t| &t.token) {
            Some(Token::Word(w)) => self.ident(&Ident {
                value: w.value.clone(),
                quote_style: w.quote_style,
                span: tokens[2].span,
            }),
            _ => return Err(self.unsupported(&at, "CREATE POLICY without a name")),
        };
        if keyword(tokens.get(3)).as_deref() != Some("ON") {
            return Err(self.unsupported(&at, format!("CREATE POLICY {policy_name} without ON")));
        }
        let mut i = 4;
        let table = self.qualified(&object_name(tokens, &mut i), &at)?;
        let mut policy = Policy {
            name: policy_name.clone(),
            command: PolicyCommand::All,
            restrictive: false,
            roles: BTreeSet::new(),
            using: None,
            check: None,
        };
        let what = |rest: &str| format!("clause {rest} of policy {policy_name}");
        while i < tokens.len() {
            let w = keyword(tokens.get(i)).unwrap_or_default();
            let next = keyword(tokens.get(i + 1)).unwrap_or_default();
            match (w.as_str(), next.as_str()) {
                ("AS", "PERMISSIVE" | "RESTRICTIVE") => {
                    policy.restrictive = next == "RESTRICTIVE";
                    i += 2;
                }
                ("FOR", cmd) if PolicyCommand::from_keyword(cmd).is_some() => {
                    policy.command = PolicyCommand::from_keyword(cmd).unwrap_or_default();
                    i += 2;
                }
                ("TO", _) => {
                    i += 1;
                    let (roles, end) = self.roles(tokens, i, &at)?;
                    i = end;
                    // PostgreSQL keeps only PUBLIC when it is named among others.
                    policy.roles = if roles.contains(PUBLIC) {
                        BTreeSet::new()
                    } else {
                        roles
                    };
                }
                ("USING", _) => {
                    let (e, end) = self.parenthesized(text, tokens, i + 1, &at)?;
                    policy.using = Some(e);
                    i = end;
                }
                ("WITH", "CHECK") => {
                    let (e, end) = self.parenthesized(text, tokens, i + 2, &at)?;
                    policy.check = Some(e);
                    i = end;
                }
                _ => return Err(self.unsupported(&at, what(&slice(text, &tokens[i..])))),
            }
        }
        let policies = &mut self.secured_table(&table, &at)?.security.policies;
        if policies.contains_key(&policy_name) {
            return Err(ReadError::Duplicate {
                at,
                what: format!("policy {policy_name} on {table}"),
            });
        }
        policies.insert(policy_name, policy);
        Ok(())
    }

    /// `( expression )` starting at `tokens[i]`: the canonical expression and the index after it.
    fn parenthesized(
        &self,
        text: &str,
        tokens: &[TokenWithSpan],
        i: usize,
        at: &Location,
    ) -> Result<(String, usize), ReadError> {
        if tokens.get(i).map(|t| &t.token) != Some(&Token::LParen) {
            return Err(self.unsupported(at, "a policy expression without parentheses"));
        }
        let mut depth = 0usize;
        for (j, t) in tokens.iter().enumerate().skip(i) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = slice(text, &tokens[i + 1..j]);
                        return Ok((expression(Dialect::Postgres, &inner), j + 1));
                    }
                }
                _ => {}
            }
        }
        Err(self.unsupported(at, "a policy expression without its closing parenthesis"))
    }

    /// Role names from `tokens[i]`, separated by commas; stops at the first token that is not a
    /// role. `PUBLIC` (unquoted) is [`PUBLIC`]; `GROUP` before a name is noise.
    pub(super) fn roles(
        &self,
        tokens: &[TokenWithSpan],
        mut i: usize,
        at: &Location,
    ) -> Result<(BTreeSet<String>, usize), ReadError> {
        let mut roles = BTreeSet::new();
        loop {
            if keyword(tokens.get(i)).as_deref() == Some("GROUP") {
                i += 1;
            }
            let Some(TokenWithSpan {
                token: Token::Word(w),
                span,
            }) = tokens.get(i)
            else {
                return Err(self.unsupported(at, "a role list without a role"));
            };
            let upper = w.value.to_ascii_uppercase();
            let current = matches!(upper.as_str(), "CURRENT_USER" | "CURRENT_ROLE" | "SESSION_USER");
            if w.quote_style.is_none() && current {
                return Err(self.unsupported(
                    at,
                    format!("role {upper} (it names whoever applies; name the role instead)"),
                ));
            }
            roles.insert(if w.quote_style.is_none() && upper == PUBLIC {
                PUBLIC.to_owned()
            } else {
                self.ident(&Ident {
                    value: w.value.clone(),
                    quote_style: w.quote_style,
                    span: *span,
                })
            });
            i += 1;
            if tokens.get(i).map(|t| &t.token) != Some(&Token::Comma) {
                return Ok((roles, i));
            }
            i += 1;
        }
    }

    /// The table `name`, which must be declared: privileges, policies and row-level security on
    /// views and other relations are not modelled.
    pub(super) fn secured_table(
        &mut self,
        name: &QualifiedName,
        at: &Location,
    ) -> Result<&mut crate::model::Table, ReadError> {
        if self.schema.views.contains_key(name) {
            return Err(self.unsupported(
                at,
                format!("privileges and policies on view {name} (only tables' are modelled)"),
            ));
        }
        self.schema
            .tables
            .get_mut(name)
            .ok_or_else(|| ReadError::BadReference {
                at: at.clone(),
                what: format!("table {name}"),
            })
    }
}
