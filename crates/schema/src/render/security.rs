//! PostgreSQL row-level security, policy and grant statements. Policies that go or are rebuilt
//! are dropped first of all (a policy may read views and routines, and PostgreSQL refuses to
//! retype a column a policy reads); everything else is created last, after the tables, columns,
//! views and routines it may read exist, and before the plan's removals (so a policy altered away
//! from a column no longer holds it when the column is dropped).
//!
//! Severities: enabling or forcing row-level security, creating or altering a policy, and any
//! GRANT or REVOKE are warnings (they change who sees what; the operator reports them as privilege
//! changes). Dropping a policy and disabling row-level security are destructive: they silently
//! change which rows every role can read or write, which needs the same explicit permission as
//! losing data.

use std::collections::BTreeSet;

use super::sql::Sql;
use super::{Out, stmt};
use crate::diff::{DiffCategory as C, GrantRef, SchemaDiff};
use crate::model::{Dialect, PUBLIC, Policy, PolicyCommand, Privilege, QualifiedName, Table};
use crate::plan::{PlannedStatement, Severity};

const SQL: Sql = Sql {
    dialect: Dialect::Postgres,
};

/// Drops removed policies and those rebuilt.
pub(super) fn drops(diff: &SchemaDiff, out: &mut Out) {
    for p in &diff.policies_removed {
        out.push(
            C::RlsPoliciesRemoved,
            drop_policy(
                &p.table,
                &p.policy,
                "drops a policy no longer declared: who sees which rows changes",
            ),
        );
    }
    for c in diff.policies_modified.iter().filter(|c| c.rebuild) {
        out.push(
            C::RlsPoliciesModified,
            drop_policy(
                &c.table,
                &c.from,
                "a policy's command or kind cannot be altered, or it reads a column being retyped: \
                 it is dropped and created again",
            ),
        );
    }
}

/// Row-level security, policies and grants of new tables and changed ones.
pub(super) fn creates(diff: &SchemaDiff, out: &mut Out) {
    for t in &diff.tables_added {
        out.extend(C::TablesAdded, of_new_table(t));
    }
    for c in &diff.row_security_modified {
        let name = SQL.qualified(&c.table);
        if c.enabled_changes {
            out.push(
                c.enabled_category(),
                if c.enabled {
                    enable(&name)
                } else {
                    stmt(
                        format!("ALTER TABLE {name} DISABLE ROW LEVEL SECURITY"),
                        Severity::Destructive,
                        "disables row-level security: every policy of the table stops applying",
                    )
                },
            );
        }
        if c.forced_changes {
            out.push(
                c.forced_category(),
                if c.forced {
                    force(&name)
                } else {
                    stmt(
                        format!("ALTER TABLE {name} NO FORCE ROW LEVEL SECURITY"),
                        Severity::Warning,
                        "exempts the table's owner from its policies",
                    )
                },
            );
        }
    }
    for c in &diff.policies_modified {
        let s = if c.rebuild {
            create_policy(&c.table, &c.to)
        } else {
            alter_policy(&c.table, &c.from, &c.to)
        };
        out.push(C::RlsPoliciesModified, s);
    }
    for p in &diff.policies_added {
        out.push(C::RlsPoliciesAdded, create_policy(&p.table, &p.policy));
    }
    for g in &diff.grants_removed {
        out.push(C::GrantsRemoved, revoke(g));
    }
    for g in &diff.grants_added {
        out.push(C::GrantsAdded, grant(g));
    }
}

fn of_new_table(t: &Table) -> Vec<PlannedStatement> {
    let s = &t.security;
    let name = SQL.qualified(&t.name);
    let mut out = Vec::new();
    if s.row_security {
        out.push(enable(&name));
    }
    if s.force_row_security {
        out.push(force(&name));
    }
    out.extend(s.policies.values().map(|p| create_policy(&t.name, p)));
    for (role, g) in &s.grants {
        let plain: BTreeSet<Privilege> = &g.privileges - &g.grantable;
        for (privileges, grant_option) in [(plain, false), (g.grantable.clone(), true)] {
            if !privileges.is_empty() {
                out.push(grant(&GrantRef {
                    table: t.name.clone(),
                    role: role.clone(),
                    privileges,
                    grant_option,
                }));
            }
        }
    }
    out
}

