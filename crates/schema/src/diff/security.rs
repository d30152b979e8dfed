//! Row-level security, policies and grants of a table that exists on both sides (a new table's
//! come with it, a dropped table's go with it).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::{ColumnAspect, DiffCategory, SchemaDiff};
use crate::model::{Grant, Policy, Privilege, QualifiedName, Table};

/// A change of a table's `ROW LEVEL SECURITY` switches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowSecurityChange {
    /// The table.
    pub table: QualifiedName,
    /// The desired `ENABLE`/`DISABLE`.
    pub enabled: bool,
    /// The desired `FORCE`/`NO FORCE`.
    pub forced: bool,
    /// Whether ENABLE/DISABLE changes.
    pub enabled_changes: bool,
    /// Whether FORCE/NO FORCE changes.
    pub forced_changes: bool,
}

impl RowSecurityChange {
    /// The category of its ENABLE/DISABLE part.
    pub fn enabled_category(&self) -> DiffCategory {
        if self.enabled {
            DiffCategory::RlsEnabledTablesAdded
        } else {
            DiffCategory::RlsEnabledTablesRemoved
        }
    }

    /// The category of its FORCE/NO FORCE part.
    pub fn forced_category(&self) -> DiffCategory {
        if self.forced {
            DiffCategory::RlsForceAdded
        } else {
            DiffCategory::RlsForceRemoved
        }
    }
}

/// A policy of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRef {
    /// The table.
    pub table: QualifiedName,
    /// The policy.
    pub policy: Policy,
}

/// A policy whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyChange {
    /// The table.
    pub table: QualifiedName,
    /// The actual policy.
    pub from: Policy,
    /// The desired policy.
    pub to: Policy,
    /// Whether it is dropped before the table changes and created after them: its command or
    /// kind cannot be altered, `ALTER POLICY` cannot remove an expression, and PostgreSQL refuses
    /// to retype a column a policy reads. Otherwise `ALTER POLICY` changes roles and expressions
    /// in place.
    pub rebuild: bool,
}

/// Privileges granted to or revoked from one role on one table, in one statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRef {
    /// The table.
    pub table: QualifiedName,
    /// The grantee ([`crate::model::PUBLIC`] for every role).
    pub role: String,
    /// The privileges.
    pub privileges: BTreeSet<Privilege>,
    /// Granted: `WITH GRANT OPTION`; revoked: only `GRANT OPTION FOR` them.
    pub grant_option: bool,
}

/// Adds the security differences between `want` and `have` (the same table) to `d`.
pub(super) fn diff_security(want: &Table, have: &Table, d: &mut SchemaDiff) {
    let name = &want.name;
    let (w, h) = (&want.security, &have.security);
    let enabled_changes = w.row_security != h.row_security;
    let forced_changes = w.force_row_security != h.force_row_security;
    if enabled_changes || forced_changes {
        d.row_security_modified.push(RowSecurityChange {
            table: name.clone(),
            enabled: w.row_security,
            forced: w.force_row_security,
            enabled_changes,
            forced_changes,
        });
    }
    let retyped: Vec<&str> = d
        .columns_modified
        .iter()
        .filter(|c| c.table == *name)
        .filter(|c| {
            c.changes
                .iter()
                .any(|a| matches!(a, ColumnAspect::Type | ColumnAspect::Collation))
        })
        .map(|c| c.to.name.as_str())
        .collect();
    for (policy_name, policy) in &w.policies {
        let old = h.policies.get(policy_name);
        let reads_retyped = old.is_some_and(|o| retyped.iter().any(|c| reads_column(o, c)));
        match old {
            None => d.policies_added.push(PolicyRef {
                table: name.clone(),
                policy: policy.clone(),
            }),
            Some(old) if !super::loose::same_policy(old, policy) || reads_retyped => {
                d.policies_modified.push(PolicyChange {
                    table: name.clone(),
                    from: old.clone(),
                    to: policy.clone(),
                    rebuild: old.command != policy.command
                        || old.restrictive != policy.restrictive
                        || (old.using.is_some() && policy.using.is_none())
                        || (old.check.is_some() && policy.check.is_none())
                        || reads_retyped,
                });
            }
            Some(_) => {}
        }
    }
    for (policy_name, policy) in &h.policies {
        if !w.policies.contains_key(policy_name) {
            d.policies_removed.push(PolicyRef {
                table: name.clone(),
                policy: policy.clone(),
            });
        }
    }
    let empty = Grant::default();
    let roles: BTreeSet<&String> = w.grants.keys().chain(h.grants.keys()).collect();
    for role in roles {
        let wg = w.grants.get(role).unwrap_or(&empty);
        let hg = h.grants.get(role).unwrap_or(&empty);
        let push = |list: &mut Vec<GrantRef>, privileges: BTreeSet<Privilege>, grant_option: bool| {
            if !privileges.is_empty() {
                list.push(GrantRef {
                    table: name.clone(),
                    role: role.clone(),
                    privileges,
                    grant_option,
                });
            }
        };
        let plain = &(&wg.privileges - &hg.privileges) - &wg.grantable;
        push(&mut d.grants_added, plain, false);
        push(&mut d.grants_added, &wg.grantable - &hg.grantable, true);
        push(&mut d.grants_removed, &hg.privileges - &wg.privileges, false);
        let option_only = &(&hg.grantable - &wg.grantable) & &wg.privileges;
        push(&mut d.grants_removed, option_only, true);
    }
}

/// Whether a policy's expressions name `column` as a word (a conservative reading: a word that
/// happens to match only rebuilds a policy that did not need it).
fn reads_column(policy: &Policy, column: &str) -> bool {
    [&policy.using, &policy.check].into_iter().flatten().any(|e| {
        e.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .any(|w| w.trim_matches('"') == column)
            || e.contains(&format!("\"{column}\""))
    })
}

impl SchemaDiff {
    /// The tables whose security the diff changes, with the category that touches each.
    pub(super) fn security_touched(&self) -> Vec<(QualifiedName, DiffCategory)> {
        let mut out = Vec::new();
        for c in &self.row_security_modified {
            if c.enabled_changes {
                out.push((c.table.clone(), c.enabled_category()));
            }
            if c.forced_changes {
                out.push((c.table.clone(), c.forced_category()));
            }
        }
        out.extend(
            self.policies_added
                .iter()
                .map(|p| (p.table.clone(), DiffCategory::RlsPoliciesAdded)),
        );
        out.extend(
            self.policies_modified
                .iter()
                .map(|p| (p.table.clone(), DiffCategory::RlsPoliciesModified)),
        );
        out.extend(
            self.policies_removed
                .iter()
                .map(|p| (p.table.clone(), DiffCategory::RlsPoliciesRemoved)),
        );
        out.extend(
            self.grants_added
                .iter()
                .map(|g| (g.table.clone(), DiffCategory::GrantsAdded)),
        );
        out.extend(
            self.grants_removed
                .iter()
                .map(|g| (g.table.clone(), DiffCategory::GrantsRemoved)),
        );
        out
    }
}
