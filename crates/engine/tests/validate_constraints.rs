//! Lock-safe constraints on a real PostgreSQL 15 (issue 37, item 2): a CHECK and a FOREIGN KEY added
//! to tables with rows are planned `ADD CONSTRAINT … NOT VALID` inside the transaction and
//! `VALIDATE CONSTRAINT` after it. When old rows violate one, the Apply fails on its validation,
//! the constraint stays `NOT VALID` (read as such), and the next plan validates it again instead of
//! rebuilding it; once the rows are fixed the database converges. `SET NOT NULL` goes through a
//! helper check the same way, and a helper an interrupted run left is neither drift nor dropped.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, Error, InspectScope, Session, apply, inspect};
use ptah_schema::{Plan, PlanOptions, QualifiedName, Schema};

const PG: Dialect = Dialect::Postgres;

const LIVE: &str = "CREATE TABLE users (id int PRIMARY KEY);
CREATE TABLE orders (id int PRIMARY KEY, user_id int, qty int);
INSERT INTO users VALUES (1), (2);
INSERT INTO orders VALUES (10, 1, 5), (11, 2, -1)";

const DESIRED: &str = "CREATE TABLE users (id int PRIMARY KEY);
CREATE TABLE orders (
    id int PRIMARY KEY,
    user_id int REFERENCES users (id),
    qty int CONSTRAINT orders_qty_check CHECK (qty > 0)
);";

async fn plan(session: &mut Session, desired: &Schema) -> (Plan, Schema) {
    let live = inspect(session, &InspectScope::of(desired))
        .await
        .expect("inspect");
    let p = ptah_schema::plan(desired, &live, PG, &PlanOptions::default()).expect("plan");
    (p, live)
}

fn statements(p: &Plan) -> Vec<(&str, bool)> {
    p.statements
        .iter()
        .map(|s| (s.sql.as_str(), s.transactional))
        .collect()
}

fn unvalidated(live: &Schema) -> Vec<String> {
    let orders = live
        .tables
        .get(&QualifiedName::new("public", "orders"))
        .expect("orders");
    orders.not_valid.iter().cloned().collect()
}

