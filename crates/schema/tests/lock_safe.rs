//! PostgreSQL index changes on existing tables plan the forms that let writers go on (issue 37):
//! `CREATE|DROP INDEX CONCURRENTLY`, outside the transaction, with an added index's comment after
//! it; unique indexes (a foreign key of the plan may need one in the transaction), indexes of a
//! new table and of a partitioned table keep the plain forms; MySQL is unchanged.

use ptah_schema::read::sql::parse;
use ptah_schema::{Dialect, PlanOptions, Schema, plan};

fn read(dialect: Dialect, sql: &str) -> Schema {
    parse(dialect, "schema.sql", sql).expect("the DDL reads")
}

fn planned(dialect: Dialect, before: &str, after: &str) -> Vec<(String, bool)> {
    let p = plan(
        &read(dialect, after),
        &read(dialect, before),
        dialect,
        &PlanOptions::default(),
    )
    .expect("plan");
    p.statements
        .into_iter()
        .map(|s| (s.sql, s.transactional))
        .collect()
}

const ORDERS: &str = "CREATE TABLE public.orders (id bigint PRIMARY KEY, sku text, total int);\n";

#[test]
fn an_index_on_an_existing_table_is_built_concurrently_and_its_comment_follows_it() {
    let after = format!(
        "{ORDERS}CREATE INDEX orders_sku ON public.orders (sku);\nCOMMENT ON INDEX public.orders_sku IS 'by sku';\n"
    );
    let got = planned(Dialect::Postgres, ORDERS, &after);
    assert_eq!(
        got,
        [
            (
                r#"CREATE INDEX CONCURRENTLY "orders_sku" ON "public"."orders" ("sku")"#.to_owned(),
                false
            ),
            (
                r#"COMMENT ON INDEX "public"."orders_sku" IS 'by sku'"#.to_owned(),
                false
            ),
        ]
    );
}

#[test]
fn unique_new_and_partitioned_tables_keep_the_plain_forms() {
    let unique = format!("{ORDERS}CREATE UNIQUE INDEX orders_sku ON public.orders (sku);\n");
    assert!(
        planned(Dialect::Postgres, ORDERS, &unique)
            .iter()
            .all(|(sql, tx)| *tx && !sql.contains("CONCURRENTLY"))
    );

    let new_table = format!("{ORDERS}CREATE INDEX orders_sku ON public.orders (sku);\n");
    assert!(
        planned(Dialect::Postgres, "", &new_table)
            .iter()
            .all(|(sql, tx)| *tx && !sql.contains("CONCURRENTLY"))
    );

    let parent = "CREATE TABLE public.events (id bigint, at date) PARTITION BY RANGE (at);\n";
    let indexed = format!("{parent}CREATE INDEX events_at ON public.events (at);\n");
    let got = planned(Dialect::Postgres, parent, &indexed);
    assert!(!got.is_empty());
    assert!(
        got.iter().all(|(sql, tx)| *tx && !sql.contains("CONCURRENTLY")),
        "{got:?}"
    );
}

#[test]
fn mysql_index_changes_are_unchanged() {
    let before = "CREATE TABLE orders (id bigint PRIMARY KEY, sku varchar(20));\n";
    let after = "CREATE TABLE orders (id bigint PRIMARY KEY, sku varchar(20), KEY orders_sku (sku));\n";
    let got = planned(Dialect::Mysql, before, after);
    assert!(!got.is_empty());
    assert!(
        got.iter().all(|(sql, tx)| *tx && !sql.contains("CONCURRENTLY")),
        "{got:?}"
    );
}
