//! PostgreSQL foreign key options (`MATCH FULL`, `DEFERRABLE [INITIALLY DEFERRED]`) read as
//! pg_dump writes them and round-tripped through `schema.hcl`; foreign key names are per table.

use ptah_schema::read::{hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, ForeignKeyOptions, PlanOptions, QualifiedName, Schema, plan};

const PG: Dialect = Dialect::Postgres;

fn read(text: &str) -> Schema {
    sql::parse(PG, "fk.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

const TABLES: &str = "CREATE TABLE public.a (id integer NOT NULL, x integer, y integer);\n\
                      ALTER TABLE ONLY public.a ADD CONSTRAINT a_pkey PRIMARY KEY (id);\n\
                      CREATE TABLE public.b (id integer NOT NULL, a_id integer);\n\
                      CREATE TABLE public.c (id integer NOT NULL, a_id integer);\n";

fn options(schema: &Schema, table: &str, name: &str) -> ForeignKeyOptions {
    schema.tables[&QualifiedName::new("public", table)].foreign_keys[name].options
}

#[test]
fn dumped_options_are_read_and_one_name_serves_two_tables() {
    let schema = read(&format!(
        "{TABLES}\
         ALTER TABLE ONLY public.b ADD CONSTRAINT to_a FOREIGN KEY (a_id) REFERENCES public.a(id) MATCH FULL DEFERRABLE INITIALLY DEFERRED;\n\
         ALTER TABLE ONLY public.c ADD CONSTRAINT to_a FOREIGN KEY (a_id) REFERENCES public.a(id) ON DELETE CASCADE DEFERRABLE;\n"
    ));
    let b = options(&schema, "b", "to_a");
    assert!(b.match_full && b.deferrable && b.initially_deferred, "{b:?}");
    let c = options(&schema, "c", "to_a");
    assert!(!c.match_full && c.deferrable && !c.initially_deferred, "{c:?}");
    let written = to_hcl(PG, &schema);
    let back = hcl::parse(PG, "fk.hcl", &written).unwrap_or_else(|e| panic!("{e}\n{written}"));
    assert_eq!(back, schema, "{written}");
}

#[test]
fn defaults_spelled_out_read_as_unwritten_and_a_change_rebuilds_the_key() {
    let plain = read(&format!(
        "{TABLES}ALTER TABLE public.b ADD CONSTRAINT k FOREIGN KEY (a_id) REFERENCES public.a(id);\n"
    ));
    let spelled = read(&format!(
        "{TABLES}ALTER TABLE public.b ADD CONSTRAINT k FOREIGN KEY (a_id) REFERENCES public.a(id) \
         MATCH SIMPLE NOT DEFERRABLE INITIALLY IMMEDIATE;\n"
    ));
    assert_eq!(plain, spelled);
    let deferred = read(&format!(
        "{TABLES}ALTER TABLE public.b ADD CONSTRAINT k FOREIGN KEY (a_id) REFERENCES public.a(id) INITIALLY DEFERRED;\n"
    ));
    assert!(options(&deferred, "b", "k").deferrable);
    let planned = plan(&deferred, &plain, PG, &PlanOptions::default()).expect("plans");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert!(
        sql.iter().any(|s| s.contains("DEFERRABLE INITIALLY DEFERRED")),
        "{sql:#?}"
    );
}

#[test]
fn match_partial_is_refused_by_name() {
    let e = sql::parse(
        PG,
        "x.sql",
        &format!("{TABLES}ALTER TABLE public.b ADD CONSTRAINT k FOREIGN KEY (a_id) REFERENCES public.a(id) MATCH PARTIAL;\n"),
    )
    .expect_err("refused");
    assert!(e.to_string().contains("MATCH PARTIAL"), "{e}");
}

#[test]
fn exclusion_constraints_and_deferrable_keys_are_refused_by_name() {
    for (text, says) in [
        (
            "CREATE TABLE public.r (during int4range);\n\
             ALTER TABLE ONLY public.r ADD CONSTRAINT r_excl EXCLUDE USING gist (during WITH &&);\n",
            "EXCLUDE",
        ),
        (
            "CREATE TABLE public.r (id integer, CONSTRAINT r_id UNIQUE (id) DEFERRABLE);\n",
            "DEFERRABLE",
        ),
    ] {
        let e = sql::parse(PG, "x.sql", text).expect_err(text);
        assert!(e.to_string().contains(says), "{e}");
    }
}
