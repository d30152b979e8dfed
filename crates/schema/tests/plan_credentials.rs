//! A plan never carries credential-bearing SQL: text the artifact supplies verbatim (here a
//! view's body) can smuggle in a second statement that sets a password, and the planner refuses
//! the plan naming the statement, never its text.

use ptah_schema::{Dialect, PlanError, PlanOptions, Schema, plan};

const SECRET: &str = "hunter2-smuggled";

fn planned(dialect: Dialect, hcl: &str) -> Result<ptah_schema::Plan, PlanError> {
    let desired = ptah_schema::read::hcl::parse(dialect, "schema.hcl", hcl).unwrap_or_else(|e| panic!("{e}"));
    plan(&desired, &Schema::default(), dialect, &PlanOptions::default())
}

#[test]
fn a_view_body_that_sets_a_password_is_refused_on_both_dialects() {
    let cases = [
        (
            Dialect::Postgres,
            format!(
                "schema \"public\" {{}}\nview \"v\" {{\n  schema = schema.public\n  as = \"SELECT 1 AS x; CREATE ROLE r LOGIN PASSWORD '{SECRET}'\"\n}}\n"
            ),
        ),
        (
            Dialect::Mysql,
            format!(
                "view \"v\" {{\n  as = \"SELECT 1 AS x; CREATE USER 'r'@'%' IDENTIFIED BY '{SECRET}'\"\n}}\n"
            ),
        ),
    ];
    for (dialect, hcl) in cases {
        let err = planned(dialect, &hcl).expect_err("refused");
        // The view's is the last statement (PostgreSQL's plan first creates the schema).
        assert!(matches!(err, PlanError::CredentialBearing { .. }), "{hcl}: {err}");
        let said = format!("{err} {err:?}");
        assert!(said.starts_with("invalid_plan_output: "), "{said}");
        assert!(!said.contains(SECRET), "the refusal repeats the secret: {said}");
    }
}

#[test]
fn a_view_that_only_mentions_passwords_is_planned() {
    let hcl = "schema \"public\" {}\nview \"v\" {\n  schema = schema.public\n  as = \"SELECT 'PASSWORD' AS password\"\n}\n";
    let plan = planned(Dialect::Postgres, hcl).expect("planned");
    assert!(
        plan.statements.iter().any(|s| s.sql.contains("CREATE VIEW")),
        "{plan:?}"
    );
}
