//! The operator's own reading of a plan's SQL: it may only raise what the executor reported —
//! destructive statements and privilege changes — and refuses credential-bearing DDL outright.

use ptah_api::schemaplan::PrivilegeChangeKind;
use ptah_schema::{
    Plan, Severity,
    classify::{ClassifyError, PrivilegeKind, classify},
};

/// What the operator concluded about a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanClass {
    /// The executor's flag, raised by any statement the operator reads as destructive.
    pub destructive: bool,
    /// The privilege-change kinds of its statements, sorted, without repeats.
    pub privilege_changes: Vec<PrivilegeChangeKind>,
}

/// Reads the plan document and classifies every statement; refuses a document that is not a
/// plan, SQL that cannot be read (fail closed), and any statement that sets a credential.
pub fn classify_plan(bytes: &[u8]) -> Result<PlanClass, String> {
    let plan: Plan =
        serde_json::from_slice(bytes).map_err(|e| format!("the plan output is not a plan document: {e}"))?;
    let mut destructive = plan.destructive;
    let mut kinds = Vec::new();
    for (i, statement) in plan.statements.iter().enumerate() {
        destructive |= statement.severity == Severity::Destructive;
        let class = classify(&statement.sql, plan.dialect).map_err(|e| match e {
            // The message names the statement and kind, never the SQL (it may hold a secret).
            ClassifyError::CredentialBearing { kind, .. } => {
                format!("invalid_plan_output: statement {} sets a credential ({kind:?}); such SQL is never planned or applied", i + 1)
            }
            ClassifyError::Tokenize { .. } => format!("invalid_plan_output: statement {} cannot be read", i + 1),
        })?;
        destructive |= class.severity == Severity::Destructive;
        kinds.extend(class.privileges.into_iter().map(kind));
    }
    kinds.sort_by_key(|k| format!("{k:?}"));
    kinds.dedup();
    Ok(PlanClass {
        destructive,
        privilege_changes: kinds,
    })
}

fn kind(k: PrivilegeKind) -> PrivilegeChangeKind {
    match k {
        PrivilegeKind::Grant | PrivilegeKind::DefaultPrivileges => PrivilegeChangeKind::Grant,
        PrivilegeKind::Revoke => PrivilegeChangeKind::Revoke,
        PrivilegeKind::Role => PrivilegeChangeKind::Role,
        PrivilegeKind::Ownership => PrivilegeChangeKind::Ownership,
        PrivilegeKind::SecurityDefiner => PrivilegeChangeKind::SecurityDefiner,
        PrivilegeKind::RowSecurity => PrivilegeChangeKind::RowSecurityPolicy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptah_schema::{Dialect, PlanOptions, plan, read::sql};

    fn class(before: &str, after: &str) -> PlanClass {
        let read = |text: &str| sql::parse(Dialect::Postgres, "s.sql", text).expect("reads");
        let planned = plan(
            &read(after),
            &read(before),
            Dialect::Postgres,
            &PlanOptions::default(),
        )
        .expect("plans");
        classify_plan(&serde_json::to_vec(&planned).expect("json")).expect("classifies")
    }

    #[test]
    fn the_executors_row_security_and_grant_statements_are_privilege_changes() {
        let table = "CREATE TABLE t (id int PRIMARY KEY, owner text);\n";
        let secured = format!(
            "{table}ALTER TABLE t ENABLE ROW LEVEL SECURITY;\nCREATE POLICY p ON t USING (owner = CURRENT_USER);\nGRANT SELECT ON t TO reader;\n"
        );
        let added = class(table, &secured);
        assert_eq!(
            added.privilege_changes,
            vec![PrivilegeChangeKind::Grant, PrivilegeChangeKind::RowSecurityPolicy]
        );
        assert!(!added.destructive);
        let removed = class(&secured, table);
        assert_eq!(
            removed.privilege_changes,
            vec![
                PrivilegeChangeKind::Revoke,
                PrivilegeChangeKind::RowSecurityPolicy
            ]
        );
        assert!(
            removed.destructive,
            "dropping a policy and disabling RLS need permission"
        );
    }
}
