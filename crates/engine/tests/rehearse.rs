//! A rehearsal on a real dev database (PostgreSQL 15 and MariaDB): the observed schema is
//! recreated, the plan runs timed, a fresh plan must be empty, and the dev database is put back.
//! The production database is never written.

mod inspect_support;

use inspect_support::{Fresh, table_names};
use ptah_engine::{Dialect, InspectScope, RehearsalOutcome, comparable, inspect, rehearse};
use ptah_schema::{Plan, PlanOptions, Schema, read::sql};

const PG: Dialect = Dialect::Postgres;
const MY: Dialect = Dialect::Mysql;

const LIVE: &str = "CREATE TABLE orders (id int PRIMARY KEY, note varchar(40));\n\
                    CREATE TABLE audit (id int PRIMARY KEY)";
const DESIRED: &str = "CREATE TABLE orders (id int PRIMARY KEY, note varchar(40), sku varchar(20) NOT NULL);\n\
                       CREATE INDEX orders_sku ON orders (sku);\n\
                       CREATE TABLE audit (id int PRIMARY KEY);\n\
                       CREATE TABLE items (id int PRIMARY KEY, order_id int REFERENCES orders (id))";

/// The production side: a database at `LIVE`, and the plan to `DESIRED` with what it saw.
struct Prod {
    db: Fresh,
    observed: Schema,
    desired: Schema,
    plan: Plan,
}

async fn prod(dialect: Dialect, prefix: &str) -> Prod {
    let p = prod_with(dialect, prefix, &format!("{LIVE};\n"), DESIRED).await;
    assert!(p.plan.statements.len() >= 3, "{:?}", p.plan);
    p
}

/// A database at `live`, and the plan to `desired` in the server's spelling with what it saw.
async fn prod_with(dialect: Dialect, prefix: &str, live: &str, desired: &str) -> Prod {
    let db = Fresh::new(dialect, prefix).await;
    db.run(live).await;
    let desired = sql::parse(dialect, "desired.sql", desired).expect("the desired schema reads");
    let mut session = db.session().await;
    let observed = inspect(&mut session, &InspectScope::of(&desired))
        .await
        .expect("inspect");
    let desired = comparable(&mut session, &desired, &observed)
        .await
        .expect("comparable")
        .into_owned();
    session.close().await.expect("close");
    let plan = ptah_schema::plan(&desired, &observed, dialect, &PlanOptions::default()).expect("plans");
    Prod {
        db,
        observed,
        desired,
        plan,
    }
}

async fn rehearsed(dev: &mut ptah_engine::Session, p: &Prod) -> ptah_engine::Rehearsal {
    rehearse(dev, &p.observed, &p.desired, &p.plan, &PlanOptions::default())
        .await
        .expect("rehearses")
}

async fn passes_and_leaves_both_databases_as_they_were(dialect: Dialect) {
    let p = prod(dialect, "rehearse_ok").await;
    let dev = Fresh::new(dialect, "rehearse_dev").await;
    let mut session = dev.session().await;
    let r = rehearsed(&mut session, &p).await;
    assert_eq!(r.outcome, RehearsalOutcome::Passed, "{r:?}");
    assert_eq!(r.reason, None);
    // Every statement, timed, in an Apply's order: the transaction's, then those run alone.
    let indexes: Vec<usize> = r.statements.iter().map(|s| s.index).collect();
    let (in_tx, alone): (Vec<usize>, Vec<usize>) =
        (0..p.plan.statements.len()).partition(|i| p.plan.statements[*i].transactional);
    assert_eq!(
        indexes,
        [in_tx, alone].concat(),
        "every statement, timed, in order"
    );
    assert!(r.restored);
    assert!(
        table_names(&mut session).await.is_empty(),
        "the dev database is empty again"
    );
    session.close().await.expect("close");
    let mut prod = p.db.session().await;
    assert_eq!(
        table_names(&mut prod).await.len(),
        2,
        "production was never written"
    );
    prod.close().await.expect("close");
    dev.drop().await;
    p.db.drop().await;
}

