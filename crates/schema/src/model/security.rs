//! PostgreSQL row-level security, policies and table-level grants: what a table lets which role
//! see and do. Held on [`super::Table`] as one [`TableSecurity`], absent from the JSON when empty,
//! so the fingerprint of a schema without any is what it was before they were modelled.
//!
//! Roles themselves are out of scope: a grant or policy names a role by its name, and a role that
//! does not exist is the server's error at apply. The owner's own privileges are not modelled
//! (only what `pg_dump` writes as `GRANT` lines: privileges granted to other roles and `PUBLIC`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The name a grant to every role is kept under (`GRANT … TO PUBLIC`).
pub const PUBLIC: &str = "PUBLIC";

/// A table's row-level security, policies and grants.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableSecurity {
    /// `ENABLE ROW LEVEL SECURITY`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub row_security: bool,
    /// `FORCE ROW LEVEL SECURITY`: the policies apply to the table's owner too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force_row_security: bool,
    /// Policies by name (a policy's name is unique within its table).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policies: BTreeMap<String, Policy>,
    /// Table-level privileges by grantee role name ([`PUBLIC`] for every role).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub grants: BTreeMap<String, Grant>,
}

impl TableSecurity {
    /// Whether the table has no row-level security, policy or grant.
    pub fn is_empty(&self) -> bool {
        *self == TableSecurity::default()
    }

    /// Adds `privileges` for `role`.
    pub fn grant(&mut self, role: &str, privileges: &BTreeSet<Privilege>, grantable: bool) {
        self.grants
            .entry(role.to_owned())
            .or_default()
            .add(privileges, grantable);
    }

    /// Takes `privileges` (or only their grant option) away from `role`; a role left with nothing
    /// is removed. Revoking what was never granted changes nothing.
    pub fn revoke(&mut self, role: &str, privileges: &BTreeSet<Privilege>, grant_option_only: bool) {
        if let Some(g) = self.grants.get_mut(role) {
            g.remove(privileges, grant_option_only);
            if g.privileges.is_empty() {
                self.grants.remove(role);
            }
        }
    }
}

/// The command a policy applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PolicyCommand {
    /// `FOR ALL` (the default).
    #[default]
    All,
    /// `FOR SELECT`.
    Select,
    /// `FOR INSERT`.
    Insert,
    /// `FOR UPDATE`.
    Update,
    /// `FOR DELETE`.
    Delete,
}

impl PolicyCommand {
    /// The keyword after `FOR`.
    pub fn keyword(self) -> &'static str {
        match self {
            PolicyCommand::All => "ALL",
            PolicyCommand::Select => "SELECT",
            PolicyCommand::Insert => "INSERT",
            PolicyCommand::Update => "UPDATE",
            PolicyCommand::Delete => "DELETE",
        }
    }

    /// The command named by `word` (any case).
    pub fn from_keyword(word: &str) -> Option<Self> {
        [Self::All, Self::Select, Self::Insert, Self::Update, Self::Delete]
            .into_iter()
            .find(|c| c.keyword().eq_ignore_ascii_case(word))
    }
}

/// A `CREATE POLICY`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// The policy's name.
    pub name: String,
    /// The command it applies to.
    #[serde(default, skip_serializing_if = "is_all")]
    pub command: PolicyCommand,
    /// `AS RESTRICTIVE` (default PERMISSIVE).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restrictive: bool,
    /// The roles it applies to; empty means `PUBLIC`.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub roles: BTreeSet<String>,
    /// The `USING` expression, canonical ([`crate::normalize::expression`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub using: Option<String>,
    /// The `WITH CHECK` expression, canonical.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

fn is_all(c: &PolicyCommand) -> bool {
    *c == PolicyCommand::All
}

/// A table-level privilege.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Privilege {
    /// `SELECT`.
    Select,
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `TRUNCATE`.
    Truncate,
    /// `REFERENCES`.
    References,
    /// `TRIGGER`.
    Trigger,
    /// `MAINTAIN` (PostgreSQL 17).
    Maintain,
}

impl Privilege {
    /// Every privilege `GRANT ALL` gives on a table of PostgreSQL before 17.
    pub const ALL: [Privilege; 7] = [
        Privilege::Select,
        Privilege::Insert,
        Privilege::Update,
        Privilege::Delete,
        Privilege::Truncate,
        Privilege::References,
        Privilege::Trigger,
    ];

    /// The privilege's keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Insert => "INSERT",
            Privilege::Update => "UPDATE",
            Privilege::Delete => "DELETE",
            Privilege::Truncate => "TRUNCATE",
            Privilege::References => "REFERENCES",
            Privilege::Trigger => "TRIGGER",
            Privilege::Maintain => "MAINTAIN",
        }
    }

    /// The privilege named by `word` (any case).
    pub fn from_keyword(word: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain([Privilege::Maintain])
            .find(|p| p.keyword().eq_ignore_ascii_case(word))
    }
}

/// The privileges one role holds on a table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Grant {
    /// The privileges held.
    pub privileges: BTreeSet<Privilege>,
    /// Those of them held `WITH GRANT OPTION` (a subset of `privileges`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub grantable: BTreeSet<Privilege>,
}

impl Grant {
    /// Adds `privileges`, grantable or not.
    pub fn add(&mut self, privileges: &BTreeSet<Privilege>, grantable: bool) {
        self.privileges.extend(privileges.iter().copied());
        if grantable {
            self.grantable.extend(privileges.iter().copied());
        }
    }

    /// Takes away `privileges`, or only their grant option.
    pub fn remove(&mut self, privileges: &BTreeSet<Privilege>, grant_option_only: bool) {
        self.grantable.retain(|p| !privileges.contains(p));
        if !grant_option_only {
            self.privileges.retain(|p| !privileges.contains(p));
        }
    }
}
