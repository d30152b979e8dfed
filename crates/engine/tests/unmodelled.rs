//! What the model does not hold is listed, never dropped without a word: every such object kind
//! on a real PostgreSQL 15 and MariaDB 10.11, while what the model does hold (and what the server
//! makes itself, or an extension owns) stays out of the list.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{Dialect, InspectScope, Unmodelled, inspect, unmodelled};

fn listed(items: &[Unmodelled]) -> Vec<String> {
    items.iter().map(|u| format!("{}: {}", u.kind, u.name)).collect()
}

#[tokio::test]
async fn postgres_lists_every_unmodelled_kind_and_nothing_it_models() {
    let db = Fresh::new(Dialect::Postgres, "unmodelled_pg").await;
    db.run(
        r"
CREATE EXTENSION citext;
CREATE SCHEMA app;
CREATE TABLE app.orders (id serial PRIMARY KEY, total numeric, code citext, n bigint GENERATED ALWAYS AS IDENTITY);
CREATE VIEW app.big_orders AS SELECT id, total FROM app.orders WHERE total > 100;
CREATE MATERIALIZED VIEW app.totals AS SELECT sum(total) AS t FROM app.orders;
CREATE SEQUENCE app.invoice_no;
CREATE TYPE app.mood AS ENUM ('ok');
COMMENT ON TYPE app.mood IS 'feelings';
COMMENT ON CONSTRAINT orders_pkey ON app.orders IS 'the key';
CREATE TABLE app.rooms (room int UNIQUE DEFERRABLE, during int4range, EXCLUDE USING gist (during WITH &&));
CREATE DOMAIN app.positive AS numeric CHECK (VALUE > 0);
CREATE TYPE app.pair AS (a int, b int);
CREATE TYPE app.span AS RANGE (subtype = int4);
CREATE FUNCTION app.touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE PROCEDURE app.noop() LANGUAGE sql AS $$ SELECT 1 $$;
CREATE TRIGGER orders_touch BEFORE UPDATE ON app.orders FOR EACH ROW EXECUTE FUNCTION app.touch();
COMMENT ON TRIGGER orders_touch ON app.orders IS 'touches';
CREATE FUNCTION app.fast() RETURNS int LANGUAGE sql PARALLEL SAFE AS $$ SELECT 1 $$;
CREATE FUNCTION app.standard() RETURNS int LANGUAGE sql RETURN 1;
CREATE AGGREGATE app.total(int) (SFUNC = int4pl, STYPE = int, MSFUNC = int4pl, MINVFUNC = int4mi, MSTYPE = int);
CREATE AGGREGATE app.plain_total(int) (SFUNC = int4pl, STYPE = int);
CREATE TRIGGER orders_off BEFORE INSERT ON app.orders FOR EACH ROW EXECUTE FUNCTION app.touch();
ALTER TABLE app.orders DISABLE TRIGGER orders_off;
CREATE TABLE app.events (id int, at date) PARTITION BY RANGE (at);
CREATE TABLE app.events_2024 PARTITION OF app.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
ALTER TABLE app.orders ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON app.orders USING (true);
GRANT SELECT ON app.orders TO PUBLIC;
GRANT SELECT ON app.big_orders TO PUBLIC;
GRANT SELECT (total) ON app.orders TO PUBLIC;
CREATE RULE no_delete AS ON DELETE TO app.events_2024 DO INSTEAD NOTHING;
CREATE TRIGGER events_touch BEFORE UPDATE ON app.events FOR EACH ROW EXECUTE FUNCTION app.touch();
",
    )
    .await;
    let mut session = db.session().await;
    let all = unmodelled(&mut session, &["app".to_owned(), "public".to_owned()])
        .await
        .expect("listed");
    assert_eq!(
        listed(&all),
        [
            "aggregate: app.total(integer)",
            "column grants: app.orders",
            "comment on a constraint: app.orders.orders_pkey",
            "comment on an enum type: app.mood",
            "composite type: app.pair",
            "deferrable key (DEFERRABLE PRIMARY KEY or UNIQUE): app.rooms.rooms_room_key",
            "exclusion constraint: app.rooms.rooms_during_excl",
            "function (attributes not modelled): app.standard()",
            "grants: app.big_orders",
            "range type: app.span",
            "rewrite rule: app.events_2024.no_delete",
            "trigger (disabled or replica-only): app.orders.orders_off",
        ],
        "citext's functions and types, the sequences, the views, domain and partitioning \
         (modelled), the views' own rules, the modelled function, procedure, plain aggregate and triggers, a \
         partition's copy of its parent's trigger, and the table's row-level security, policy and \
         grant (modelled) are not listed"
    );
    let other_schema = unmodelled(&mut session, &["public".to_owned()])
        .await
        .expect("listed");
    assert_eq!(listed(&other_schema), Vec::<String>::new());

    // A column of a domain type reads as that type, and the domain itself is modelled.
    session
        .batch("CREATE TABLE app.prices (id int, amount app.positive)")
        .await
        .expect("a domain column");
    let live = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspected");
    let prices = &live.tables[&ptah_schema::QualifiedName::new("app", "prices")];
    assert_eq!(
        prices.column("amount").map(|c| c.data_type.clone()),
        Some(ptah_schema::DataType::Other {
            name: "app.positive".to_owned(),
            params: Vec::new()
        })
    );
    assert!(
        live.domains
            .contains_key(&ptah_schema::QualifiedName::new("app", "positive"))
    );
    let orders = &live.tables[&ptah_schema::QualifiedName::new("app", "orders")].security;
    assert!(
        orders.row_security && orders.policies.contains_key("mine"),
        "{orders:?}"
    );
    assert!(orders.grants.contains_key(ptah_schema::PUBLIC), "{orders:?}");
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn serial_db_mariadb_lists_sub_partitions_sequences_and_trigger_order() {
    let db = Fresh::new(Dialect::Mysql, "unmodelled_my").await;
    for statement in [
        "CREATE TABLE orders (id int PRIMARY KEY, total decimal(10,2))",
        "CREATE VIEW big_orders AS SELECT id FROM orders WHERE total > 100",
        "CREATE FUNCTION double_it(x int) RETURNS int DETERMINISTIC RETURN x * 2",
        "CREATE PROCEDURE noop() SELECT 1",
        "CREATE TRIGGER orders_check BEFORE INSERT ON orders FOR EACH ROW SET NEW.total = NEW.total",
        "CREATE TRIGGER orders_check2 BEFORE INSERT ON orders FOR EACH ROW FOLLOWS orders_check SET NEW.total = NEW.total",
        "CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW odd AS SELECT id FROM orders WITH CHECK OPTION",
        "CREATE EVENT nightly ON SCHEDULE EVERY 1 DAY DISABLE DO SELECT 1",
        "CREATE TABLE logs (id int, at date) PARTITION BY RANGE (YEAR(at)) SUBPARTITION BY HASH (id) SUBPARTITIONS 2 (PARTITION p2024 VALUES LESS THAN (2025), PARTITION pmax VALUES LESS THAN MAXVALUE)",
        "CREATE TABLE plain_partitions (id int) PARTITION BY HASH (id) PARTITIONS 2",
        "CREATE SEQUENCE invoice_no",
    ] {
        db.run(statement).await;
    }
    let mut session = db.session().await;
    let all = unmodelled(&mut session, &[]).await.expect("listed");
    assert_eq!(
        listed(&all),
        [
            "sequence: invoice_no",
            "sub-partitioning (SUBPARTITION BY): logs",
            "trigger order (FOLLOWS/PRECEDES): orders.orders_check2",
        ],
        "views, their options, triggers, routines and events are modelled: only what is not is listed"
    );
    session.close().await.expect("close");
    db.drop().await;
}
