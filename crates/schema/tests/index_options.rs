//! PostgreSQL index options (`INCLUDE`, `NULLS NOT DISTINCT`, `WITH (…)`, operator classes and
//! nulls order): read from SQL as pg_dump writes them, round-tripped through `schema.hcl`, and
//! planned as a rebuild when they change.

use ptah_schema::read::{hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, PlanOptions, QualifiedName, Schema, plan};

const PG: Dialect = Dialect::Postgres;

fn read(text: &str) -> Schema {
    sql::parse(PG, "index_options.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

const TABLE: &str = "CREATE TABLE public.t (id bigint NOT NULL, sku text, price numeric, seen date);\n";

#[test]
fn every_option_is_read_and_round_trips_through_schema_hcl() {
    let schema = read(&format!(
        "{TABLE}\
         CREATE INDEX t_sku ON public.t USING btree (sku text_pattern_ops DESC NULLS LAST);\n\
         CREATE UNIQUE INDEX t_cover ON public.t USING btree (sku) INCLUDE (price, id) NULLS NOT DISTINCT;\n\
         CREATE INDEX t_seen ON public.t USING btree (seen NULLS FIRST) WITH (fillfactor='70', deduplicate_items=off);\n\
         CREATE INDEX t_q ON public.t USING btree (sku pg_catalog.text_pattern_ops);\n"
    ));
    let t = &schema.tables[&QualifiedName::new("public", "t")];
    let sku = &t.indexes["t_sku"].parts[0];
    assert_eq!(sku.opclass.as_deref(), Some("text_pattern_ops"));
    assert!(sku.descending);
    assert_eq!(sku.nulls_first, Some(false));
    let cover = &t.indexes["t_cover"];
    assert_eq!(cover.include, ["price", "id"]);
    assert!(cover.nulls_not_distinct);
    let seen = &t.indexes["t_seen"];
    assert_eq!(seen.storage, ["deduplicate_items=off", "fillfactor=70"]);
    assert_eq!(seen.parts[0].nulls_first, Some(true));
    assert_eq!(
        t.indexes["t_q"].parts[0].opclass.as_deref(),
        Some("text_pattern_ops")
    );
    let written = to_hcl(PG, &schema);
    let back = hcl::parse(PG, "t.hcl", &written).unwrap_or_else(|e| panic!("reads back: {e}\n{written}"));
    assert_eq!(back, schema, "{written}");
}

#[test]
fn the_default_nulls_order_spelled_out_reads_as_unwritten() {
    let a = read(&format!(
        "{TABLE}CREATE INDEX i ON public.t (sku ASC NULLS LAST, price DESC NULLS FIRST);\n"
    ));
    let b = read(&format!("{TABLE}CREATE INDEX i ON public.t (sku, price DESC);\n"));
    assert_eq!(a, b);
}

#[test]
fn a_changed_option_rebuilds_the_index() {
    let before = read(&format!(
        "{TABLE}CREATE INDEX i ON public.t (sku) WITH (fillfactor=70);\n"
    ));
    let after = read(&format!(
        "{TABLE}CREATE INDEX i ON public.t (sku) WITH (fillfactor=80);\n"
    ));
    let planned = plan(&after, &before, PG, &PlanOptions::default()).expect("plans");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(sql.len(), 2, "{sql:?}");
    assert!(sql[0].starts_with("DROP INDEX"), "{sql:?}");
    assert!(sql[1].contains("WITH (fillfactor='80')"), "{sql:?}");
}

#[test]
fn an_include_column_must_exist() {
    let e = sql::parse(
        PG,
        "x.sql",
        &format!("{TABLE}CREATE INDEX i ON public.t (sku) INCLUDE (nope);\n"),
    )
    .expect_err("refused");
    assert!(e.to_string().contains("nope"), "{e}");
}
