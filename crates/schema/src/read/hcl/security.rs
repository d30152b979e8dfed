//! Row-level security, policies and grants inside a `table` block (PostgreSQL):
//!
//! ```hcl
//! row_security {
//!   enabled = true
//!   force   = true
//! }
//! policy "own_rows" {
//!   for   = SELECT              # ALL (default), SELECT, INSERT, UPDATE, DELETE
//!   as    = RESTRICTIVE         # PERMISSIVE (default)
//!   to    = ["reader"]          # default: PUBLIC
//!   using = "owner = CURRENT_USER"
//!   check = "owner = CURRENT_USER"
//! }
//! grant "reader" {
//!   privileges = ["SELECT", "INSERT"]  # or ["ALL"]
//!   grantable  = ["SELECT"]            # held WITH GRANT OPTION
//! }
//! ```
//!
//! A grant's label is the role's name as the server stores it (`PUBLIC` for every role).

use std::collections::BTreeSet;

use hcl_edit::Span;
use hcl_edit::structure::Block;

use crate::model::{Dialect, PUBLIC, Policy, PolicyCommand, Privilege, Table};
use crate::normalize::expression;

use super::super::ReadError;
use super::Reader;

impl Reader<'_> {
    /// Reads a `row_security`, `policy` or `grant` block of `table`.
    pub(super) fn security_block(&self, table: &mut Table, b: &Block) -> Result<(), ReadError> {
        let kind = b.ident.as_str();
        if self.dialect != Dialect::Postgres {
            return Err(self.unsupported(b.span(), format!("block `{kind}` on MySQL")));
        }
        let owner = format!("{kind} of table {}", table.name);
        let (mut attrs, inner) = self.split(&owner, &b.body)?;
        self.no_blocks(&inner, &owner)?;
        let security = &mut table.security;
        match kind {
            "row_security" => {
                if !b.labels.is_empty() {
                    return Err(self.invalid(b.span(), "row_security takes no label".to_owned()));
                }
                if security.row_security || security.force_row_security {
                    return Err(ReadError::Duplicate {
                        at: self.at(b.span()),
                        what: format!("row_security of {}", table.name),
                    });
                }
                let flag = |key: &str, attrs: &mut super::Attrs<'_>| {
                    attrs.take(key).map(|a| self.boolean(&a.value)).transpose()
                };
                security.row_security = flag("enabled", &mut attrs)?.unwrap_or(true);
                security.force_row_security = flag("force", &mut attrs)?.unwrap_or(false);
            }
            "policy" => {
                let name = self.label(b)?;
                let command = match attrs.take("for") {
                    Some(a) => {
                        let w = self.keyword(&a.value)?;
                        PolicyCommand::from_keyword(&w).ok_or_else(|| {
                            self.invalid(a.value.span(), format!("unknown policy command {w}"))
                        })?
                    }
                    None => PolicyCommand::All,
                };
                let restrictive = match attrs.take("as") {
                    Some(a) => match self.keyword(&a.value)?.as_str() {
                        "PERMISSIVE" => false,
                        "RESTRICTIVE" => true,
                        other => {
                            return Err(self.invalid(a.value.span(), format!("unknown policy kind {other}")));
                        }
                    },
                    None => false,
                };
                let roles: BTreeSet<String> = match attrs.take("to") {
                    Some(a) => self.strings(&a.value)?.into_iter().collect(),
                    None => BTreeSet::new(),
                };
                let text = |key: &str, attrs: &mut super::Attrs<'_>| {
                    attrs
                        .take(key)
                        .map(|a| self.string(&a.value).map(|t| expression(self.dialect, &t)))
                        .transpose()
                };
                let using = text("using", &mut attrs)?;
                let check = text("check", &mut attrs)?;
                let policy = Policy {
                    name: name.clone(),
                    command,
                    restrictive,
                    roles: if roles.contains(PUBLIC) {
                        BTreeSet::new()
                    } else {
                        roles
                    },
                    using,
                    check,
                };
                if security.policies.insert(name.clone(), policy).is_some() {
                    return Err(ReadError::Duplicate {
                        at: self.at(b.span()),
                        what: format!("policy {name} on {}", table.name),
                    });
                }
            }
            _ => {
                let role = self.label(b)?;
                let list =
                    |key: &str, attrs: &mut super::Attrs<'_>| -> Result<BTreeSet<Privilege>, ReadError> {
                        let Some(a) = attrs.take(key) else {
                            return Ok(BTreeSet::new());
                        };
                        let mut out = BTreeSet::new();
                        for w in self.strings(&a.value)? {
                            if w.eq_ignore_ascii_case("ALL") {
                                out.extend(Privilege::ALL);
                            } else {
                                out.insert(Privilege::from_keyword(&w).ok_or_else(|| {
                                    self.invalid(a.value.span(), format!("unknown table privilege {w}"))
                                })?);
                            }
                        }
                        Ok(out)
                    };
                let privileges = list("privileges", &mut attrs)?;
                let grantable = list("grantable", &mut attrs)?;
                if privileges.is_empty() && grantable.is_empty() {
                    return Err(self.invalid(b.span(), format!("grant {role} needs `privileges`")));
                }
                if security.grants.contains_key(&role) {
                    return Err(ReadError::Duplicate {
                        at: self.at(b.span()),
                        what: format!("grant to {role} on {}", table.name),
                    });
                }
                security.grant(&role, &privileges, false);
                security.grant(&role, &grantable, true);
            }
        }
        self.done(attrs)
    }
}
