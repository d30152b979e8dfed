//! The SQL-text classifier: severities, privilege kinds, credential-bearing refusals.

use Dialect::{Mysql as MY, Postgres as PG};
use Severity::{Destructive as D, Safe as S, Warning as W};
use ptah_schema::classify::{
    ClassifyError, PrivilegeKind, classify, is_credential_bearing, privilege_kind, statement_severity,
};
use ptah_schema::{Dialect, Severity};

#[test]
fn severities_follow_the_destructive_rules() {
    let cases: &[(Dialect, &str, Severity)] = &[
        (PG, "CREATE TABLE t (a int)", S),
        (PG, "CREATE INDEX i ON t (a)", S),
        (PG, "CREATE UNIQUE INDEX i ON t (a)", W),
        (PG, "CREATE OR REPLACE VIEW v AS SELECT 1", W),
        (PG, "ALTER TABLE t ADD COLUMN b text", S),
        (PG, "ALTER TABLE t ADD COLUMN b text NOT NULL DEFAULT ''", W),
        (PG, "ALTER TABLE IF EXISTS ONLY s.t ADD COLUMN b text", S),
        (PG, "ALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)", W),
        (PG, "ALTER TABLE t ALTER COLUMN a SET NOT NULL", W),
        (PG, "ALTER TABLE t ALTER COLUMN a DROP NOT NULL", D),
        (PG, "ALTER TABLE t ALTER COLUMN a TYPE bigint", D),
        (PG, "ALTER TABLE t ALTER COLUMN a SET DEFAULT 1", S),
        (PG, "ALTER TABLE t ALTER COLUMN a DROP DEFAULT", W),
        (PG, "ALTER TABLE t DROP COLUMN a", D),
        (PG, "ALTER TABLE t DROP CONSTRAINT c", D),
        // The lock-safe forms the planner writes (issue 37): the helper check of SET NOT NULL is
        // the plan's own, MySQL's online options change nothing, a validation can fail.
        (PG, r#"ALTER TABLE "t" DROP CONSTRAINT IF EXISTS "ptah_nn_a""#, S),
        (PG, r#"ALTER TABLE "t" DROP CONSTRAINT "ptah_nn_a""#, S),
        (PG, r#"ALTER TABLE "t" DROP CONSTRAINT "ptah_nn_a" CASCADE"#, D),
        (PG, r#"ALTER TABLE "t" DROP CONSTRAINT "a_check""#, D),
        (PG, r#"ALTER TABLE "t" VALIDATE CONSTRAINT "c""#, W),
        (
            MY,
            "ALTER TABLE `t` ADD COLUMN `b` int NULL, ALGORITHM=INSTANT",
            S,
        ),
        (
            MY,
            "ALTER TABLE `t` ADD COLUMN `b` int NULL, ALGORITHM=INPLACE, LOCK=NONE",
            S,
        ),
        (
            MY,
            "ALTER TABLE `t` DROP INDEX `i`, ALGORITHM=INPLACE, LOCK=NONE",
            D,
        ),
        (PG, "ALTER TABLE t ADD COLUMN b int, DROP COLUMN a", D),
        (PG, "ALTER TABLE t RENAME COLUMN a TO b", W),
        (PG, "ALTER TABLE t DISABLE ROW LEVEL SECURITY", D),
        (PG, "ALTER TYPE mood ADD VALUE 'x'", W),
        (PG, "DROP TABLE t", D),
        (PG, "DROP INDEX i", W),
        (MY, "DROP INDEX i ON t", D),
        (MY, "ALTER TABLE t DROP INDEX i", D),
        (MY, "ALTER TABLE t DROP c", D),
        (MY, "ALTER TABLE t MODIFY COLUMN a varchar(10)", D),
        (MY, "ALTER TABLE t CHANGE a b int", D),
        (MY, "ALTER TABLE t ADD INDEX i (a)", S),
        (PG, "DROP TYPE mood", D),
        (PG, "DROP EXTENSION pgcrypto", D),
        (PG, "TRUNCATE t", D),
        (PG, "DELETE FROM t WHERE a = 1", D),
        (PG, "UPDATE t SET a = 1", W),
        (PG, "INSERT INTO t VALUES (1)", S),
        (PG, "COMMENT ON TABLE t IS 'DROP TABLE x'", S),
        (PG, "-- DROP TABLE t\nSELECT 1", S),
        (PG, "VACUUM t", W),
        (PG, "", S),
        (PG, "CREATE TABLE a (x int); DROP TABLE b;", D),
        (
            PG,
            "CREATE FUNCTION f() RETURNS int AS $$ DROP TABLE t $$ LANGUAGE sql",
            S,
        ),
    ];
    for (dialect, sql, expected) in cases {
        assert_eq!(statement_severity(sql, *dialect), Ok(*expected), "{sql}");
    }
}

#[test]
fn privilege_kinds_are_detected() {
    let cases: &[(Dialect, &str, Option<PrivilegeKind>)] = &[
        (PG, "GRANT SELECT ON t TO app", Some(PrivilegeKind::Grant)),
        (PG, "revoke all on t from public", Some(PrivilegeKind::Revoke)),
        (PG, "CREATE ROLE reader NOLOGIN", Some(PrivilegeKind::Role)),
        (PG, "DROP ROLE reader", Some(PrivilegeKind::Role)),
        (PG, "SET ROLE admin", Some(PrivilegeKind::Role)),
        (PG, "SET SESSION AUTHORIZATION admin", Some(PrivilegeKind::Role)),
        (PG, "ALTER TABLE t OWNER TO admin", Some(PrivilegeKind::Ownership)),
        (PG, "REASSIGN OWNED BY a TO b", Some(PrivilegeKind::Ownership)),
        (
            PG,
            "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO r",
            Some(PrivilegeKind::DefaultPrivileges),
        ),
        (
            PG,
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'select 1'",
            Some(PrivilegeKind::SecurityDefiner),
        ),
        (
            MY,
            "CREATE DEFINER = `root`@`%` VIEW v AS SELECT 1",
            Some(PrivilegeKind::SecurityDefiner),
        ),
        (
            PG,
            "CREATE POLICY p ON t USING (true)",
            Some(PrivilegeKind::RowSecurity),
        ),
        (
            PG,
            "ALTER TABLE t ENABLE ROW LEVEL SECURITY",
            Some(PrivilegeKind::RowSecurity),
        ),
        (PG, "CREATE TABLE grant_log (a int)", None),
        (PG, "COMMENT ON TABLE t IS 'GRANT ALL'", None),
        (PG, r#"CREATE TABLE "grant" (a int)"#, None),
    ];
    for (dialect, sql, expected) in cases {
        assert_eq!(privilege_kind(sql, *dialect), Ok(*expected), "{sql}");
    }
    // Privilege changes are never safe.
    assert_eq!(statement_severity("CREATE ROLE r", PG), Ok(W));
}

#[test]
fn credential_bearing_principal_ddl_is_refused() {
    let bearing: &[(Dialect, &str)] = &[
        (PG, "CREATE ROLE app LOGIN PASSWORD 'hunter2'"),
        (PG, "create user app with encrypted password 'hunter2'"),
        (PG, "ALTER ROLE app PASSWORD 'hunter2'"),
        (
            PG,
            "ALTER USER app WITH PASSWORD 'hunter2' VALID UNTIL 'infinity'",
        ),
        (MY, "CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2'"),
        (
            MY,
            "ALTER USER 'app'@'%' IDENTIFIED WITH caching_sha2_password BY 'hunter2'",
        ),
        (MY, "SET PASSWORD FOR 'app'@'%' = 'hunter2'"),
        (MY, "GRANT ALL ON *.* TO 'app'@'%' IDENTIFIED BY 'hunter2'"),
        (PG, "CREATE TABLE a (x int); CREATE ROLE r PASSWORD 'hunter2'"),
    ];
    for (dialect, sql) in bearing {
        assert_eq!(is_credential_bearing(sql, *dialect), Ok(true), "{sql}");
        let err = classify(sql, *dialect).expect_err(sql);
        assert!(matches!(err, ClassifyError::CredentialBearing { .. }), "{sql}");
        assert!(
            !err.to_string().contains("hunter2"),
            "{sql}: the message must not repeat the secret"
        );
    }
    let err = classify("SELECT 1; CREATE ROLE r PASSWORD 'p'", PG).expect_err("refused");
    assert_eq!(
        err,
        ClassifyError::CredentialBearing {
            statement: 2,
            kind: PrivilegeKind::Role
        }
    );
    let clean: &[(Dialect, &str)] = &[
        (PG, "CREATE ROLE reader NOLOGIN"),
        (PG, "DROP ROLE app"),
        (PG, "CREATE TABLE users (password text)"),
        (PG, "ALTER TABLE users ADD COLUMN password_hash text"),
        (PG, "COMMENT ON ROLE app IS 'PASSWORD'"),
        (MY, "CREATE TABLE identified (a int)"),
    ];
    for (dialect, sql) in clean {
        assert_eq!(is_credential_bearing(sql, *dialect), Ok(false), "{sql}");
    }
}

#[test]
fn classify_collects_severity_and_privileges() {
    let c = classify(
        "GRANT SELECT ON t TO r; ALTER TABLE t DROP COLUMN a; GRANT UPDATE ON t TO r",
        PG,
    )
    .expect("classified");
    assert_eq!(c.severity, D);
    assert_eq!(c.privileges, vec![PrivilegeKind::Grant]);
    let err = statement_severity("SELECT 'unterminated", PG).expect_err("tokenizer error");
    assert!(matches!(err, ClassifyError::Tokenize { line: 1, .. }), "{err:?}");
}

#[test]
fn every_planned_statement_classifies_at_most_as_severe_as_text_rules() {
    // The planner knows more than text (widening vs narrowing); text rules never rate lower than it.
    let planned: &[(Dialect, &str, Severity)] = &[
        (PG, r#"ALTER TABLE "public"."t" ALTER COLUMN "a" TYPE bigint"#, W),
        (PG, r#"ALTER TABLE "public"."t" ADD COLUMN "a" text"#, S),
        (PG, r#"DROP INDEX "public"."i""#, W),
        (MY, "ALTER TABLE `t` MODIFY COLUMN `a` varchar(300) NOT NULL", W),
        (MY, "ALTER TABLE `t` DROP CHECK `c`", D),
    ];
    for (dialect, sql, planner) in planned {
        let text = statement_severity(sql, *dialect).expect("tokens");
        assert!(text >= *planner, "{sql}: text {text:?} < planner {planner:?}");
    }
}

#[test]
fn a_mysql_double_dash_at_the_end_is_a_comment_as_on_the_server() {
    // Found by the schema_classify fuzz target: `--` alone classified as an unknown statement,
    // while `--\n;\n-- ` (the same halves joined) was all comments.
    for sql in ["--", "SELECT 1;\n--", "-- "] {
        assert_eq!(statement_severity(sql, MY).expect("tokenizes"), S, "{sql:?}");
    }
    // The fuzz target's invariant: the joined text is as severe as the higher half.
    assert_eq!(statement_severity("--\n;\n-- ", MY).expect("tokenizes"), S);
}