#[tokio::test]
async fn a_plan_that_reaches_the_desired_schema_passes_on_postgresql() {
    passes_and_leaves_both_databases_as_they_were(PG).await;
}

#[tokio::test]
async fn a_plan_that_reaches_the_desired_schema_passes_on_mariadb() {
    passes_and_leaves_both_databases_as_they_were(MY).await;
}

async fn a_failing_statement_fails_by_number(dialect: Dialect) {
    let mut p = prod(dialect, "rehearse_fail").await;
    let last = p.plan.statements.len() - 1;
    // The last statement to run, in the transaction or not.
    p.plan.statements[last].sql = "ALTER TABLE orders ADD COLUMN broken no_such_type".into();
    p.plan.statements[last].transactional = false;
    let dev = Fresh::new(dialect, "rehearse_dev").await;
    let mut session = dev.session().await;
    let r = rehearsed(&mut session, &p).await;
    assert_eq!(r.outcome, RehearsalOutcome::Failed);
    assert_eq!(r.failed_statement_index, Some(last));
    assert_eq!(r.statements.len(), last + 1, "nothing after the failure ran");
    let reason = r.reason.clone().unwrap_or_default();
    assert!(reason.contains(&format!("statement {} of", last + 1)), "{reason}");
    assert!(r.restored, "{r:?}");
    assert!(table_names(&mut session).await.is_empty());
    session.close().await.expect("close");
    dev.drop().await;
    p.db.drop().await;
}

#[tokio::test]
async fn a_failing_statement_fails_the_rehearsal_by_number_on_postgresql() {
    a_failing_statement_fails_by_number(PG).await;
}

#[tokio::test]
async fn a_failing_statement_fails_the_rehearsal_by_number_on_mariadb() {
    a_failing_statement_fails_by_number(MY).await;
}

#[tokio::test]
async fn a_plan_that_runs_but_does_not_converge_fails() {
    let mut p = prod(PG, "rehearse_short").await;
    // The plan as an editor might have left it: one statement gone.
    p.plan.statements.retain(|s| !s.sql.contains("orders_sku"));
    let dev = Fresh::new(PG, "rehearse_dev").await;
    let mut session = dev.session().await;
    let r = rehearsed(&mut session, &p).await;
    assert_eq!(r.outcome, RehearsalOutcome::Failed);
    assert_eq!(r.failed_statement_index, None);
    let reason = r.reason.unwrap_or_default();
    assert!(
        reason.contains("fresh plan") && reason.contains("orders_sku"),
        "{reason}"
    );
    assert!(r.restored);
    session.close().await.expect("close");
    dev.drop().await;
    p.db.drop().await;
}

#[tokio::test]
async fn a_dev_database_holding_other_objects_is_left_alone_and_nothing_is_rehearsed() {
    let p = prod(PG, "rehearse_busy").await;
    let dev = Fresh::new(PG, "rehearse_dev").await;
    dev.run("CREATE TABLE keep_me (id int);\n").await;
    let mut session = dev.session().await;
    let r = rehearsed(&mut session, &p).await;
    assert_eq!(r.outcome, RehearsalOutcome::Inconclusive);
    assert!(r.statements.is_empty() && r.restored);
    assert!(r.reason.unwrap_or_default().contains("empty database"));
    assert_eq!(table_names(&mut session).await, ["public.keep_me"], "untouched");
    session.close().await.expect("close");
    dev.drop().await;
    p.db.drop().await;
}

