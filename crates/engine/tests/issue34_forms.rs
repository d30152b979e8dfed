//! The PostgreSQL forms the SQL reader used to refuse (issue 34, item 2): loaded as written into
//! a fresh PostgreSQL 15, inspected, and compared with what the reader makes of the same text,
//! object by object: index options, an aggregate, function options, foreign key options and
//! identity options read back exactly as read from the document.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{Dialect, InspectScope, inspect};
use ptah_schema::read::sql;
use ptah_schema::{QualifiedName, Schema};

const DDL: &str = r#"
CREATE SCHEMA app;
CREATE TABLE app.items (
    id integer GENERATED ALWAYS AS IDENTITY (START WITH 100 INCREMENT BY 10 CACHE 5) PRIMARY KEY,
    sku text,
    name character varying(80),
    price numeric,
    seen timestamp with time zone
);
CREATE INDEX items_sku_pattern ON app.items USING btree (sku text_pattern_ops DESC NULLS LAST);
CREATE UNIQUE INDEX items_sku_covering ON app.items USING btree (sku) INCLUDE (price, name) NULLS NOT DISTINCT;
CREATE INDEX items_seen ON app.items USING btree (seen NULLS FIRST) WITH (fillfactor='70', deduplicate_items='off');
CREATE TABLE app.orders (id integer PRIMARY KEY, item_id integer, note text);
ALTER TABLE app.orders ADD CONSTRAINT to_item FOREIGN KEY (item_id) REFERENCES app.items(id)
    MATCH FULL DEFERRABLE INITIALLY DEFERRED;
CREATE FUNCTION app._group_concat(text, text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 5
    SET search_path TO 'app', 'pg_temp'
    AS $_$ SELECT CASE WHEN $2 IS NULL THEN $1 WHEN $1 IS NULL THEN $2 ELSE $1 || ', ' || $2 END $_$;
CREATE AGGREGATE app.group_concat(text) (
    SFUNC = app._group_concat,
    STYPE = text,
    INITCOND = ''
);
"#;

fn table<'a>(s: &'a Schema, name: &str) -> &'a ptah_schema::Table {
    &s.tables[&QualifiedName::new("app", name)]
}

#[tokio::test]
async fn postgres_reads_back_what_the_reader_reads() {
    let declared = sql::parse(Dialect::Postgres, "issue34.sql", DDL).expect("the reader takes every form");
    let db = Fresh::new(Dialect::Postgres, "issue34").await;
    db.run(DDL).await;
    let mut session = db.session().await;
    let live = inspect(&mut session, &InspectScope::of(&declared))
        .await
        .expect("inspected");
    session.close().await.expect("close");
    db.drop().await;

    for name in ["items", "orders"] {
        let (want, have) = (table(&declared, name), table(&live, name));
        assert_eq!(want.indexes, have.indexes, "indexes of {name}");
        assert_eq!(want.foreign_keys, have.foreign_keys, "foreign keys of {name}");
        assert_eq!(want.columns, have.columns, "columns of {name}");
    }
    assert_eq!(declared.routines, live.routines);
}

#[tokio::test]
async fn postgres_refuses_a_modelled_object_that_calls_an_unmodelled_routine() {
    let db = Fresh::new(Dialect::Postgres, "issue34_dep").await;
    db.run(
        "CREATE SCHEMA app;
CREATE TABLE app.t (n integer);
CREATE AGGREGATE app.msum(integer) (SFUNC = int4pl, STYPE = integer,
    MSFUNC = int4pl, MINVFUNC = int4mi, MSTYPE = integer);
CREATE VIEW app.v AS SELECT app.msum(n) AS total FROM app.t;",
    )
    .await;
    let mut session = db.session().await;
    let scope =
        InspectScope::of(&sql::parse(Dialect::Postgres, "s.sql", "CREATE SCHEMA app;").expect("reads"));
    let refused = inspect(&mut session, &scope).await;
    session.close().await.expect("close");
    db.drop().await;
    let err = refused.expect_err("a view over a moving aggregate is refused");
    let text = err.to_string();
    assert!(
        text.contains("view app.v") && text.contains("app.msum(integer)"),
        "{text}"
    );
}
