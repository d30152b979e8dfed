//! Apply on a real PostgreSQL 15: the stale-plan refusal, all-or-nothing transactions, statements
//! outside the transaction, lock contention, timeouts, and a full round trip through the planner.

mod inspect_support;

use std::time::{Duration, Instant};

use inspect_support::{Fresh, fingerprint, plan, table_names};
use ptah_engine::{ApplyOptions, Dialect, Error, InspectScope, apply, inspect, verify};
use ptah_schema::PlanOptions;

const PG: Dialect = Dialect::Postgres;

#[tokio::test]
async fn a_stale_plan_is_refused_before_any_statement_runs() {
    let db = Fresh::new(PG, "apply_pg_stale").await;
    db.run("CREATE TABLE base (id int PRIMARY KEY)").await;
    let mut session = db.session().await;
    let planned = plan(
        PG,
        fingerprint(&mut session).await,
        &[("CREATE TABLE sentinel (id int)", true)],
    );
    db.run("ALTER TABLE base ADD COLUMN added text").await;

    let err = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect_err("the schema moved");
    let Error::StalePlan { expected, actual } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(expected, &planned.from_fingerprint);
    assert_eq!(actual, &fingerprint(&mut session).await);
    assert_eq!(
        table_names(&mut session).await,
        ["public.base"],
        "no statement ran"
    );
    assert!(err.to_string().contains("stale"), "{err}");
    assert!(
        !session.unlock().await.expect("unlock"),
        "the lock was released on refusal"
    );
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn a_failing_statement_rolls_the_whole_transaction_back() {
    let db = Fresh::new(PG, "apply_pg_rollback").await;
    let mut session = db.session().await;
    let planned = plan(
        PG,
        fingerprint(&mut session).await,
        &[
            ("CREATE TABLE first (id int)", true),
            ("CREATE TABLE second (id int)", true),
            ("CREATE TABLE first (id int)", true),
            ("CREATE TABLE third (id int)", true),
        ],
    );
    let err = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect_err("duplicate table");
    let Error::ApplyFailed {
        index,
        committed,
        total,
        error,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((*index, committed.len(), *total), (2, 0, 4));
    assert!(error.contains("already exists"), "{error}");
    let report = err.apply_report().expect("a report");
    assert_eq!((report.applied, report.failed_statement_index), (0, Some(2)));
    assert!(table_names(&mut session).await.is_empty(), "nothing committed");
    assert!(
        !session.unlock().await.expect("unlock"),
        "the lock was released on failure"
    );
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn concurrent_statements_run_alone_after_the_transaction_commits() {
    let db = Fresh::new(PG, "apply_pg_concurrently").await;
    let mut session = db.session().await;
    let planned = plan(
        PG,
        fingerprint(&mut session).await,
        &[
            ("CREATE TABLE t (id int, v text)", true),
            ("CREATE INDEX CONCURRENTLY t_v_idx ON t (v)", false),
            ("COMMENT ON TABLE t IS 'done'", true),
        ],
    );
    let report = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect("apply");
    assert_eq!(
        report.committed,
        [0, 2, 1],
        "transactional first, then the concurrent one"
    );
    assert_eq!(
        (report.applied, report.total, report.failed_statement_index),
        (3, 3, None)
    );
    let live = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");
    let t = &live.tables[&ptah_schema::QualifiedName::new("public", "t")];
    assert_eq!(t.comment.as_deref(), Some("done"));
    assert!(t.indexes.contains_key("t_v_idx"));
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn lock_timeout_bounds_a_statement_waiting_for_a_table() {
    let db = Fresh::new(PG, "apply_pg_timeout").await;
    db.run("CREATE TABLE busy (id int)").await;
    let mut blocker = db.session().await;
    blocker
        .batch("BEGIN; LOCK TABLE busy IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("hold the table");
    let mut session = db.session().await;
    let planned = plan(
        PG,
        fingerprint(&mut session).await,
        &[("ALTER TABLE busy ADD COLUMN v text", true)],
    );
    let opts = ApplyOptions {
        lock_timeout: Duration::from_millis(300),
        ..ApplyOptions::default()
    };
    let started = Instant::now();
    let err = apply(&mut session, &planned, &opts).await.expect_err("blocked");
    assert!(matches!(err, Error::ApplyFailed { index: 0, .. }), "{err:?}");
    assert!(err.to_string().contains("lock timeout"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    blocker.batch("ROLLBACK").await.expect("release");
    blocker.close().await.expect("close");
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn of_two_concurrent_applies_exactly_one_proceeds() {
    let db = Fresh::new(PG, "apply_pg_contention").await;
    let mut first = db.session().await;
    let mut second = db.session().await;
    let from = fingerprint(&mut first).await;
    let slow = plan(
        PG,
        from,
        &[("SELECT pg_sleep(2)", true), ("CREATE TABLE a (id int)", true)],
    );
    let other = plan(
        PG,
        from,
        &[("SELECT pg_sleep(2)", true), ("CREATE TABLE b (id int)", true)],
    );
    let opts = ApplyOptions {
        lock_wait: Duration::from_millis(300),
        ..ApplyOptions::default()
    };
    let (one, two) = tokio::join!(apply(&mut first, &slow, &opts), apply(&mut second, &other, &opts));
    let outcomes = [one.is_ok(), two.is_ok()];
    assert_eq!(outcomes.iter().filter(|ok| **ok).count(), 1, "{one:?} {two:?}");
    let loser = one.err().or(two.err()).expect("one failed");
    assert!(matches!(loser, Error::LockBusy { .. }), "{loser:?}");
    let expected = if outcomes[0] { "public.a" } else { "public.b" };
    assert_eq!(table_names(&mut first).await, [expected]);
    first.close().await.expect("close");
    second.close().await.expect("close");
    db.drop().await;
}

const ROUND_TRIP: &str = r"
CREATE SCHEMA app;
CREATE TYPE app.status AS ENUM ('draft', 'sent', 'paid');
CREATE TABLE app.customer (
    tenant integer NOT NULL,
    id bigint GENERATED ALWAYS AS IDENTITY,
    email varchar(255) NOT NULL,
    score numeric(10,2) DEFAULT 1.50,
    active boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT customer_pkey PRIMARY KEY (tenant, id),
    CONSTRAINT customer_email_key UNIQUE (tenant, email),
    CONSTRAINT customer_score_check CHECK (score >= 0)
);
COMMENT ON TABLE app.customer IS 'People who pay';
CREATE TABLE app.invoice (
    id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    tenant integer NOT NULL,
    customer_id bigint NOT NULL,
    state app.status NOT NULL DEFAULT 'draft',
    doc jsonb,
    code varchar(16),
    CONSTRAINT invoice_customer_fk FOREIGN KEY (tenant, customer_id)
        REFERENCES app.customer (tenant, id) ON DELETE CASCADE
);
CREATE INDEX invoice_open_idx ON app.invoice (customer_id) WHERE state <> 'paid';
CREATE INDEX invoice_lower_idx ON app.invoice (lower(code), id DESC);
CREATE UNIQUE INDEX invoice_code_key ON app.invoice (tenant, code);
";

#[tokio::test]
async fn a_planned_schema_applies_and_verifies_empty() {
    let source = Fresh::new(PG, "apply_pg_source").await;
    source.run(ROUND_TRIP).await;
    let mut session = source.session().await;
    let scope = InspectScope {
        namespaces: Some(["app".to_owned()].into()),
        ..InspectScope::default()
    };
    let desired = inspect(&mut session, &scope).await.expect("inspect source");
    session.close().await.expect("close");

    let target = Fresh::new(PG, "apply_pg_target").await;
    let mut session = target.session().await;
    let scope = InspectScope::of(&desired);
    let actual = inspect(&mut session, &scope).await.expect("inspect target");
    let planned = ptah_schema::plan(&desired, &actual, PG, &PlanOptions::default()).expect("plan");
    assert!(!planned.is_empty());
    let opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    let report = apply(&mut session, &planned, &opts).await.expect("apply");
    assert_eq!(report.applied, planned.statements.len());
    verify(&mut session, &desired, &scope, &PlanOptions::default())
        .await
        .expect("converged");
    let again = apply(&mut session, &planned, &opts).await.expect_err("now stale");
    assert!(matches!(again, Error::StalePlan { .. }), "{again:?}");

    session.close().await.expect("close");
    target.drop().await;
    source.drop().await;
}
