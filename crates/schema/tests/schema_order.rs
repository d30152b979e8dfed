//! PostgreSQL schemas placed before their `CREATE SCHEMA`, or without one, are implied; the forms
//! `IF NOT EXISTS` and `OR REPLACE` the server accepts read like the plain ones.

use ptah_schema::read::sql;
use ptah_schema::{Dialect, QualifiedName, Schema};

const PG: Dialect = Dialect::Postgres;

fn read(text: &str) -> Schema {
    sql::parse(PG, "order.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

#[test]
fn a_schema_declared_later_or_never_is_implied() {
    let later = read("CREATE TABLE app.t (id int);\nCREATE SCHEMA app;\n");
    let first = read("CREATE SCHEMA app;\nCREATE TABLE app.t (id int);\n");
    let never = read("CREATE TABLE app.t (id int);\n");
    assert_eq!(later, first);
    assert_eq!(never, first);
    assert!(first.namespaces.contains("app"));
    assert!(first.tables.contains_key(&QualifiedName::new("app", "t")));
    let twice = sql::parse(
        PG,
        "x.sql",
        "CREATE TABLE app.t (id int);\nCREATE SCHEMA app;\nCREATE SCHEMA app;\n",
    );
    assert!(twice.is_err(), "a second CREATE SCHEMA is still a duplicate");
}

#[test]
fn if_not_exists_and_or_replace_forms_read_like_the_plain_ones() {
    let plain = read(
        "CREATE SCHEMA s;\nCREATE SEQUENCE s.q;\nCREATE TABLE s.t (id int);\nCREATE INDEX i ON s.t (id);\n\
         CREATE VIEW s.v AS SELECT id FROM s.t;\n",
    );
    let guarded = read(
        "CREATE SCHEMA IF NOT EXISTS s;\nCREATE SEQUENCE IF NOT EXISTS s.q;\nCREATE TABLE IF NOT EXISTS s.t (id int);\n\
         CREATE INDEX IF NOT EXISTS i ON s.t (id);\nCREATE OR REPLACE VIEW s.v AS SELECT id FROM s.t;\n",
    );
    assert_eq!(plain, guarded);
}

#[test]
fn comments_on_constraints_triggers_and_enum_types_are_refused_by_name_and_on_domains_read() {
    let domain = read("CREATE DOMAIN d AS integer;\nCOMMENT ON TYPE d IS 'positive';\n");
    let as_domain = read("CREATE DOMAIN d AS integer;\nCOMMENT ON DOMAIN d IS 'positive';\n");
    assert_eq!(domain, as_domain);
    for (text, says) in [
        (
            "CREATE TABLE t (id int CONSTRAINT t_id CHECK (id > 0));\nCOMMENT ON CONSTRAINT t_id ON public.t IS 'x';\n",
            "COMMENT ON CONSTRAINT t_id ON public.t (",
        ),
        (
            "CREATE TABLE t (id int);\nCOMMENT ON TRIGGER tr ON public.t IS 'x';\n",
            "trigger tr on public.t",
        ),
        (
            "CREATE TYPE mood AS ENUM ('ok');\nCOMMENT ON TYPE mood IS 'x';\n",
            "COMMENT ON TYPE public.mood",
        ),
    ] {
        let e = sql::parse(PG, "c.sql", text).expect_err(text);
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn privileges_on_sequences_and_columns_are_refused_naming_the_object() {
    for (text, says) in [
        (
            "CREATE SEQUENCE public.q;\nGRANT SELECT, USAGE ON SEQUENCE public.q TO PUBLIC;\n",
            "ON SEQUENCE public.q",
        ),
        (
            "CREATE TABLE public.t (id int);\nGRANT SELECT (id) ON TABLE public.t TO PUBLIC;\n",
            "columns of public.t",
        ),
        (
            "CREATE TABLE public.t (id int);\nGRANT UPDATE (id) ON public.t TO PUBLIC;\n",
            "columns of public.t",
        ),
    ] {
        let e = sql::parse(PG, "g.sql", text).expect_err(text);
        assert!(e.to_string().contains(says), "{e}");
    }
}

#[test]
fn a_trigger_comment_is_read_written_and_planned_alone() {
    const BASE: &str = "CREATE TABLE public.t (id int);\n\
        CREATE FUNCTION public.f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;\n\
        CREATE TRIGGER tr BEFORE INSERT ON public.t FOR EACH ROW EXECUTE FUNCTION public.f();\n";
    let commented = read(&format!(
        "{BASE}COMMENT ON TRIGGER tr ON public.t IS 'stamps rows';\n"
    ));
    let key = QualifiedName::new("public", "t.tr");
    assert_eq!(commented.triggers[&key].comment.as_deref(), Some("stamps rows"));
    let written = ptah_schema::write::hcl::to_hcl(PG, &commented);
    let back =
        ptah_schema::read::hcl::parse(PG, "t.hcl", &written).unwrap_or_else(|e| panic!("{e}\n{written}"));
    assert_eq!(back, commented, "{written}");
    let plain = read(BASE);
    let planned =
        ptah_schema::plan(&commented, &plain, PG, &ptah_schema::PlanOptions::default()).expect("plans");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        ["COMMENT ON TRIGGER \"tr\" ON \"public\".\"t\" IS 'stamps rows'"]
    );
}
