//! Partitioned tables on a real PostgreSQL 15: a document with range, list and hash partitioning
//! (a default partition, partitioned indexes and keys, inherited checks and foreign keys) applies
//! to an empty database, re-plans empty and inspects equal to itself; a new partition, a bound
//! change (detach + attach), a partition detached as a plain table and a plain table attached
//! each converge; rows outside a new bound make the server refuse, and a key change is refused
//! before any statement. A hand-written key or bound the server prints as the live one compares
//! equal.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, Error, InspectScope, apply, comparable, inspect, verify};
use ptah_schema::{PlanError, PlanOptions, QualifiedName, Schema, Severity, read};

const PG: Dialect = Dialect::Postgres;

const DOCUMENT: &str = "
CREATE SCHEMA app;
CREATE TABLE app.users (id integer PRIMARY KEY);
CREATE TABLE app.events (
    id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    kind text,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
COMMENT ON COLUMN app.events.kind IS 'what happened';
CREATE TABLE app.events_2024 PARTITION OF app.events FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00');
CREATE TABLE app.events_default PARTITION OF app.events DEFAULT;
COMMENT ON TABLE app.events_default IS 'anything else';
CREATE INDEX events_kind_idx ON app.events (kind);
CREATE INDEX events_2024_id_idx ON app.events_2024 (id);
CREATE TABLE app.orders (
    id integer NOT NULL,
    region text NOT NULL,
    user_id integer REFERENCES app.users,
    CONSTRAINT orders_id_check CHECK (id > 0)
) PARTITION BY LIST (region);
CREATE TABLE app.orders_eu PARTITION OF app.orders FOR VALUES IN ('de', 'fr');
CREATE TABLE app.orders_us PARTITION OF app.orders (CONSTRAINT orders_us_small CHECK (id < 1000)) FOR VALUES IN ('us');
CREATE TABLE app.sessions (id integer NOT NULL, token text) PARTITION BY HASH (id);
CREATE TABLE app.sessions_0 PARTITION OF app.sessions FOR VALUES WITH (modulus 2, remainder 0);
CREATE TABLE app.sessions_1 PARTITION OF app.sessions FOR VALUES WITH (modulus 2, remainder 1);
CREATE UNIQUE INDEX sessions_id_key ON app.sessions (id);
";

fn document(text: &str) -> Schema {
    read::sql::parse(PG, "partitions.sql", text).unwrap_or_else(|e| panic!("the document reads: {e}"))
}

fn scope() -> InspectScope {
    InspectScope {
        namespaces: Some(["app".to_owned()].into()),
        ..InspectScope::default()
    }
}

async fn live(db: &Fresh) -> Schema {
    let mut session = db.session().await;
    let schema = inspect(&mut session, &scope()).await.expect("inspect");
    session.close().await.expect("close");
    schema
}

async fn plan(db: &Fresh, want: &Schema) -> Result<ptah_schema::Plan, PlanError> {
    ptah_schema::plan(want, &live(db).await, PG, &PlanOptions::default())
}

/// Plans, applies and verifies; returns the statements with their severities.
async fn converge(db: &Fresh, want: &Schema) -> Vec<(String, Severity)> {
    let planned = plan(db, want).await.expect("plans");
    let mut session = db.session().await;
    let opts = ApplyOptions {
        scope: scope(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &planned, &opts).await.expect("apply");
    verify(&mut session, want, &scope(), &PlanOptions::default())
        .await
        .expect("converged");
    session.close().await.expect("close");
    assert!(plan(db, want).await.expect("plans").is_empty(), "re-plans empty");
    planned
        .statements
        .into_iter()
        .map(|s| (s.sql, s.severity))
        .collect()
}

#[tokio::test]
async fn partitioned_tables_apply_to_an_empty_database_and_inspect_equal_to_the_document() {
    let db = Fresh::new(PG, "partitions_pg_apply").await;
    let want = document(DOCUMENT);
    let created = converge(&db, &want).await;
    assert!(
        created
            .iter()
            .any(|(s, _)| s.starts_with("CREATE TABLE \"app\".\"events_default\" PARTITION OF")),
        "{created:#?}"
    );
    let inspected = live(&db).await;
    assert_eq!(inspected, want);
    // What the partitions inherit is in the catalog but not in the model.
    let events_2024 = &inspected.tables[&QualifiedName::new("app", "events_2024")];
    assert_eq!(events_2024.primary_key, None);
    assert_eq!(
        events_2024.indexes.keys().collect::<Vec<_>>(),
        ["events_2024_id_idx"]
    );
    assert!(
        inspected.tables[&QualifiedName::new("app", "orders_eu")]
            .foreign_keys
            .is_empty()
    );
    let hcl = ptah_schema::write::hcl::to_hcl(PG, &inspected);
    let back = read::hcl::parse(PG, "inspected.hcl", &hcl).unwrap_or_else(|e| panic!("{e}\n{hcl}"));
    assert_eq!(back, want, "{hcl}");
    db.drop().await;
}

#[tokio::test]
async fn partitions_are_added_rebound_detached_and_attached_and_each_change_converges() {
    let db = Fresh::new(PG, "partitions_pg_change").await;
    converge(&db, &document(DOCUMENT)).await;
    db.run("INSERT INTO app.events VALUES (1, '2024-06-01', 'a'), (2, '2030-01-01', 'b');")
        .await;

    // A new partition of an existing parent: a warning, since the server scans the default
    // partition (which holds no row of its range).
    let added = format!(
        "{DOCUMENT}CREATE TABLE app.events_2025 PARTITION OF app.events FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2026-01-01 00:00:00+00');\n"
    );
    let statements = converge(&db, &document(&added)).await;
    assert_eq!(statements.len(), 1, "{statements:#?}");
    assert_eq!(statements[0].1, Severity::Warning);

    // A wider bound: detach, then attach again.
    let wider = added.replace("TO ('2026-01-01 00:00:00+00')", "TO ('2027-01-01 00:00:00+00')");
    let statements = converge(&db, &document(&wider)).await;
    assert_eq!(
        statements,
        [
            (
                "ALTER TABLE \"app\".\"events\" DETACH PARTITION \"app\".\"events_2025\"".to_owned(),
                Severity::Warning
            ),
            (
                "ALTER TABLE \"app\".\"events\" ATTACH PARTITION \"app\".\"events_2025\" FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2027-01-01 00:00:00+00')".to_owned(),
                Severity::Warning
            ),
        ]
    );

    // The default partition declared as a plain table with the key and index the server leaves
    // it: detached, its row kept.
    let plain = wider.replace(
        "CREATE TABLE app.events_default PARTITION OF app.events DEFAULT;",
        "CREATE TABLE app.events_default (id bigint NOT NULL, created_at timestamp with time zone NOT NULL, kind text, PRIMARY KEY (id, created_at));
         CREATE INDEX ON app.events_default (kind);",
    );
    let statements = converge(&db, &document(&plain)).await;
    assert_eq!(
        statements,
        [(
            "ALTER TABLE \"app\".\"events\" DETACH PARTITION \"app\".\"events_default\"".to_owned(),
            Severity::Warning
        )]
    );

    // And attached again as the default partition.
    let statements = converge(&db, &document(&wider)).await;
    assert_eq!(
        statements,
        [(
            "ALTER TABLE \"app\".\"events\" ATTACH PARTITION \"app\".\"events_default\" DEFAULT".to_owned(),
            Severity::Warning
        )]
    );

    // A list partition declared plain with the check and foreign key it keeps from its parent.
    let orders_plain = wider.replace(
        "CREATE TABLE app.orders_eu PARTITION OF app.orders FOR VALUES IN ('de', 'fr');",
        "CREATE TABLE app.orders_eu (id integer NOT NULL, region text NOT NULL, user_id integer,
             CONSTRAINT orders_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users,
             CONSTRAINT orders_id_check CHECK (id > 0));",
    );
    let statements = converge(&db, &document(&orders_plain)).await;
    assert_eq!(
        statements,
        [(
            "ALTER TABLE \"app\".\"orders\" DETACH PARTITION \"app\".\"orders_eu\"".to_owned(),
            Severity::Warning
        )]
    );
    converge(&db, &document(&wider)).await;

    // A column added to the parent reaches every partition through the server.
    let column = wider.replace("    kind text,\n", "    kind text,\n    source text,\n");
    let statements = converge(&db, &document(&column)).await;
    assert_eq!(statements.len(), 1, "{statements:#?}");

    // A bound its rows do not fit: the server refuses, and nothing is applied.
    let narrow = column.replace(
        "FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00')",
        "FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2024-02-01 00:00:00+00')",
    );
    let planned = plan(&db, &document(&narrow)).await.expect("plans");
    let mut session = db.session().await;
    let opts = ApplyOptions {
        scope: scope(),
        ..ApplyOptions::default()
    };
    let refused = apply(&mut session, &planned, &opts).await;
    assert!(
        matches!(&refused, Err(Error::ApplyFailed { error, .. }) if error.contains("violated by some row")),
        "{refused:?}"
    );
    session.close().await.expect("close");
    assert!(
        plan(&db, &document(&column)).await.expect("plans").is_empty(),
        "rolled back"
    );

    // A partition key change is refused, naming the table.
    let rekeyed = column
        .replace("PARTITION BY HASH (id)", "PARTITION BY RANGE (id)")
        .replace("WITH (modulus 2, remainder 0)", "FROM (0) TO (10)")
        .replace("WITH (modulus 2, remainder 1)", "FROM (10) TO (20)");
    match plan(&db, &document(&rekeyed)).await {
        Err(PlanError::PartitionKeyChanged { table, .. }) => assert_eq!(table, "app.sessions"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    db.drop().await;
}

#[tokio::test]
async fn a_hand_written_key_or_bound_the_server_prints_as_the_live_one_is_the_same() {
    let db = Fresh::new(PG, "partitions_pg_bounds").await;
    let hand = DOCUMENT.replace(
        "FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00')",
        "FOR VALUES FROM ('2024-01-01') TO ('2025-01-01')",
    ) + "CREATE TABLE app.sums (a int, b int) PARTITION BY RANGE ((a + b));\n";
    let want = document(&hand);
    let created = plan(&db, &want).await.expect("plans");
    let mut session = db.session().await;
    let opts = ApplyOptions {
        scope: scope(),
        ..ApplyOptions::default()
    };
    apply(&mut session, &created, &opts).await.expect("apply");
    session.batch("SET TIME ZONE 'UTC'").await.expect("time zone");
    let name = QualifiedName::new("app", "events_2024");
    let live = inspect(&mut session, &scope()).await.expect("inspect");
    let bound = |s: &Schema| s.tables[&name].partition_of.clone().map(|p| p.bound);
    assert_eq!(
        bound(&live).as_deref(),
        Some("FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00')")
    );
    assert_ne!(bound(&live), bound(&want), "written otherwise");
    let sums = QualifiedName::new("app", "sums");
    let key = |s: &Schema| s.tables[&sums].partition_by.clone();
    assert_eq!(key(&live).as_deref(), Some("RANGE (((a + b)))"));
    assert_eq!(key(&want).as_deref(), Some("RANGE ((a + b))"));
    let same = comparable(&mut session, &want, &live).await.expect("comparable");
    assert_eq!(bound(&same), bound(&live));
    assert_eq!(key(&same), key(&live));
    let replanned = ptah_schema::plan(&same, &live, PG, &PlanOptions::default()).expect("plans");
    assert!(replanned.is_empty(), "{:#?}", replanned.statements);

    // Another bound stays another bound.
    let other = document(&hand.replace("TO ('2025-01-01')", "TO ('2025-02-01')"));
    let compared = comparable(&mut session, &other, &live).await.expect("comparable");
    assert_eq!(
        bound(&compared).as_deref(),
        Some("FOR VALUES FROM ('2024-01-01') TO ('2025-02-01')")
    );
    let replanned = ptah_schema::plan(&compared, &live, PG, &PlanOptions::default()).expect("plans");
    assert_eq!(replanned.statements.len(), 2, "{:#?}", replanned.statements);
    // And another key another key.
    let rekeyed = document(&hand.replace("RANGE ((a + b))", "RANGE ((a - b))"));
    let compared = comparable(&mut session, &rekeyed, &live)
        .await
        .expect("comparable");
    assert_eq!(key(&compared).as_deref(), Some("RANGE ((a - b))"));
    assert!(matches!(
        ptah_schema::plan(&compared, &live, PG, &PlanOptions::default()),
        Err(PlanError::PartitionKeyChanged { .. })
    ));
    session.close().await.expect("close");
    db.drop().await;
}
