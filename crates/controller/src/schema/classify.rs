//! The operator's own reading of a plan's SQL: it may only raise what the executor reported —
//! destructive statements and privilege changes — and refuses credential-bearing DDL outright.

use ptah_api::{schemaplan::PrivilegeChangeKind, shared::PlanSeverity};
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
    /// The highest severity of its statements, by the executor's or the operator's reading,
    /// whichever is higher.
    pub severity: PlanSeverity,
}

/// Why the operator refuses a plan document. The messages reach a status condition, so they name
/// positions, categories and statement numbers, never the document's text (SQL may hold a secret,
/// and serde's own messages quote the input).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanRefusal {
    /// The bytes are not a plan document.
    #[error(
        "invalid_plan_output: the plan output is not a plan document ({category} error at line {line}, column {column})"
    )]
    NotAPlan {
        /// serde_json's category: syntax, data, eof or io.
        category: &'static str,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
    },
    /// A statement sets a credential.
    #[error(
        "invalid_plan_output: statement {statement} sets a credential ({kind}); such SQL is never planned or applied"
    )]
    CredentialBearing {
        /// 1-based statement number.
        statement: usize,
        /// The kind of credential statement.
        kind: String,
    },
    /// A statement cannot be tokenized (fail closed).
    #[error("invalid_plan_output: statement {statement} cannot be read")]
    Unreadable {
        /// 1-based statement number.
        statement: usize,
    },
}

fn category(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Io => "io",
        serde_json::error::Category::Syntax => "syntax",
        serde_json::error::Category::Data => "data",
        serde_json::error::Category::Eof => "eof",
    }
}

/// Reads the plan document and classifies every statement; refuses a document that is not a
/// plan, SQL that cannot be read (fail closed), and any statement that sets a credential.
pub fn classify_plan(bytes: &[u8]) -> Result<PlanClass, PlanRefusal> {
    let plan: Plan = serde_json::from_slice(bytes).map_err(|e| PlanRefusal::NotAPlan {
        category: category(&e),
        line: e.line(),
        column: e.column(),
    })?;
    let mut highest = plan.highest_severity().unwrap_or(Severity::Safe);
    let mut kinds = Vec::new();
    for (i, statement) in plan.statements.iter().enumerate() {
        let class = classify(&statement.sql, plan.dialect).map_err(|e| match e {
            ClassifyError::CredentialBearing { kind, .. } => PlanRefusal::CredentialBearing {
                statement: i + 1,
                kind: format!("{kind:?}"),
            },
            ClassifyError::Tokenize { .. } => PlanRefusal::Unreadable { statement: i + 1 },
        })?;
        highest = highest.max(class.severity);
        kinds.extend(class.privileges.into_iter().map(kind));
    }
    kinds.sort_by_key(|k| format!("{k:?}"));
    kinds.dedup();
    Ok(PlanClass {
        destructive: plan.destructive || highest == Severity::Destructive,
        privilege_changes: kinds,
        severity: match highest {
            Severity::Safe => PlanSeverity::Safe,
            Severity::Warning => PlanSeverity::Warning,
            Severity::Destructive => PlanSeverity::Destructive,
        },
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

    #[test]
    fn a_plan_has_its_highest_statements_severity() {
        let table = "CREATE TABLE t (id int PRIMARY KEY);\n";
        let nullable = "CREATE TABLE t (id int PRIMARY KEY, note text);\n";
        let required = "CREATE TABLE t (id int PRIMARY KEY, note text NOT NULL);\n";
        assert_eq!(class(table, nullable).severity, PlanSeverity::Safe);
        let added = class(table, required);
        assert_eq!(
            added.severity,
            PlanSeverity::Warning,
            "a NOT NULL column fails on existing rows"
        );
        assert!(!added.destructive);
        let dropped = class(nullable, table);
        assert_eq!(dropped.severity, PlanSeverity::Destructive);
        assert!(dropped.destructive);
    }

    #[test]
    fn a_document_that_is_not_a_plan_is_refused_without_quoting_it() {
        let secret = "hunter2-s3cr3t";
        let documents = [
            format!(r#"{{"statements": "{secret}"}}"#),
            format!(r#"{{"dialect": "{secret}", "statements": []}}"#),
            format!(r#"{{"statements": [{{"sql": "ALTER ROLE x PASSWORD '{secret}'"#),
            format!("not json {secret}"),
        ];
        for doc in &documents {
            let refusal = classify_plan(doc.as_bytes()).expect_err("refused");
            assert!(matches!(refusal, PlanRefusal::NotAPlan { .. }), "{refusal:?}");
            let message = refusal.to_string();
            assert!(!message.contains(secret), "{message}");
            assert!(message.contains("line 1, column"), "{message}");
        }
    }

    #[test]
    fn a_credential_statement_is_refused_by_number_and_kind() {
        let read = |text: &str| sql::parse(Dialect::Postgres, "s.sql", text).expect("reads");
        let planned = plan(
            &read("CREATE TABLE t (id int);\nCREATE TABLE u (id int);\n"),
            &read(""),
            Dialect::Postgres,
            &PlanOptions::default(),
        )
        .expect("plans");
        let mut doc = serde_json::to_value(&planned).expect("json");
        doc["statements"][1]["sql"] = serde_json::json!("ALTER ROLE app PASSWORD 'hunter2'");
        let refusal = classify_plan(&serde_json::to_vec(&doc).expect("json")).expect_err("refused");
        assert!(
            matches!(refusal, PlanRefusal::CredentialBearing { statement: 2, .. }),
            "{refusal:?}"
        );
        assert!(!refusal.to_string().contains("hunter2"), "{refusal}");
    }
}
