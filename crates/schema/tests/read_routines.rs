//! The SQL reader on PostgreSQL functions, procedures, triggers and routine comments as
//! `pg_dump --schema-only` (PostgreSQL 15) writes them; the expected catalog texts were printed by
//! `pg_get_function_arguments`, `pg_get_function_identity_arguments` and `pg_get_function_result`.

use ptah_schema::read::ReadError;
use ptah_schema::read::sql::parse_document;
use ptah_schema::{Dialect, QualifiedName, Routine, RoutineKind, Schema, Volatility};

const PG: Dialect = Dialect::Postgres;

/// Real pg_dump output (PostgreSQL 15.18), ownership and settings lines trimmed.
const DUMP: &str = r#"
SELECT pg_catalog.set_config('search_path', '', false);
CREATE SCHEMA app;
CREATE FUNCTION app.add(a integer, b integer DEFAULT 2, OUT s integer, INOUT c text DEFAULT 'x'::text, VARIADIC rest integer[] DEFAULT '{}'::integer[]) RETURNS record
    LANGUAGE sql IMMUTABLE STRICT
    AS $$SELECT a + b, c$$;
ALTER FUNCTION app.add(a integer, b integer, OUT s integer, INOUT c text, VARIADIC rest integer[]) OWNER TO app;
CREATE PROCEDURE public.cleanup(IN days integer DEFAULT 30)
    LANGUAGE plpgsql
    AS $$ BEGIN DELETE FROM users WHERE updated_at < now() - days * interval '1 day'; END $$;
COMMENT ON PROCEDURE public.cleanup(IN days integer) IS 'old rows';
CREATE FUNCTION public.lower_email(e character varying) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT lower(e) $$;
CREATE TABLE public.users (
    id integer NOT NULL,
    email text,
    updated_at timestamp with time zone
);
CREATE FUNCTION public.setof_users() RETURNS SETOF public.users
    LANGUAGE sql
    AS $$SELECT * FROM users$$;
CREATE FUNCTION public.tbl(n integer) RETURNS TABLE(x integer, y text)
    LANGUAGE sql STABLE SECURITY DEFINER
    AS $$ SELECT n, 'it''s' $$;
CREATE FUNCTION public.touch() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END;
$$;
COMMENT ON FUNCTION public.touch() IS 'sets updated_at';
CREATE TRIGGER users_touch BEFORE UPDATE ON public.users FOR EACH ROW EXECUTE FUNCTION public.touch();
CREATE TRIGGER users_touch2 AFTER INSERT OR UPDATE OF email ON public.users FOR EACH ROW WHEN ((new.email IS NOT NULL)) EXECUTE FUNCTION public.touch();
"#;

fn read(text: &str) -> Schema {
    parse_document(PG, "dump.sql", text)
        .unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
        .schema
}

fn refusal(text: &str) -> (String, usize, usize) {
    match parse_document(PG, "dump.sql", text) {
        Err(ReadError::Unsupported { at, what }) => (what, at.line, at.column),
        other => panic!("{text}: expected a refusal, got {other:?}"),
    }
}

fn routine<'a>(schema: &'a Schema, schema_name: &str, key: &str) -> &'a Routine {
    schema
        .routines
        .get(&QualifiedName::new(schema_name, key))
        .unwrap_or_else(|| panic!("no routine {schema_name}.{key} in {:#?}", schema.routines.keys()))
}

#[test]
fn functions_keep_the_catalog_texts_pg_dump_prints() {
    let schema = read(DUMP);
    assert_eq!(schema.routines.len(), 6);
    let add = routine(
        &schema,
        "app",
        "add(a integer, b integer, OUT s integer, INOUT c text, VARIADIC rest integer[])",
    );
    assert_eq!(
        add.arguments,
        "a integer, b integer DEFAULT 2, OUT s integer, INOUT c text DEFAULT 'x'::text, VARIADIC rest integer[] DEFAULT '{}'::integer[]"
    );
    assert_eq!(add.returns.as_deref(), Some("record"));
    assert_eq!((add.volatility, add.strict), (Volatility::Immutable, true));
    assert_eq!(
        (add.language.as_str(), add.body.as_str()),
        ("sql", "SELECT a + b, c")
    );

    let tbl = routine(&schema, "public", "tbl(n integer)");
    assert_eq!(tbl.returns.as_deref(), Some("TABLE(x integer, y text)"));
    assert_eq!(tbl.body, " SELECT n, 'it''s' ");
    assert!(tbl.security_definer);
    assert_eq!(tbl.volatility, Volatility::Stable);

    let setof = routine(&schema, "public", "setof_users()");
    assert_eq!(setof.returns.as_deref(), Some("SETOF public.users"));

    let touch = routine(&schema, "public", "touch()");
    assert_eq!(
        touch.body,
        "\nBEGIN\n  NEW.updated_at := now();\n  RETURN NEW;\nEND;\n"
    );
    assert_eq!(touch.comment.as_deref(), Some("sets updated_at"));
    assert_eq!(
        (touch.arguments.as_str(), touch.returns.as_deref()),
        ("", Some("trigger"))
    );
    assert_eq!(touch.volatility, Volatility::Volatile);
}

#[test]
fn procedures_have_no_result_and_comments_find_them_by_identity() {
    let schema = read(DUMP);
    let cleanup = routine(&schema, "public", "cleanup(IN days integer)");
    assert_eq!(cleanup.kind, RoutineKind::Procedure);
    assert_eq!(cleanup.arguments, "IN days integer DEFAULT 30");
    assert_eq!(cleanup.returns, None);
    assert_eq!(cleanup.comment.as_deref(), Some("old rows"));
}