/// A plan never drops a PostgreSQL schema, so the schemas recreating the observed schema made on
/// the dev database are dropped by the restore itself: a second rehearsal (or another tool) finds
/// the dev database as empty as the first did.
#[tokio::test]
async fn the_schemas_a_rehearsal_created_on_postgresql_are_gone_afterwards() {
    let db = Fresh::new(PG, "rehearse_ns").await;
    db.run("CREATE SCHEMA shop;\nCREATE TABLE shop.orders (id int PRIMARY KEY);\n")
        .await;
    let desired = sql::parse(
        PG,
        "desired.sql",
        "CREATE SCHEMA shop;\nCREATE TABLE shop.orders (id int PRIMARY KEY, note text);\n",
    )
    .expect("reads");
    let mut session = db.session().await;
    let observed = inspect(&mut session, &InspectScope::of(&desired))
        .await
        .expect("inspect");
    session.close().await.expect("close");
    let plan = ptah_schema::plan(&desired, &observed, PG, &PlanOptions::default()).expect("plans");
    let dev = Fresh::new(PG, "rehearse_ns_dev").await;
    let mut session = dev.session().await;
    for round in 1..=2 {
        let r = rehearse(&mut session, &observed, &desired, &plan, &PlanOptions::default())
            .await
            .expect("rehearses");
        assert_eq!(r.outcome, RehearsalOutcome::Passed, "round {round}: {r:?}");
        assert!(r.restored, "round {round}: {r:?}");
        let left = inspect(&mut session, &InspectScope::of(&desired))
            .await
            .expect("inspect");
        assert!(
            left.namespaces.is_empty() && left.tables.is_empty(),
            "round {round}: the dev database holds {:?} {:?}",
            left.namespaces,
            left.tables.keys().collect::<Vec<_>>()
        );
    }
    session.close().await.expect("close");
    dev.drop().await;
    db.drop().await;
}

/// Ten tables, one of which the plan changes: the rehearsal recreates the part the plan touches
/// (the table and the one its foreign key names), and passes there. A statement that fails on
/// that part is rehearsed again on the whole observed schema, whose failure is the one reported.
async fn only_the_touched_part_is_recreated(dialect: Dialect) {
    let mut live = String::from("CREATE TABLE customers (id int PRIMARY KEY);\n");
    for i in 0..8 {
        live.push_str(&format!(
            "CREATE TABLE other_{i} (id int PRIMARY KEY, note varchar(20));\n"
        ));
    }
    // The foreign key's index is declared, as MySQL would otherwise add one the document lacks.
    let orders = "CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers (id));\n\
                  CREATE INDEX orders_customer ON orders (customer_id);\n";
    let added = orders.replace("customer_id int", "sku varchar(20), customer_id int");
    let Prod {
        db,
        observed,
        desired,
        mut plan,
    } = prod_with(
        dialect,
        "rehearse_part",
        &format!("{live}{orders}"),
        &format!("{live}{added}"),
    )
    .await;
    assert_eq!(plan.statements.len(), 1, "{plan:?}");
    let dev = Fresh::new(dialect, "rehearse_part_dev").await;
    let mut session = dev.session().await;

    let r = rehearse(&mut session, &observed, &desired, &plan, &PlanOptions::default())
        .await
        .expect("rehearses");
    assert_eq!(r.outcome, RehearsalOutcome::Passed, "{r:?}");
    assert_eq!(r.recreated_tables, 2, "orders and the customers it names: {r:?}");
    assert!(r.restored && table_names(&mut session).await.is_empty(), "{r:?}");

    plan.statements[0].sql = "ALTER TABLE orders ADD COLUMN broken no_such_type".into();
    let r = rehearse(&mut session, &observed, &desired, &plan, &PlanOptions::default())
        .await
        .expect("rehearses");
    assert_eq!(r.outcome, RehearsalOutcome::Failed, "{r:?}");
    assert_eq!(
        r.recreated_tables, 10,
        "the whole schema, after the part failed: {r:?}"
    );
    assert_eq!(r.failed_statement_index, Some(0));
    assert!(r.restored && table_names(&mut session).await.is_empty(), "{r:?}");
    session.close().await.expect("close");
    dev.drop().await;
    db.drop().await;
}

#[tokio::test]
async fn only_the_touched_part_is_recreated_on_postgresql() {
    only_the_touched_part_is_recreated(PG).await;
}

#[tokio::test]
async fn only_the_touched_part_is_recreated_on_mariadb() {
    only_the_touched_part_is_recreated(MY).await;
}
