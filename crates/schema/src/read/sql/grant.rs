//! `GRANT` and `REVOKE` of table privileges, as `pg_dump` writes them (see [`super::security`]).

use std::collections::BTreeSet;

use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::model::Privilege;

use super::super::{Location, ReadError};
use super::Reader;
use super::tokens::{keyword, object_name};

/// The object kinds after `ON` that name something other than a table.
const NOT_TABLES: &[&str] = &[
    "SCHEMA",
    "SEQUENCE",
    "FUNCTION",
    "PROCEDURE",
    "ROUTINE",
    "DATABASE",
    "DOMAIN",
    "TYPE",
    "LANGUAGE",
    "LARGE",
    "FOREIGN",
    "TABLESPACE",
    "PARAMETER",
    "ALL",
];

impl Reader {
    /// `GRANT` (`revoke` false) or `REVOKE` of table privileges.
    pub(super) fn grant(
        &mut self,
        tokens: &[TokenWithSpan],
        at: Location,
        revoke: bool,
    ) -> Result<(), ReadError> {
        let verb = if revoke { "REVOKE" } else { "GRANT" };
        let mut i = 1;
        let mut option_only = false;
        if revoke && keyword(tokens.get(1)).as_deref() == Some("GRANT") {
            if keyword(tokens.get(2)).as_deref() != Some("OPTION")
                || keyword(tokens.get(3)).as_deref() != Some("FOR")
            {
                return Err(self.unsupported(&at, "REVOKE GRANT … (expected GRANT OPTION FOR)"));
            }
            option_only = true;
            i = 4;
        }
        // What the privileges are on decides first: only a table's are modelled.
        let Some(on) = (i..tokens.len()).find(|&j| keyword(tokens.get(j)).as_deref() == Some("ON")) else {
            return Err(self.unsupported(&at, format!("{verb} of role membership (roles are out of scope)")));
        };
        let target = keyword(tokens.get(on + 1)).unwrap_or_default();
        if let Some(kind) = NOT_TABLES.iter().find(|k| **k == target) {
            // The refusal names the object: a sequence's or a schema's privileges are the
            // server's to keep (inspection lists them under `unmodelled`).
            let mut j = on + 2;
            let object = object_name(tokens, &mut j).to_string();
            return Err(self.unsupported(
                &at,
                format!("{verb} … ON {kind} {object} (only privileges on tables are modelled)"),
            ));
        }
        let mut privileges = BTreeSet::new();
        loop {
            let w = keyword(tokens.get(i)).unwrap_or_default();
            if w == "ALL" {
                privileges.extend(Privilege::ALL);
                i += 1;
                if keyword(tokens.get(i)).as_deref() == Some("PRIVILEGES") {
                    i += 1;
                }
            } else if let Some(p) = Privilege::from_keyword(&w) {
                privileges.insert(p);
                i += 1;
            } else {
                return Err(self.unsupported(&at, format!("{verb} of privilege {w} (tables do not have it)")));
            }
            match tokens.get(i).map(|t| &t.token) {
                Some(Token::Comma) => i += 1,
                Some(Token::LParen) => {
                    let mut j = if target == "TABLE" { on + 2 } else { on + 1 };
                    let table = object_name(tokens, &mut j).to_string();
                    return Err(self.unsupported(
                        &at,
                        format!("{verb} on columns of {table} (column privileges are not modelled)"),
                    ));
                }
                _ => break,
            }
        }
        if i != on {
            return Err(self.unsupported(&at, format!("{verb} with a privilege list it cannot read")));
        }
        i = on + 1;
        if target == "TABLE" {
            i += 1;
        }
        let mut tables = Vec::new();
        loop {
            tables.push(self.qualified(&object_name(tokens, &mut i), &at)?);
            if tokens.get(i).map(|t| &t.token) != Some(&Token::Comma) {
                break;
            }
            i += 1;
        }
        let direction = if revoke { "FROM" } else { "TO" };
        if keyword(tokens.get(i)).as_deref() != Some(direction) {
            return Err(self.unsupported(&at, format!("{verb} without {direction}")));
        }
        let (roles, mut end) = self.roles(tokens, i + 1, &at)?;
        let mut grant_option = false;
        let rest: Vec<String> = tokens[end..]
            .iter()
            .map(|t| keyword(Some(t)).unwrap_or_default())
            .collect();
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        match rest.as_slice() {
            ["WITH", "GRANT", "OPTION", ..] if !revoke => {
                grant_option = true;
                end += 3;
            }
            _ => {}
        }
        // GRANTED BY names the grantor, which is not modelled (the grant is the same to its
        // grantee); CASCADE and RESTRICT only say what happens to grants made from this one.
        let tail: Vec<String> = tokens[end..]
            .iter()
            .map(|t| keyword(Some(t)).unwrap_or_default())
            .collect();
        let tail_ok = matches!(
            tail.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
            [] | ["GRANTED", "BY", _]
                | ["CASCADE"]
                | ["RESTRICT"]
                | ["GRANTED", "BY", _, "CASCADE" | "RESTRICT"]
        );
        if !tail_ok {
            return Err(self.unsupported(&at, format!("{verb} clause {}", tail.join(" "))));
        }
        for table in tables {
            let security = &mut self.secured_table(&table, &at)?.security;
            for role in &roles {
                if revoke {
                    security.revoke(role, &privileges, option_only);
                } else {
                    security.grant(role, &privileges, grant_option);
                }
            }
        }
        Ok(())
    }
}