#[tokio::test]
async fn constraints_are_added_not_valid_then_validated_and_a_failed_validation_is_retried_not_rebuilt() {
    let db = Fresh::new(PG, "validate").await;
    db.run(LIVE).await;
    let desired = ptah_schema::read::sql::parse(PG, "schema.sql", DESIRED).expect("reads");
    let options = ApplyOptions {
        scope: InspectScope::of(&desired),
        ..ApplyOptions::default()
    };
    let mut session = db.session().await;

    let (first, _) = plan(&mut session, &desired).await;
    assert_eq!(
        statements(&first),
        [
            (
                r#"ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_qty_check" CHECK (qty > 0) NOT VALID"#,
                true
            ),
            (
                r#"ALTER TABLE "public"."orders" VALIDATE CONSTRAINT "orders_qty_check""#,
                false
            ),
            (
                r#"ALTER TABLE "public"."orders" ADD CONSTRAINT "orders_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "public"."users" ("id") NOT VALID"#,
                true
            ),
            (
                r#"ALTER TABLE "public"."orders" VALIDATE CONSTRAINT "orders_user_id_fkey""#,
                false
            ),
        ]
    );

    // Order 11 has qty -1: the transaction commits both constraints, the check's validation fails.
    match apply(&mut session, &first, &options).await {
        Err(Error::ApplyFailed {
            index,
            committed,
            error,
            ..
        }) => {
            assert_eq!(index, 1, "the check's validation");
            assert_eq!(committed, [0, 2], "the transaction committed");
            assert!(error.contains("orders_qty_check"), "{error}");
        }
        other => panic!("expected the validation to fail, got {other:?}"),
    }
    // Enforced on new rows already, not proven on old ones.
    let refused = session.batch("INSERT INTO orders VALUES (12, 1, 0)").await;
    assert!(refused.is_err(), "a new violating row is refused");

    let (second, live) = plan(&mut session, &desired).await;
    assert_eq!(unvalidated(&live), ["orders_qty_check", "orders_user_id_fkey"]);
    assert_eq!(
        statements(&second),
        [
            (
                r#"ALTER TABLE "public"."orders" VALIDATE CONSTRAINT "orders_qty_check""#,
                false
            ),
            (
                r#"ALTER TABLE "public"."orders" VALIDATE CONSTRAINT "orders_user_id_fkey""#,
                false
            ),
        ],
        "validated again, not dropped and added"
    );
    let drift = ptah_schema::drift(&desired, &live, PG, &PlanOptions::default());
    let categories: Vec<&str> = drift.findings.iter().map(|f| f.category.as_str()).collect();
    assert_eq!(categories, ["constraints_modified"]);

    db.run("UPDATE orders SET qty = 1 WHERE id = 11").await;
    let report = apply(&mut session, &second, &options).await.expect("validated");
    assert_eq!(report.applied, 2);
    let (third, live) = plan(&mut session, &desired).await;
    assert!(third.is_empty(), "converged: {:?}", statements(&third));
    assert!(unvalidated(&live).is_empty());
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn set_not_null_goes_through_a_validated_check_and_a_leftover_helper_is_neither_drift_nor_dropped_data()
{
    let db = Fresh::new(PG, "not_null").await;
    db.run(
        "CREATE TABLE people (id int PRIMARY KEY, email text);
INSERT INTO people VALUES (1, 'a@example.org'), (2, NULL)",
    )
    .await;
    let desired = ptah_schema::read::sql::parse(
        PG,
        "schema.sql",
        "CREATE TABLE people (id int PRIMARY KEY, email text NOT NULL);",
    )
    .expect("reads");
    let options = ApplyOptions {
        scope: InspectScope::of(&desired),
        ..ApplyOptions::default()
    };
    let mut session = db.session().await;
    let (first, _) = plan(&mut session, &desired).await;
    let expected = [
        (
            r#"ALTER TABLE "public"."people" DROP CONSTRAINT IF EXISTS "ptah_nn_email""#,
            false,
        ),
        (
            r#"ALTER TABLE "public"."people" ADD CONSTRAINT "ptah_nn_email" CHECK ("email" IS NOT NULL) NOT VALID"#,
            false,
        ),
        (
            r#"ALTER TABLE "public"."people" VALIDATE CONSTRAINT "ptah_nn_email""#,
            false,
        ),
        (
            r#"ALTER TABLE "public"."people" ALTER COLUMN "email" SET NOT NULL"#,
            false,
        ),
        (
            r#"ALTER TABLE "public"."people" DROP CONSTRAINT "ptah_nn_email""#,
            false,
        ),
    ];
    assert_eq!(statements(&first), expected);

    // Row 2 holds NULL: the validation fails and leaves the helper, NOT VALID.
    match apply(&mut session, &first, &options).await {
        Err(Error::ApplyFailed { index, committed, .. }) => {
            assert_eq!(index, 2, "the helper's validation");
            assert_eq!(committed, [0, 1]);
        }
        other => panic!("expected the validation to fail, got {other:?}"),
    }
    let (second, live) = plan(&mut session, &desired).await;
    let people = live
        .tables
        .get(&QualifiedName::new("public", "people"))
        .expect("people");
    assert!(
        people.checks.contains_key("ptah_nn_email"),
        "the leftover is read"
    );
    assert_eq!(
        statements(&second),
        expected,
        "the same steps again, the leftover first"
    );
    assert!(
        !second.destructive,
        "a leftover helper is never a constraint to drop"
    );

    db.run("UPDATE people SET email = 'b@example.org' WHERE id = 2")
        .await;
    apply(&mut session, &second, &options)
        .await
        .expect("set NOT NULL");
    let (third, live) = plan(&mut session, &desired).await;
    assert!(third.is_empty(), "converged: {:?}", statements(&third));
    let people = live
        .tables
        .get(&QualifiedName::new("public", "people"))
        .expect("people");
    assert!(people.checks.is_empty(), "the helper is gone");
    assert!(!people.column("email").expect("email").nullable);
    session.close().await.expect("close");
    db.drop().await;
}