fn enable(name: &str) -> PlannedStatement {
    stmt(
        format!("ALTER TABLE {name} ENABLE ROW LEVEL SECURITY"),
        Severity::Warning,
        "enables row-level security: roles other than the owner see only the rows a policy allows",
    )
}

fn force(name: &str) -> PlannedStatement {
    stmt(
        format!("ALTER TABLE {name} FORCE ROW LEVEL SECURITY"),
        Severity::Warning,
        "applies the table's policies to its owner too",
    )
}

/// A role as SQL: `PUBLIC` is the keyword, any other name a quoted identifier.
fn role(name: &str) -> String {
    if name == PUBLIC {
        PUBLIC.to_owned()
    } else {
        SQL.ident(name)
    }
}

fn roles(p: &Policy) -> String {
    if p.roles.is_empty() {
        PUBLIC.to_owned()
    } else {
        p.roles.iter().map(|r| role(r)).collect::<Vec<_>>().join(", ")
    }
}

/// The text of `CREATE POLICY` for `p` on `table`.
pub fn create_policy_statement(table: &QualifiedName, p: &Policy) -> String {
    let mut s = format!("CREATE POLICY {} ON {}", SQL.ident(&p.name), SQL.qualified(table));
    if p.restrictive {
        s.push_str(" AS RESTRICTIVE");
    }
    if p.command != PolicyCommand::All {
        s.push_str(&format!(" FOR {}", p.command.keyword()));
    }
    s.push_str(&format!(" TO {}", roles(p)));
    if let Some(e) = &p.using {
        s.push_str(&format!(" USING ({e})"));
    }
    if let Some(e) = &p.check {
        s.push_str(&format!(" WITH CHECK ({e})"));
    }
    s
}

fn create_policy(table: &QualifiedName, p: &Policy) -> PlannedStatement {
    stmt(
        create_policy_statement(table, p),
        Severity::Warning,
        "creates a row-level security policy: which rows roles see or write changes",
    )
}

fn drop_policy(table: &QualifiedName, p: &Policy, reason: &str) -> PlannedStatement {
    let s = format!("DROP POLICY {} ON {}", SQL.ident(&p.name), SQL.qualified(table));
    stmt(s, Severity::Destructive, reason)
}

/// `ALTER POLICY … TO … USING … WITH CHECK …`, naming only what changes (a policy that loses an
/// expression is rebuilt instead: [`crate::diff::PolicyChange::rebuild`]).
fn alter_policy(table: &QualifiedName, from: &Policy, to: &Policy) -> PlannedStatement {
    let mut s = format!("ALTER POLICY {} ON {}", SQL.ident(&to.name), SQL.qualified(table));
    if from.roles != to.roles {
        s.push_str(&format!(" TO {}", roles(to)));
    }
    if let Some(e) = to.using.as_ref().filter(|_| from.using != to.using) {
        s.push_str(&format!(" USING ({e})"));
    }
    if let Some(e) = to.check.as_ref().filter(|_| from.check != to.check) {
        s.push_str(&format!(" WITH CHECK ({e})"));
    }
    stmt(
        s,
        Severity::Warning,
        "alters a row-level security policy: which rows roles see or write changes",
    )
}

fn privileges(g: &GrantRef) -> String {
    g.privileges
        .iter()
        .map(|p| p.keyword())
        .collect::<Vec<_>>()
        .join(", ")
}

fn grant(g: &GrantRef) -> PlannedStatement {
    let option = if g.grant_option { " WITH GRANT OPTION" } else { "" };
    let s = format!(
        "GRANT {} ON TABLE {} TO {}{option}",
        privileges(g),
        SQL.qualified(&g.table),
        role(&g.role)
    );
    stmt(s, Severity::Warning, "grants privileges on a table")
}

fn revoke(g: &GrantRef) -> PlannedStatement {
    let option = if g.grant_option { "GRANT OPTION FOR " } else { "" };
    let s = format!(
        "REVOKE {option}{} ON TABLE {} FROM {}",
        privileges(g),
        SQL.qualified(&g.table),
        role(&g.role)
    );
    stmt(s, Severity::Warning, "revokes privileges on a table")
}
