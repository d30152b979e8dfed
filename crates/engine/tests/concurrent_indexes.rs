//! Lock-safe index builds on a real PostgreSQL 15 (issue 37): an index added to an existing table
//! is planned `CREATE INDEX CONCURRENTLY` outside the transaction; the invalid index an interrupted
//! concurrent build leaves behind is not read as the index, and the Apply drops it before it
//! builds again, so the database converges.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, InspectScope, Session, apply, inspect, verify};
use ptah_schema::PlanOptions;

const PG: Dialect = Dialect::Postgres;

const TABLE: &str = "CREATE TABLE orders (id int PRIMARY KEY, sku text)";

async fn index_validity(session: &mut Session, name: &str) -> Option<bool> {
    let probe = format!(
        "DO $$ BEGIN IF (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('{name}')) IS DISTINCT FROM true THEN RAISE EXCEPTION 'not valid'; END IF; END $$"
    );
    let exists =
        format!("DO $$ BEGIN IF to_regclass('{name}') IS NULL THEN RAISE EXCEPTION 'absent'; END IF; END $$");
    if session.batch(&exists).await.is_err() {
        return None;
    }
    Some(session.batch(&probe).await.is_ok())
}

#[tokio::test]
async fn an_interrupted_concurrent_build_is_not_the_index_and_the_next_apply_rebuilds_it() {
    // The desired schema: the table with a plain index on sku.
    let source = Fresh::new(PG, "cic_source").await;
    source
        .run(&format!("{TABLE}; CREATE INDEX orders_sku ON orders (sku)"))
        .await;
    let mut session = source.session().await;
    let scope = InspectScope::all();
    let desired = inspect(&mut session, &scope).await.expect("inspect source");
    session.close().await.expect("close");

    // The target: a unique concurrent build of that name failed on duplicates and left its
    // invalid index behind.
    let target = Fresh::new(PG, "cic_target").await;
    target
        .run(&format!("{TABLE}; INSERT INTO orders VALUES (1, 'a'), (2, 'a')"))
        .await;
    let mut session = target.session().await;
    let failed = session
        .batch("CREATE UNIQUE INDEX CONCURRENTLY orders_sku ON orders (sku)")
        .await;
    assert!(failed.is_err(), "duplicates stop the build");
    assert_eq!(
        index_validity(&mut session, "orders_sku").await,
        Some(false),
        "the leftover"
    );

    let actual = inspect(&mut session, &scope).await.expect("inspect target");
    assert!(
        actual.tables.values().all(|t| t.indexes.is_empty()),
        "an invalid index is not read as the index"
    );
    let planned = ptah_schema::plan(&desired, &actual, PG, &PlanOptions::default()).expect("plan");
    let statements: Vec<(&str, bool)> = planned
        .statements
        .iter()
        .map(|s| (s.sql.as_str(), s.transactional))
        .collect();
    assert_eq!(
        statements,
        [(
            r#"CREATE INDEX CONCURRENTLY "orders_sku" ON "public"."orders" ("sku")"#,
            false
        )]
    );
    let opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    let report = apply(&mut session, &planned, &opts).await.expect("apply");
    assert_eq!(report.applied, 1);
    assert_eq!(index_validity(&mut session, "orders_sku").await, Some(true));
    verify(&mut session, &desired, &scope, &PlanOptions::default())
        .await
        .expect("converged");

    session.close().await.expect("close");
    target.drop().await;
    source.drop().await;
}