#[test]
fn triggers_are_kept_as_pg_get_triggerdef_prints_them() {
    let schema = read(DUMP);
    let defs: Vec<(&str, &str)> = schema
        .triggers
        .values()
        .map(|t| (t.name.as_str(), t.definition.as_str()))
        .collect();
    assert_eq!(
        defs,
        [
            (
                "users_touch",
                "CREATE TRIGGER users_touch BEFORE UPDATE ON public.users FOR EACH ROW EXECUTE FUNCTION public.touch()"
            ),
            (
                "users_touch2",
                "CREATE TRIGGER users_touch2 AFTER INSERT OR UPDATE OF email ON public.users FOR EACH ROW WHEN ((new.email IS NOT NULL)) EXECUTE FUNCTION public.touch()"
            ),
        ]
    );
    let t = schema.triggers.values().next().expect("a trigger");
    assert_eq!(t.table, QualifiedName::new("public", "users"));
}

#[test]
fn or_replace_layout_and_the_old_execute_procedure_are_canonicalised() {
    let schema = read(
        "CREATE TABLE users (id int);\n\
         CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';\n\
         CREATE OR REPLACE TRIGGER t\n  BEFORE UPDATE ON users\n  FOR EACH ROW EXECUTE PROCEDURE touch();\n\
         CREATE OR REPLACE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $b$BEGIN RETURN OLD; END$b$;",
    );
    let t = schema.triggers.values().next().expect("a trigger");
    assert_eq!(
        t.definition,
        "CREATE TRIGGER t BEFORE UPDATE ON users FOR EACH ROW EXECUTE FUNCTION touch()"
    );
    assert_eq!(t.table, QualifiedName::new("public", "users"));
    assert_eq!(
        routine(&schema, "public", "touch()").body,
        "BEGIN RETURN OLD; END"
    );
}

#[test]
fn a_trigger_needs_its_table_and_a_routine_its_single_declaration() {
    let err = parse_document(
        PG,
        "dump.sql",
        "CREATE TRIGGER t BEFORE UPDATE ON public.ghost FOR EACH ROW EXECUTE FUNCTION public.f();",
    )
    .expect_err("an undeclared table");
    assert!(
        matches!(&err, ReadError::BadReference { what, .. } if what == "table public.ghost"),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "dump.sql:1:35: table public.ghost does not exist"
    );

    let twice = "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1';\n\
                 CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 2';";
    let err = parse_document(PG, "dump.sql", twice).expect_err("declared twice");
    assert!(matches!(err, ReadError::Duplicate { .. }), "{err}");
    // Overloads are distinct routines.
    let overloads = "CREATE FUNCTION f(a integer) RETURNS int LANGUAGE sql AS 'SELECT 1';\n\
                     CREATE FUNCTION f(a text) RETURNS int LANGUAGE sql AS 'SELECT 2';";
    assert_eq!(read(overloads).routines.len(), 2);
}

#[test]
fn attributes_the_model_cannot_hold_are_refused_by_name_where_they_stand() {
    for (text, says) in [
        (
            "CREATE FUNCTION public.sp() RETURNS integer\n    LANGUAGE sql\n    SET search_path FROM CURRENT\n    AS $$select 1$$;",
            "SET search_path FROM CURRENT on a function",
        ),
        (
            "\nCREATE PROCEDURE public.par()\n    LANGUAGE sql PARALLEL SAFE\n    AS $$select 1$$;",
            "PARALLEL",
        ),
        (
            "CREATE FUNCTION public.atomic(a integer) RETURNS integer\n    LANGUAGE sql\n    BEGIN ATOMIC\n SELECT (a + 1);\nEND;",
            "SQL-standard function body (BEGIN",
        ),
        (
            "CREATE FUNCTION public.ret(a integer) RETURNS integer\n    LANGUAGE sql\n    RETURN (a + 1);",
            "SQL-standard function body (RETURN",
        ),
        (
            "CREATE FUNCTION public.w() RETURNS integer\n    LANGUAGE c WINDOW\n    AS '$libdir/x', 'w';",
            "WINDOW",
        ),
        (
            "CREATE FUNCTION public.c() RETURNS integer\n    LANGUAGE c\n    AS '$libdir/x', 'c';",
            "compiled code",
        ),
    ] {
        let (what, line, column) = refusal(text);
        assert!(what.contains(says), "{text}: {what}");
        assert!(line >= 2 && column >= 1, "{text}: at {line}:{column}");
    }
    let (what, line, column) = refusal(
        "\n\nCREATE FUNCTION public.sp() RETURNS integer\n    LANGUAGE sql\n    SET search_path FROM CURRENT\n    AS $$select 1$$;",
    );
    assert_eq!((line, column), (5, 5), "{what}");
}

#[test]
fn mysql_routines_are_read_into_their_own_map() {
    // PostgreSQL's routines are above; MySQL's are read by `read/sql/program` (tests/read_mysql_stored.rs).
    let doc = parse_document(
        Dialect::Mysql,
        "dump.sql",
        "CREATE FUNCTION f() RETURNS int RETURN 1;\nCREATE PROCEDURE p() SELECT 1;",
    )
    .expect("reads");
    assert!(doc.schema.routines.is_empty());
    assert_eq!(doc.schema.stored_routines.len(), 2);
}
