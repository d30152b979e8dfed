//! PostgreSQL domain statements: created after the enums (a domain may be over one) and before
//! routines and tables that use them, dropped after the tables.

use super::sql::Sql;
use super::{Out, stmt};
use crate::diff::{DiffCategory as C, DomainChange, SchemaDiff};
use crate::model::{Dialect, Domain};
use crate::plan::{PlannedStatement, Severity};

const SQL: Sql = Sql {
    dialect: Dialect::Postgres,
};

/// Creates the domains added and alters the ones changed: before the routines (`late` false)
/// those whose checks and default call no routine the plan creates, after them (`late` true) the
/// others, since a routine may take a domain and a domain's check may call a routine.
pub(super) fn creates(diff: &SchemaDiff, out: &mut Out, late: bool) {
    let calls = |d: &Domain| calls_new_routine(diff, d) == late;
    for d in diff.domains_added.iter().filter(|d| calls(d)) {
        out.push(
            C::DomainsAdded,
            stmt(create(d), Severity::Safe, "creates a domain"),
        );
        if d.comment.is_some() {
            out.push(C::DomainsAdded, comment(d));
        }
    }
    for c in diff.domains_modified.iter().filter(|c| calls(&c.to)) {
        out.extend(C::DomainsModified, alter(c));
    }
}

/// Whether a check or the default of `d` calls a routine the plan creates (its name followed by
/// `(`, as a word of its own).
fn calls_new_routine(diff: &SchemaDiff, d: &Domain) -> bool {
    let mut texts: Vec<String> = d.checks.values().map(|c| c.to_ascii_lowercase()).collect();
    if let Some(crate::model::DefaultValue::Expression(e)) = &d.default {
        texts.push(e.to_ascii_lowercase());
    }
    diff.routines_added.iter().any(|r| {
        let name = format!("{}(", r.name.name.to_ascii_lowercase());
        texts.iter().any(|t| {
            t.match_indices(&name).any(|(at, _)| {
                !t[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
            })
        })
    })
}

/// Drops the domains no longer declared.
pub(super) fn drops(diff: &SchemaDiff, out: &mut Out) {
    for d in &diff.domains_removed {
        let s = stmt(
            format!("DROP DOMAIN {}", SQL.qualified(&d.name)),
            Severity::Destructive,
            "drops a domain no longer declared",
        );
        out.push(C::DomainsRemoved, s);
    }
}

fn create(d: &Domain) -> String {
    let mut s = format!("CREATE DOMAIN {} AS {}", SQL.qualified(&d.name), d.base);
    if let Some(c) = &d.collation {
        s.push_str(&format!(" COLLATE {}", SQL.ident(c)));
    }
    if let Some(v) = &d.default {
        s.push_str(&format!(" DEFAULT {}", SQL.default(v)));
    }
    if d.not_null {
        s.push_str(" NOT NULL");
    }
    for (name, check) in &d.checks {
        s.push_str(&format!("\n    CONSTRAINT {} CHECK ({check})", SQL.ident(name)));
    }
    s
}

fn comment(d: &Domain) -> PlannedStatement {
    let text = d
        .comment
        .as_deref()
        .map_or_else(|| "NULL".to_owned(), |c| SQL.string(c));
    let s = format!("COMMENT ON DOMAIN {} IS {text}", SQL.qualified(&d.name));
    stmt(s, Severity::Safe, "sets a domain comment")
}

fn alter(c: &DomainChange) -> Vec<PlannedStatement> {
    let name = SQL.qualified(&c.to.name);
    if !c.alterable() {
        let reason = "a domain's base type or collation cannot change in place: it is dropped and \
                      created again, which fails while a column uses it";
        return vec![
            stmt(format!("DROP DOMAIN {name}"), Severity::Destructive, reason),
            stmt(create(&c.to), Severity::Destructive, reason),
        ];
    }
    let (from, to) = (&c.from, &c.to);
    let mut out = Vec::new();
    for (n, check) in &from.checks {
        if to.checks.get(n) != Some(check) {
            let s = format!("ALTER DOMAIN {name} DROP CONSTRAINT {}", SQL.ident(n));
            out.push(stmt(
                s,
                Severity::Destructive,
                "drops a domain check; values it refused are allowed",
            ));
        }
    }
    if from.default != to.default {
        let s = match &to.default {
            Some(v) => format!("ALTER DOMAIN {name} SET DEFAULT {}", SQL.default(v)),
            None => format!("ALTER DOMAIN {name} DROP DEFAULT"),
        };
        out.push(stmt(s, Severity::Safe, "changes a domain's default for new rows"));
    }
    if from.not_null != to.not_null {
        out.push(if to.not_null {
            stmt(
                format!("ALTER DOMAIN {name} SET NOT NULL"),
                Severity::Warning,
                "makes a domain NOT NULL; fails if a column of it holds NULL",
            )
        } else {
            stmt(
                format!("ALTER DOMAIN {name} DROP NOT NULL"),
                Severity::Destructive,
                "lets a domain hold NULL",
            )
        });
    }
    for (n, check) in &to.checks {
        if from.checks.get(n) != Some(check) {
            let s = format!(
                "ALTER DOMAIN {name} ADD CONSTRAINT {} CHECK ({check})",
                SQL.ident(n)
            );
            out.push(stmt(
                s,
                Severity::Warning,
                "adds a domain check; fails if a stored value breaks it",
            ));
        }
    }
    if from.comment != to.comment {
        out.push(comment(to));
    }
    out
}
