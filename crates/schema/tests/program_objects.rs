//! Views, routines and triggers in the pure planner: HCL round trip, plan order and severities.

use ptah_schema::classify::{PrivilegeKind, privilege_kind, statement_severity};
use ptah_schema::read::hcl;
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, PlanOptions, Schema, Severity, plan};

const PG: Dialect = Dialect::Postgres;

const BASE: &str = r#"
table "users" {
  schema = schema.public
  column "id" { type = bigint }
  column "email" { type = varchar(100) }
  primary_key { columns = [column.id] }
}

function "touch" {
  schema = schema.public
  arguments = ""
  returns = "trigger"
  language = "plpgsql"
  as = "\nBEGIN\n  NEW.email := lower(NEW.email);\n  RETURN NEW;\nEND;\n"
}

view "emails" {
  schema = schema.public
  comment = "who we write to"
  as = " SELECT users.email\n   FROM public.users"
}

view "email_count" {
  schema = schema.public
  as = " SELECT count(*) AS n\n   FROM public.emails"
}

trigger "users_touch" {
  schema = schema.public
  on = table.users
  as = "CREATE TRIGGER users_touch BEFORE INSERT ON public.users FOR EACH ROW EXECUTE FUNCTION public.touch()"
}
"#;

fn read(text: &str) -> Schema {
    hcl::parse(PG, "schema.hcl", text).expect("reads")
}

fn sqls(desired: &Schema, actual: &Schema) -> Vec<(String, Severity)> {
    plan(desired, actual, PG, &PlanOptions::default())
        .expect("plans")
        .statements
        .into_iter()
        .map(|s| (s.sql, s.severity))
        .collect()
}

fn position(statements: &[(String, Severity)], start: &str) -> usize {
    statements
        .iter()
        .position(|(s, _)| s.starts_with(start))
        .unwrap_or_else(|| panic!("no statement starts with {start:?} in {statements:#?}"))
}

#[test]
fn program_objects_round_trip_through_canonical_hcl() {
    let schema = read(BASE);
    assert_eq!(schema.views.len(), 2);
    assert_eq!(schema.routines.len(), 1);
    assert_eq!(schema.triggers.len(), 1);
    let written = to_hcl(PG, &schema);
    assert_eq!(read(&written), schema, "{written}");
}

#[test]
fn an_empty_database_gets_routines_first_and_views_and_triggers_after_their_tables() {
    let s = sqls(&read(BASE), &Schema::default());
    let function = position(&s, "CREATE FUNCTION \"public\".\"touch\"()");
    let table = position(&s, "CREATE TABLE \"public\".\"users\"");
    let emails = position(&s, "CREATE VIEW \"public\".\"emails\"");
    let count = position(&s, "CREATE VIEW \"public\".\"email_count\"");
    let trigger = position(&s, "CREATE TRIGGER users_touch");
    assert!(
        function < table && table < emails && emails < count && table < trigger,
        "{s:#?}"
    );
    assert!(
        s.iter()
            .any(|(q, _)| q.starts_with("COMMENT ON VIEW \"public\".\"emails\" IS 'who we write to'"))
    );
}

#[test]
fn a_column_retyped_under_views_drops_them_first_and_creates_them_after() {
    let actual = read(BASE);
    let desired = read(&BASE.replace("varchar(100)", "varchar(200)"));
    let s = sqls(&desired, &actual);
    let drop_count = position(&s, "DROP VIEW \"public\".\"email_count\"");
    let drop_emails = position(&s, "DROP VIEW \"public\".\"emails\"");
    let alter = position(&s, "ALTER TABLE \"public\".\"users\" ALTER COLUMN");
    let create_emails = position(&s, "CREATE VIEW \"public\".\"emails\"");
    let create_count = position(&s, "CREATE VIEW \"public\".\"email_count\"");
    assert!(drop_count < drop_emails && drop_emails < alter, "{s:#?}");
    assert!(alter < create_emails && create_emails < create_count, "{s:#?}");
    assert_eq!(s[drop_emails].1, Severity::Warning, "a rebuild loses nothing");
}

#[test]
fn dropping_a_view_or_a_routine_is_destructive_and_a_new_body_a_warning() {
    let actual = read(BASE);
    let without = BASE
        .split("view \"email_count\"")
        .next()
        .expect("prefix")
        .to_owned();
    let s = sqls(&read(&without), &actual);
    let drop = position(&s, "DROP VIEW \"public\".\"email_count\"");
    assert_eq!(s[drop].1, Severity::Destructive);
    let trigger = position(&s, "DROP TRIGGER \"users_touch\" ON \"public\".\"users\"");
    assert_eq!(s[trigger].1, Severity::Destructive);

    let mut no_function = read(BASE);
    no_function.routines.clear();
    no_function.triggers.clear();
    let s = sqls(&no_function, &actual);
    let r = position(&s, "DROP FUNCTION \"public\".\"touch\"()");
    assert_eq!(s[r].1, Severity::Destructive);
    assert!(
        position(&s, "DROP TRIGGER") < r,
        "the trigger goes before its function: {s:#?}"
    );

    let body = sqls(
        &read(&BASE.replace("lower(NEW.email)", "upper(NEW.email)")),
        &actual,
    );
    assert_eq!(body.len(), 1, "{body:#?}");
    assert!(body[0].0.starts_with("CREATE OR REPLACE FUNCTION"));
    assert_eq!(body[0].1, Severity::Warning);
}

#[test]
fn a_security_definer_routine_is_a_privilege_change() {
    let actual = read(BASE);
    let desired = read(&BASE.replace(
        "language = \"plpgsql\"",
        "language = \"plpgsql\"\n  security_definer = true",
    ));
    let s = sqls(&desired, &actual);
    assert_eq!(s.len(), 1, "{s:#?}");
    assert_eq!(
        privilege_kind(&s[0].0, PG).expect("tokenizes"),
        Some(PrivilegeKind::SecurityDefiner)
    );
    assert_eq!(
        statement_severity(&s[0].0, PG).expect("tokenizes"),
        Severity::Warning
    );
}

#[test]
fn an_unchanged_schema_plans_nothing_and_a_comment_is_only_a_comment() {
    let actual = read(BASE);
    assert!(sqls(&actual, &actual).is_empty());
    let s = sqls(&read(&BASE.replace("who we write to", "our list")), &actual);
    assert_eq!(s.len(), 1, "{s:#?}");
    assert!(s[0].0.starts_with("COMMENT ON VIEW"));
}
