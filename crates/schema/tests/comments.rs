//! Index comments (PostgreSQL): read from `COMMENT ON INDEX` and `schema.hcl`, written back, and
//! planned as comments alone, never as a rebuilt index.

use ptah_schema::read::{hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, PlanOptions, QualifiedName, Schema, plan};

const PG: Dialect = Dialect::Postgres;

fn read(text: &str) -> Schema {
    sql::parse(PG, "comments.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

const BASE: &str = "CREATE TABLE public.t (id integer PRIMARY KEY, email text);\n\
                    CREATE INDEX t_email ON public.t USING btree (email);\n";

#[test]
fn index_comments_read_from_sql_and_round_trip_through_schema_hcl() {
    let schema = read(&format!(
        "{BASE}COMMENT ON INDEX public.t_email IS 'login lookups';\n"
    ));
    let t = &schema.tables[&QualifiedName::new("public", "t")];
    assert_eq!(
        t.index_comments.get("t_email").map(String::as_str),
        Some("login lookups")
    );
    let written = to_hcl(PG, &schema);
    assert!(written.contains("comment = \"login lookups\""), "{written}");
    let back = hcl::parse(PG, "t.hcl", &written).expect("reads back");
    assert_eq!(back, schema);
    assert_eq!(back.fingerprint(), schema.fingerprint());
}

#[test]
fn a_comment_on_an_unknown_index_is_refused_and_a_mysql_index_comment_reads_from_both_forms() {
    let err = sql::parse(
        PG,
        "c.sql",
        &format!("{BASE}COMMENT ON INDEX public.nope IS 'x';\n"),
    )
    .expect_err("no such index");
    assert!(err.to_string().contains("nope"), "{err}");
    let text = "table \"t\" {\n  column \"id\" {\n    type = int\n  }\n  index \"i\" {\n    columns = [column.id]\n    comment = \"x\"\n  }\n}\n";
    let from_hcl = hcl::parse(Dialect::Mysql, "t.hcl", text).expect("MySQL index comments");
    let from_sql = sql::parse(
        Dialect::Mysql,
        "t.sql",
        "CREATE TABLE t (id int NOT NULL, KEY i (id) COMMENT 'x');",
    )
    .expect("reads");
    let comments = |s: &ptah_schema::Schema| s.tables.values().next().map(|t| t.index_comments.clone());
    assert_eq!(comments(&from_hcl), comments(&from_sql));
    assert_eq!(
        comments(&from_sql).and_then(|c| c.get("i").cloned()).as_deref(),
        Some("x")
    );
}

#[test]
fn a_changed_comment_is_one_statement_and_the_index_stays() {
    let live = read(&format!("{BASE}COMMENT ON INDEX public.t_email IS 'old';\n"));
    let want = read(&format!("{BASE}COMMENT ON INDEX public.t_email IS 'new';\n"));
    let planned = plan(&want, &live, PG, &PlanOptions::default()).expect("plan");
    let sql: Vec<&str> = planned.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(sql, ["COMMENT ON INDEX \"public\".\"t_email\" IS 'new'"]);
    let cleared = plan(&read(BASE), &live, PG, &PlanOptions::default()).expect("plan");
    assert_eq!(cleared.statements.len(), 1);
    assert!(cleared.statements[0].sql.ends_with("IS NULL"));
    // A rebuilt index loses its comment: it is set again after the index is created.
    let rebuilt = read(&format!(
        "{}COMMENT ON INDEX public.t_email IS 'old';\n",
        BASE.replace("(email)", "(lower(email))")
    ));
    let planned = plan(&rebuilt, &live, PG, &PlanOptions::default()).expect("plan");
    let last = planned.statements.last().expect("statements");
    assert_eq!(last.sql, "COMMENT ON INDEX \"public\".\"t_email\" IS 'old'");
}

#[test]
fn a_mysql_unique_key_with_a_comment_is_a_unique_index() {
    let schema = sql::parse(
        Dialect::Mysql,
        "c.sql",
        "CREATE TABLE t (id int NOT NULL PRIMARY KEY, e varchar(9), UNIQUE KEY t_e (e) COMMENT 'lookups');",
    )
    .expect("MySQL index comments are modelled");
    let t = schema.tables.values().next().expect("a table");
    assert!(t.uniques.is_empty());
    assert!(t.indexes["t_e"].unique);
    assert_eq!(t.index_comments["t_e"], "lookups");
}
