//! PostgreSQL aggregates: read as pg_dump writes them (the pagila/dvdrental `group_concat`),
//! hand-written options brought to the same text, written to and read from `schema.hcl`, and
//! planned after their support functions and before the views that call them.

use ptah_schema::read::{hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, PlanOptions, QualifiedName, RoutineKind, Schema, plan};

const PG: Dialect = Dialect::Postgres;

fn read(text: &str) -> Schema {
    sql::parse(PG, "aggregates.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

const DUMP: &str = r#"
CREATE FUNCTION public._group_concat(text, text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $_$
SELECT CASE
  WHEN $2 IS NULL THEN $1
  WHEN $1 IS NULL THEN $2
  ELSE $1 || ', ' || $2
END
$_$;
ALTER FUNCTION public._group_concat(text, text) OWNER TO postgres;
CREATE AGGREGATE public.group_concat(text) (
    SFUNC = public._group_concat,
    STYPE = text
);
ALTER AGGREGATE public.group_concat(text) OWNER TO postgres;
COMMENT ON AGGREGATE public.group_concat(text) IS 'joins with commas';
CREATE TABLE public.film (id integer NOT NULL, title text);
CREATE VIEW public.titles AS
 SELECT public.group_concat(film.title) AS titles
   FROM public.film;
"#;

fn key() -> QualifiedName {
    QualifiedName::new("public", "group_concat(text)")
}

#[test]
fn a_dumped_aggregate_is_read_with_its_options_as_printed() {
    let schema = read(DUMP);
    let agg = &schema.routines[&key()];
    assert_eq!(agg.kind, RoutineKind::Aggregate);
    assert_eq!(agg.arguments, "text");
    assert_eq!(agg.body, "SFUNC = public._group_concat,\n    STYPE = text");
    assert_eq!(agg.comment.as_deref(), Some("joins with commas"));
}

#[test]
fn hand_written_options_read_as_the_dump_prints_them() {
    let schema = read(
        "CREATE FUNCTION _group_concat(text, text) RETURNS text LANGUAGE sql AS $$ SELECT $1 || $2 $$;\n\
         CREATE AGGREGATE group_concat (text) (stype = text, sfunc = _group_concat, parallel = unsafe);\n\
         CREATE AGGREGATE total(int) (SFUNC = int4pl, STYPE = int4, INITCOND = 0, PARALLEL = SAFE, \
         FINALFUNC_MODIFY = read_only);\n",
    );
    assert_eq!(
        schema.routines[&key()].body,
        "SFUNC = public._group_concat,\n    STYPE = text"
    );
    let total = &schema.routines[&QualifiedName::new("public", "total(int)")];
    assert_eq!(
        total.body,
        "SFUNC = int4pl,\n    STYPE = integer,\n    INITCOND = '0',\n    PARALLEL = safe"
    );
}

#[test]
fn moving_and_ordered_set_aggregates_are_refused_by_name() {
    for text in [
        "CREATE AGGREGATE a(int) (SFUNC = int4pl, STYPE = int4, MSFUNC = int4pl, MINVFUNC = int4mi, MSTYPE = int4);",
        "CREATE AGGREGATE b(ORDER BY int) (SFUNC = f, STYPE = int4);",
        "CREATE AGGREGATE c(BASETYPE = int, SFUNC = int4pl, STYPE = int4);",
    ] {
        let e = sql::parse(PG, "x.sql", text).expect_err(text);
        assert!(
            e.to_string().contains("not modelled") || e.to_string().contains("expected"),
            "{e}"
        );
    }
}

#[test]
fn aggregates_round_trip_through_schema_hcl() {
    let schema = read(DUMP);
    let written = to_hcl(PG, &schema);
    assert!(written.contains("aggregate \"group_concat\""), "{written}");
    let back = hcl::parse(PG, "a.hcl", &written).unwrap_or_else(|e| panic!("{e}\n{written}"));
    assert_eq!(back, schema);
}

#[test]
fn an_aggregate_comes_after_its_function_and_before_the_views_and_goes_before_it() {
    let schema = read(DUMP);
    let created = plan(&schema, &Schema::default(), PG, &PlanOptions::default()).expect("plans");
    let sql: Vec<&str> = created.statements.iter().map(|s| s.sql.as_str()).collect();
    let at = |needle: &str| {
        sql.iter()
            .position(|s| s.starts_with(needle))
            .unwrap_or_else(|| panic!("{needle} in {sql:#?}"))
    };
    assert!(at("CREATE FUNCTION") < at("CREATE AGGREGATE"), "{sql:#?}");
    assert!(at("CREATE TABLE") < at("CREATE AGGREGATE"), "{sql:#?}");
    assert!(at("CREATE AGGREGATE") < at("CREATE VIEW"), "{sql:#?}");
    assert!(
        sql[at("CREATE AGGREGATE")].contains("(\n    SFUNC = public._group_concat,\n    STYPE = text\n)")
    );
    let dropped = plan(&Schema::default(), &schema, PG, &PlanOptions::default()).expect("plans");
    let sql: Vec<&str> = dropped.statements.iter().map(|s| s.sql.as_str()).collect();
    let agg = sql
        .iter()
        .position(|s| s.starts_with("DROP AGGREGATE"))
        .expect("drops it");
    let fun = sql
        .iter()
        .position(|s| s.starts_with("DROP FUNCTION"))
        .expect("drops it");
    assert!(agg < fun, "{sql:#?}");
}
