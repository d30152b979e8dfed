//! The rules: a stable code, the default severity, and what the rule is about.

use serde::{Deserialize, Serialize};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Notice,
    /// A hazard on a busy database, or a change worth a second look.
    Warning,
    /// Loses data or cannot run as written.
    Error,
}

/// One rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// Its stable code (`DS101`).
    pub code: &'static str,
    /// Its severity unless the config overrides it.
    pub severity: Severity,
    /// What it finds.
    pub summary: &'static str,
}

const fn rule(code: &'static str, severity: Severity, summary: &'static str) -> Rule {
    Rule {
        code,
        severity,
        summary,
    }
}

use Severity::{Error, Notice, Warning};

/// Every rule, by family: `DS` destructive, `PG` PostgreSQL lock hazards, `MY` MySQL/MariaDB
/// rebuilds and blocking DDL, `TX` transaction conflicts, `MF` files, `BC` renames.
pub const RULES: &[Rule] = &[
    rule("DS101", Error, "drops a table"),
    rule("DS102", Error, "drops a column"),
    rule("DS103", Error, "changes a column's type"),
    rule("DS104", Warning, "drops a NOT NULL constraint"),
    rule("DS105", Error, "drops a constraint"),
    rule(
        "DS107",
        Error,
        "drops a schema, type, extension, function, view or role",
    ),
    rule("DS108", Error, "truncates a table"),
    rule(
        "DS109",
        Error,
        "disables row-level security: every row becomes visible to the table's readers",
    ),
    rule(
        "DD101",
        Warning,
        "adds a NOT NULL column without a default: refused on a table with rows",
    ),
    rule(
        "PG101",
        Warning,
        "creates an index without CONCURRENTLY: writes to the table block for the whole build",
    ),
    rule("PG102", Warning, "adds an enum value inside a transaction"),
    rule(
        "PG103",
        Error,
        "runs CONCURRENTLY inside a transaction, which PostgreSQL refuses",
    ),
    rule(
        "PG104",
        Warning,
        "adds a primary key: ACCESS EXCLUSIVE while its index is built",
    ),
    rule(
        "PG105",
        Warning,
        "adds a UNIQUE constraint: ACCESS EXCLUSIVE while its index is built",
    ),
    rule("PG106", Warning, "drops an index without CONCURRENTLY"),
    rule(
        "PG302",
        Warning,
        "adds a column with a volatile default: the table is rewritten",
    ),
    rule(
        "PG303",
        Warning,
        "sets NOT NULL: the table is scanned under ACCESS EXCLUSIVE",
    ),
    rule(
        "PG304",
        Warning,
        "adds a CHECK or FOREIGN KEY constraint without NOT VALID: validated under lock",
    ),
    rule(
        "PG305",
        Warning,
        "SET LOGGED, UNLOGGED or ACCESS METHOD: the table is rewritten under ACCESS EXCLUSIVE",
    ),
    rule(
        "PG306",
        Warning,
        "creates a trigger on a table that exists: writes block until commit",
    ),
    rule(
        "PG307",
        Warning,
        "adds a stored generated column: the table is rewritten",
    ),
    rule(
        "MY101",
        Warning,
        "ALTER TABLE without ALGORITHM=INSTANT or INPLACE and LOCK=NONE may copy the table",
    ),
    rule(
        "MY102",
        Warning,
        "changes a column's type on MySQL/MariaDB: the table is copied",
    ),
    rule(
        "TX101",
        Error,
        "a statement that cannot run inside the file's transaction",
    ),
    rule(
        "TX201",
        Warning,
        "an explicit BEGIN or COMMIT in a migration file",
    ),
    rule("MF101", Notice, "a migration without a down file"),
    rule("MF102", Error, "an empty migration"),
    rule(
        "BC101",
        Warning,
        "renames a table or column: clients still using the old name break",
    ),
    rule(
        "SQL001",
        Notice,
        "a statement the linter cannot read (a routine body, a DO block): no rule judged it",
    ),
];

/// The rule with `code`.
pub fn by_code(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_named_by_family() {
        let mut seen = std::collections::BTreeSet::new();
        for r in RULES {
            assert!(seen.insert(r.code), "{} twice", r.code);
            let family = r.code.trim_end_matches(|c: char| c.is_ascii_digit());
            assert!(
                ["DS", "DD", "PG", "MY", "TX", "MF", "BC", "SQL"].contains(&family),
                "{}",
                r.code
            );
        }
    }
}
