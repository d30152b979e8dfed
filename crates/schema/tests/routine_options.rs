//! PostgreSQL function options (`SET`, `PARALLEL`, `LEAKPROOF`, `COST`, `ROWS`): read as pg_dump
//! writes them and as people write them, into the spelling `pg_proc` keeps; round-tripped through
//! `schema.hcl`; rendered back into `CREATE FUNCTION`.

use ptah_schema::read::{hcl, sql};
use ptah_schema::render::create_routine_statement;
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, Parallel, QualifiedName, Routine, Schema};

const PG: Dialect = Dialect::Postgres;

fn read(text: &str) -> Schema {
    sql::parse(PG, "options.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

fn routine<'a>(schema: &'a Schema, key: &str) -> &'a Routine {
    &schema.routines[&QualifiedName::new("public", key)]
}

#[test]
fn dumped_and_hand_written_settings_read_alike() {
    let dumped = read(
        "CREATE FUNCTION public.f() RETURNS integer\n    LANGUAGE sql SECURITY DEFINER\n    \
         SET search_path TO 'public', 'pg_temp'\n    SET work_mem TO '8MB'\n    AS $$ SELECT 1 $$;\n",
    );
    let written = read(
        "CREATE FUNCTION f() RETURNS integer LANGUAGE sql SECURITY DEFINER \
         SET search_path = public, pg_temp SET Work_Mem = '8MB' AS $$ SELECT 1 $$;\n",
    );
    assert_eq!(dumped, written);
    assert_eq!(
        routine(&dumped, "f()").options.settings,
        ["search_path=public, pg_temp", "work_mem=8MB"]
    );
    let quoted = read(
        "CREATE FUNCTION f() RETURNS integer LANGUAGE sql SET search_path TO \"$user\", public AS $$ SELECT 1 $$;\n",
    );
    assert_eq!(
        routine(&quoted, "f()").options.settings,
        ["search_path=\"$user\", public"]
    );
}

#[test]
fn parallel_leakproof_and_estimates_are_read_and_defaults_drop_out() {
    let schema = read(
        "CREATE FUNCTION a(n integer) RETURNS integer LANGUAGE sql IMMUTABLE LEAKPROOF PARALLEL SAFE COST 10.0 AS $$ SELECT n $$;\n\
         CREATE FUNCTION b() RETURNS SETOF integer LANGUAGE sql PARALLEL RESTRICTED ROWS 5 AS $$ SELECT 1 $$;\n\
         CREATE FUNCTION c() RETURNS integer LANGUAGE sql NOT LEAKPROOF PARALLEL UNSAFE COST 100 AS $$ SELECT 1 $$;\n",
    );
    let a = &routine(&schema, "a(n integer)").options;
    assert!(a.leakproof);
    assert_eq!(a.parallel, Some(Parallel::Safe));
    assert_eq!(a.cost.as_deref(), Some("10"));
    let b = &routine(&schema, "b()").options;
    assert_eq!(b.parallel, Some(Parallel::Restricted));
    assert_eq!(b.rows.as_deref(), Some("5"));
    assert!(routine(&schema, "c()").options.is_default());
}

#[test]
fn options_round_trip_through_schema_hcl_and_render() {
    let schema = read(
        "CREATE FUNCTION a(n integer) RETURNS integer LANGUAGE sql LEAKPROOF PARALLEL SAFE COST 0.5 \
         SET search_path = public SET work_mem = '1MB' AS $$ SELECT n $$;\n",
    );
    let written = to_hcl(PG, &schema);
    let back = hcl::parse(PG, "f.hcl", &written).unwrap_or_else(|e| panic!("{e}\n{written}"));
    assert_eq!(back, schema, "{written}");
    let sql = create_routine_statement(routine(&schema, "a(n integer)"));
    for part in [
        " LEAKPROOF",
        " PARALLEL SAFE",
        " COST 0.5",
        "SET search_path TO public",
        "SET work_mem TO '1MB'",
    ] {
        assert!(sql.contains(part), "{part} in {sql}");
    }
}

#[test]
fn what_stays_unmodelled_is_refused_by_name() {
    for (text, name) in [
        (
            "CREATE FUNCTION f() RETURNS integer LANGUAGE sql SET search_path FROM CURRENT AS $$ SELECT 1 $$;",
            "FROM CURRENT",
        ),
        (
            "CREATE PROCEDURE p() LANGUAGE sql PARALLEL SAFE AS $$ SELECT 1 $$;",
            "PARALLEL",
        ),
        (
            "CREATE FUNCTION f() RETURNS integer LANGUAGE sql WINDOW AS $$ SELECT 1 $$;",
            "WINDOW",
        ),
    ] {
        let e = sql::parse(PG, "x.sql", text).expect_err(text);
        assert!(e.to_string().contains(name), "{e}");
    }
}
