//! Row-level security, policies and table grants in the pure planner: read from a `pg_dump`
//! fragment, HCL round trip, plan order, severities and the classifier's privilege kinds.

use std::collections::BTreeSet;

use ptah_schema::classify::{PrivilegeKind, classify};
use ptah_schema::read::{ReadError, hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{
    Dialect, PUBLIC, PlanOptions, PolicyCommand, Privilege, QualifiedName, Schema, Severity, Table, plan,
};

const PG: Dialect = Dialect::Postgres;

/// What `pg_dump --schema-only` (PostgreSQL 15) wrote for a table with RLS, three policies and
/// grants, preamble and ownership included.
const DUMP: &str = r"
SET statement_timeout = 0;
SELECT pg_catalog.set_config('search_path', '', false);
SET row_security = off;
CREATE SCHEMA app;
ALTER SCHEMA app OWNER TO app;
SET default_tablespace = '';
SET default_table_access_method = heap;
CREATE TABLE app.doc (
    id bigint NOT NULL,
    owner text NOT NULL,
    tenant integer,
    body text
);
ALTER TABLE ONLY app.doc FORCE ROW LEVEL SECURITY;
ALTER TABLE app.doc OWNER TO app;
ALTER TABLE ONLY app.doc
    ADD CONSTRAINT doc_pkey PRIMARY KEY (id);
ALTER TABLE app.doc ENABLE ROW LEVEL SECURITY;
CREATE POLICY ins ON app.doc FOR INSERT TO ptah_writer WITH CHECK (((owner = CURRENT_USER) AND (body IS NOT NULL) AND (id IN ( SELECT d.id
   FROM app.doc d))));
CREATE POLICY own ON app.doc FOR SELECT TO ptah_reader, ptah_writer USING ((owner = CURRENT_USER));
CREATE POLICY tenant_only ON app.doc AS RESTRICTIVE USING ((tenant = (current_setting('app.tenant'::text))::integer)) WITH CHECK ((tenant = (current_setting('app.tenant'::text))::integer));
GRANT SELECT ON TABLE app.doc TO ptah_reader;
GRANT DELETE ON TABLE app.doc TO ptah_writer;
GRANT SELECT,INSERT,UPDATE ON TABLE app.doc TO ptah_writer WITH GRANT OPTION;
GRANT SELECT ON TABLE app.doc TO PUBLIC;
";

fn doc(schema: &Schema) -> &Table {
    &schema.tables[&QualifiedName::new("app", "doc")]
}

fn privileges(p: &[Privilege]) -> BTreeSet<Privilege> {
    p.iter().copied().collect()
}

#[test]
fn a_pg_dump_fragment_reads_into_the_model() {
    let schema = sql::parse(PG, "dump.sql", DUMP).expect("the dump reads");
    let s = &doc(&schema).security;
    assert!(s.row_security && s.force_row_security);
    assert_eq!(s.policies.len(), 3);
    let own = &s.policies["own"];
    assert_eq!(own.command, PolicyCommand::Select);
    assert!(!own.restrictive);
    assert_eq!(own.roles, ["ptah_reader", "ptah_writer"].map(String::from).into());
    assert_eq!(own.using.as_deref(), Some("owner = current_user"));
    assert_eq!(own.check, None);
    let tenant = &s.policies["tenant_only"];
    assert!(tenant.restrictive && tenant.roles.is_empty());
    assert_eq!(tenant.command, PolicyCommand::All);
    assert_eq!(tenant.using, tenant.check);
    assert!(s.policies["ins"].using.is_none() && s.policies["ins"].check.is_some());
    let writer = &s.grants["ptah_writer"];
    use Privilege::*;
    assert_eq!(writer.privileges, privileges(&[Select, Insert, Update, Delete]));
    assert_eq!(writer.grantable, privileges(&[Select, Insert, Update]));
    assert_eq!(s.grants["ptah_reader"].privileges, privileges(&[Select]));
    assert_eq!(s.grants[PUBLIC].privileges, privileges(&[Select]));
}

#[test]
fn hand_written_policies_read_like_the_dump() {
    let text = "
CREATE SCHEMA app;
CREATE TABLE app.doc (id bigint PRIMARY KEY, owner text NOT NULL, tenant integer, body text);
ALTER TABLE app.doc ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.doc FORCE ROW LEVEL SECURITY;
CREATE POLICY own ON app.doc FOR SELECT TO ptah_writer, ptah_reader USING (owner = CURRENT_USER);
CREATE POLICY tenant_only ON app.doc AS RESTRICTIVE FOR ALL TO PUBLIC
  USING (tenant = current_setting('app.tenant')::integer) WITH CHECK (tenant = current_setting('app.tenant')::integer);
CREATE POLICY ins ON app.doc FOR INSERT TO ptah_writer
  WITH CHECK (owner = CURRENT_USER AND body IS NOT NULL AND id IN (SELECT d.id FROM app.doc d));
GRANT ALL ON app.doc TO ptah_writer WITH GRANT OPTION;
REVOKE GRANT OPTION FOR DELETE, TRUNCATE, REFERENCES, TRIGGER ON app.doc FROM ptah_writer;
REVOKE TRUNCATE, REFERENCES, TRIGGER ON TABLE app.doc FROM ptah_writer CASCADE;
GRANT SELECT ON app.doc TO ptah_reader, public;
";
    let hand = sql::parse(PG, "hand.sql", text).expect("reads");
    let dump = sql::parse(PG, "dump.sql", DUMP).expect("reads");
    assert_eq!(doc(&hand).security, doc(&dump).security);
}

#[test]
fn what_is_not_modelled_is_refused_by_name() {
    let base = "CREATE TABLE t (id int, a int);\nCREATE VIEW v AS SELECT id FROM t;\n";
    for (statement, named) in [
        ("GRANT SELECT (a) ON t TO r", "column privileges"),
        ("GRANT USAGE ON SCHEMA public TO r", "ON SCHEMA"),
        ("GRANT SELECT ON SEQUENCE s TO r", "ON SEQUENCE"),
        ("GRANT EXECUTE ON FUNCTION f() TO r", "ON FUNCTION"),
        ("GRANT USAGE ON t TO r", "privilege USAGE"),
        ("GRANT admin TO r", "role membership"),
        ("GRANT SELECT ON v TO r", "view public.v"),
        ("GRANT SELECT ON t TO CURRENT_USER", "CURRENT_USER"),
        (
            "CREATE POLICY p ON t TO SESSION_USER USING (true)",
            "SESSION_USER",
        ),
        (
            "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO r",
            "ALTER DEFAULT PRIVILEGES",
        ),
        (
            "ALTER TABLE t ENABLE ROW LEVEL SECURITY, ADD COLUMN b int",
            "other clauses",
        ),
    ] {
        let err = sql::parse(PG, "x.sql", &format!("{base}{statement};\n")).expect_err(statement);
        match err {
            ReadError::Unsupported { what, .. } => assert!(what.contains(named), "{statement}: {what}"),
            other => panic!("{statement}: {other:?}"),
        }
    }
    let err = sql::parse(PG, "x.sql", "GRANT SELECT ON missing TO r;").expect_err("unknown table");
    assert!(matches!(err, ReadError::BadReference { .. }), "{err:?}");
}

#[test]
fn security_round_trips_through_hcl() {
    let schema = sql::parse(PG, "dump.sql", DUMP).expect("reads");
    let text = to_hcl(PG, &schema);
    assert!(text.contains("  policy \"own\" {\n    for = SELECT\n"), "{text}");
    assert!(
        text.contains("  grant \"PUBLIC\" {\n    privileges = [\"SELECT\"]\n  }"),
        "{text}"
    );
    let back = hcl::parse(PG, "schema.hcl", &text).expect("the written HCL reads");
    assert_eq!(back, schema);
    assert_eq!(to_hcl(PG, &back), text);
}

#[test]
fn a_schema_without_security_keeps_its_fingerprint_and_json() {
    let schema = sql::parse(PG, "t.sql", "CREATE TABLE t (id int);").expect("reads");
    let json = serde_json::to_string(&schema).expect("json");
    assert!(!json.contains("security"), "{json}");
    let mut secured = schema.clone();
    secured
        .tables
        .values_mut()
        .for_each(|t| t.security.row_security = true);
    assert_ne!(secured.fingerprint(), schema.fingerprint());
}

fn statements(desired: &Schema, actual: &Schema) -> Vec<(String, Severity)> {
    plan(desired, actual, PG, &PlanOptions::default())
        .expect("plans")
        .statements
        .into_iter()
        .map(|s| (s.sql, s.severity))
        .collect()
}

fn position(all: &[(String, Severity)], start: &str) -> usize {
    all.iter()
        .position(|(s, _)| s.starts_with(start))
        .unwrap_or_else(|| panic!("no statement starts {start}: {all:#?}"))
}

#[test]
fn a_new_table_gets_its_security_after_it_exists_and_every_statement_is_a_privilege_change() {
    let desired = sql::parse(PG, "dump.sql", DUMP).expect("reads");
    let all = statements(&desired, &Schema::default());
    let table = position(&all, "CREATE TABLE \"app\".\"doc\"");
    let enable = position(&all, "ALTER TABLE \"app\".\"doc\" ENABLE ROW LEVEL SECURITY");
    let policy = position(
        &all,
        "CREATE POLICY \"own\" ON \"app\".\"doc\" FOR SELECT TO \"ptah_reader\", \"ptah_writer\" USING (owner = current_user)",
    );
    let grant = position(
        &all,
        "GRANT SELECT, INSERT, UPDATE ON TABLE \"app\".\"doc\" TO \"ptah_writer\" WITH GRANT OPTION",
    );
    position(&all, "GRANT SELECT ON TABLE \"app\".\"doc\" TO PUBLIC");
    assert!(table < enable && enable < policy && policy < grant, "{all:#?}");
    for (sql, severity) in &all[enable..] {
        let class = classify(sql, PG).expect("classifies");
        let kind = if sql.starts_with("GRANT") {
            PrivilegeKind::Grant
        } else {
            PrivilegeKind::RowSecurity
        };
        assert_eq!(class.privileges, vec![kind], "{sql}");
        assert!(class.severity <= *severity, "{sql}: the plan says {severity:?}");
    }
}

fn with_table(extra: &str) -> Schema {
    let text = format!(
        "CREATE TABLE t (id int PRIMARY KEY, owner text, n int);\nALTER TABLE t ENABLE ROW LEVEL SECURITY;\n{extra}"
    );
    sql::parse(PG, "t.sql", &text).expect("reads")
}

#[test]
fn changes_alter_in_place_where_they_can_and_removals_are_destructive() {
    let before = with_table(
        "CREATE POLICY a ON t USING (owner = CURRENT_USER);\n\
         CREATE POLICY b ON t FOR SELECT USING (n > 0);\n\
         CREATE POLICY gone ON t USING (true);\n\
         GRANT SELECT, INSERT ON t TO r1;\nGRANT SELECT ON t TO r2 WITH GRANT OPTION;\n",
    );
    let after = sql::parse(
        PG,
        "t.sql",
        "CREATE TABLE t (id int PRIMARY KEY, owner text, n int);\n\
         CREATE POLICY a ON t TO r1 USING (owner = SESSION_USER);\n\
         CREATE POLICY b ON t FOR UPDATE USING (n > 0);\n\
         CREATE POLICY new ON t AS RESTRICTIVE WITH CHECK (n < 10);\n\
         GRANT SELECT, DELETE ON t TO r1;\nGRANT SELECT ON t TO r2;\n",
    )
    .expect("reads");
    let all = statements(&after, &before);
    let sev = |start: &str| all[position(&all, start)].1;
    assert_eq!(
        sev("DROP POLICY \"gone\" ON \"public\".\"t\""),
        Severity::Destructive
    );
    assert_eq!(
        sev("DROP POLICY \"b\" ON \"public\".\"t\""),
        Severity::Destructive
    );
    assert_eq!(
        sev("ALTER TABLE \"public\".\"t\" DISABLE ROW LEVEL SECURITY"),
        Severity::Destructive
    );
    assert_eq!(
        sev("ALTER POLICY \"a\" ON \"public\".\"t\" TO \"r1\" USING (owner = session_user)"),
        Severity::Warning
    );
    assert_eq!(
        sev("CREATE POLICY \"b\" ON \"public\".\"t\" FOR UPDATE TO PUBLIC USING (n > 0)"),
        Severity::Warning
    );
    assert_eq!(
        sev("CREATE POLICY \"new\" ON \"public\".\"t\" AS RESTRICTIVE TO PUBLIC WITH CHECK (n < 10)"),
        Severity::Warning
    );
    assert_eq!(
        sev("REVOKE INSERT ON TABLE \"public\".\"t\" FROM \"r1\""),
        Severity::Warning
    );
    assert_eq!(
        sev("REVOKE GRANT OPTION FOR SELECT ON TABLE \"public\".\"t\" FROM \"r2\""),
        Severity::Warning
    );
    assert_eq!(
        sev("GRANT DELETE ON TABLE \"public\".\"t\" TO \"r1\""),
        Severity::Warning
    );
    assert!(position(&all, "DROP POLICY \"b\"") < position(&all, "CREATE POLICY \"b\""));
    for (sql, severity) in &all {
        let class = classify(sql, PG).expect("classifies");
        assert_eq!(class.privileges.len(), 1, "{sql}");
        let expected = match sql.split(' ').next() {
            Some("GRANT") => PrivilegeKind::Grant,
            Some("REVOKE") => PrivilegeKind::Revoke,
            _ => PrivilegeKind::RowSecurity,
        };
        assert_eq!(class.privileges[0], expected, "{sql}");
        assert_eq!(
            class.severity, *severity,
            "{sql}: the classifier and the plan agree"
        );
    }
    assert!(statements(&after, &after).is_empty());
}

#[test]
fn a_policy_over_a_retyped_column_is_rebuilt_around_the_change() {
    let before = with_table(
        "CREATE POLICY p ON t USING (n > 0);\nCREATE POLICY q ON t USING (owner = CURRENT_USER);\n",
    );
    let after = sql::parse(
        PG,
        "t.sql",
        "CREATE TABLE t (id int PRIMARY KEY, owner text, n bigint);\nALTER TABLE t ENABLE ROW LEVEL SECURITY;\n\
         CREATE POLICY p ON t USING (n > 0);\nCREATE POLICY q ON t USING (owner = CURRENT_USER);\n",
    )
    .expect("reads");
    let all = statements(&after, &before);
    let drop = position(&all, "DROP POLICY \"p\"");
    let retype = position(&all, "ALTER TABLE \"public\".\"t\" ALTER COLUMN \"n\" TYPE");
    let create = position(&all, "CREATE POLICY \"p\"");
    assert!(drop < retype && retype < create, "{all:#?}");
    assert!(!all.iter().any(|(s, _)| s.contains("\"q\"")), "{all:#?}");
}

#[test]
fn the_hcl_shape_reads_as_documented() {
    let text = r#"
table "doc" {
  schema = schema.public
  column "id" { type = bigint }
  column "owner" { type = text }
  row_security {
    enabled = true
  }
  policy "own_rows" {
    for   = SELECT
    as    = RESTRICTIVE
    to    = ["reader", "PUBLIC"]
    using = "((owner = CURRENT_USER))"
  }
  policy "writes" {
    to    = ["writer"]
    check = "owner = current_user"
  }
  grant "writer" {
    privileges = ["ALL"]
    grantable  = ["SELECT"]
  }
}
"#;
    let schema = hcl::parse(PG, "schema.hcl", text).expect("reads");
    let s = &schema.tables[&QualifiedName::new("public", "doc")].security;
    assert!(s.row_security && !s.force_row_security);
    let own = &s.policies["own_rows"];
    assert_eq!(own.command, PolicyCommand::Select);
    assert!(own.restrictive);
    assert!(own.roles.is_empty(), "PUBLIC among others is PUBLIC");
    assert_eq!(own.using.as_deref(), Some("owner = current_user"));
    assert_eq!(s.policies["writes"].command, PolicyCommand::All);
    assert_eq!(
        s.grants["writer"].privileges,
        Privilege::ALL.into_iter().collect()
    );
    assert_eq!(s.grants["writer"].grantable, privileges(&[Privilege::Select]));

    for (bad, says) in [
        ("policy \"p\" {\n    for = MERGE\n  }", "unknown policy command"),
        (
            "grant \"r\" {\n    privileges = [\"USAGE\"]\n  }",
            "unknown table privilege",
        ),
        ("grant \"r\" {}", "needs `privileges`"),
        ("row_security {}\n  row_security {}", "row_security"),
    ] {
        let doc = format!(
            "table \"t\" {{\n  schema = schema.public\n  column \"id\" {{ type = int }}\n  {bad}\n}}\n"
        );
        let err = hcl::parse(PG, "schema.hcl", &doc).expect_err(bad);
        assert!(err.to_string().contains(says), "{bad}: {err}");
    }
    let mysql =
        "table \"t\" {\n  column \"id\" { type = int }\n  grant \"r\" { privileges = [\"SELECT\"] }\n}\n";
    let err = hcl::parse(Dialect::Mysql, "schema.hcl", mysql).expect_err("MySQL grants");
    assert!(err.to_string().contains("on MySQL"), "{err}");
}
