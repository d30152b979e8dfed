//! Apply on a real MariaDB 10.11: statement-by-statement progress, a failure midway reported with
//! exactly the statements that committed, the stale-plan refusal, lock contention and a round trip
//! through the planner. `GET_LOCK` names are server-wide, so every test here is `serial_db_`.

mod inspect_support;

use std::time::Duration;

use inspect_support::{Fresh, fingerprint, plan, table_names};
use ptah_engine::{ApplyOptions, Dialect, Error, InspectScope, apply, inspect, mysql_flavor, verify};
use ptah_schema::PlanOptions;

const MY: Dialect = Dialect::Mysql;

#[tokio::test]
async fn serial_db_a_failure_midway_reports_the_statements_that_committed() {
    let db = Fresh::new(MY, "apply_my_midway").await;
    let mut session = db.session().await;
    let planned = plan(
        MY,
        fingerprint(&mut session).await,
        &[
            ("CREATE TABLE first (id INT PRIMARY KEY)", true),
            ("CREATE TABLE second (id INT PRIMARY KEY)", true),
            ("ALTER TABLE first ADD COLUMN note TEXT", true),
            ("CREATE TABLE first (id INT)", true),
            ("CREATE TABLE third (id INT)", true),
        ],
    );
    let err = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect_err("a duplicate table");
    let Error::ApplyFailed {
        index,
        committed,
        total,
        error,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(
        (*index, committed.as_slice(), *total),
        (3, [0, 1, 2].as_slice(), 5)
    );
    assert!(error.contains("already exists"), "{error}");
    assert!(
        err.to_string().contains("statement 4 of 5 failed (3 committed)"),
        "{err}"
    );
    let report = err.apply_report().expect("report");
    assert_eq!(
        (report.applied, report.total, report.failed_statement_index),
        (3, 5, Some(3))
    );
    assert_eq!(
        table_names(&mut session).await,
        ["first", "second"],
        "what committed is really there, nothing after the failure"
    );
    let live = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");
    let first = &live.tables[&ptah_schema::QualifiedName::new("", "first")];
    assert!(first.column("note").is_some(), "statement 3 committed too");
    assert!(!session.unlock().await.expect("unlock"), "the lock was released");
    session.close().await.expect("close");
    db.drop().await;
}

/// A statement the server cannot parse (here the unquoted `SET` members an old renderer wrote) is
/// found before anything runs: no half-applied plan on a server without transactional DDL.
#[tokio::test]
async fn serial_db_an_unparsable_statement_is_refused_with_nothing_committed() {
    let db = Fresh::new(MY, "apply_my_unparsable").await;
    let mut session = db.session().await;
    let planned = plan(
        MY,
        fingerprint(&mut session).await,
        &[
            ("CREATE TABLE film (id INT PRIMARY KEY)", true),
            ("INSERT INTO film (id) VALUES (1)", true),
            (
                "ALTER TABLE film ADD COLUMN features set(Trailers,Commentaries)",
                true,
            ),
            ("CREATE TABLE after_it (id INT)", true),
        ],
    );
    let err = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, Error::Unparsable { index: 2, total: 4, error } if error.contains("syntax")),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("statement 3 of 4 does not parse on the server, nothing ran"),
        "{err}"
    );
    assert!(table_names(&mut session).await.is_empty(), "nothing committed");
    assert!(!session.unlock().await.expect("unlock"), "the lock was released");
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn serial_db_a_stale_plan_is_refused_before_any_statement_runs() {
    let db = Fresh::new(MY, "apply_my_stale").await;
    db.run("CREATE TABLE base (id INT PRIMARY KEY)").await;
    let mut session = db.session().await;
    let planned = plan(
        MY,
        fingerprint(&mut session).await,
        &[("CREATE TABLE sentinel (id INT)", true)],
    );
    db.run("ALTER TABLE base ADD COLUMN added TEXT").await;
    let err = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect_err("stale");
    assert!(
        matches!(&err, Error::StalePlan { expected, .. } if expected == &planned.from_fingerprint),
        "{err:?}"
    );
    assert_eq!(
        table_names(&mut session).await,
        ["base"],
        "the sentinel was never created"
    );
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn serial_db_a_plan_for_another_dialect_is_refused() {
    let db = Fresh::new(MY, "apply_my_dialect").await;
    let mut session = db.session().await;
    let planned = plan(
        Dialect::Postgres,
        fingerprint(&mut session).await,
        &[("CREATE TABLE x (id INT)", true)],
    );
    let err = apply(&mut session, &planned, &ApplyOptions::default())
        .await
        .expect_err("wrong dialect");
    assert!(
        matches!(
            err,
            Error::DialectMismatch {
                plan: Dialect::Postgres,
                database: Dialect::Mysql
            }
        ),
        "{err:?}"
    );
    assert!(table_names(&mut session).await.is_empty());
    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn serial_db_of_two_concurrent_applies_exactly_one_proceeds() {
    let db = Fresh::new(MY, "apply_my_contention").await;
    let mut first = db.session().await;
    let mut second = db.session().await;
    let from = fingerprint(&mut first).await;
    let one_plan = plan(
        MY,
        from,
        &[("DO SLEEP(3)", true), ("CREATE TABLE a (id INT)", true)],
    );
    let two_plan = plan(
        MY,
        from,
        &[("DO SLEEP(3)", true), ("CREATE TABLE b (id INT)", true)],
    );
    let opts = ApplyOptions {
        lock_wait: Duration::from_millis(500),
        ..ApplyOptions::default()
    };
    let (one, two) = tokio::join!(
        apply(&mut first, &one_plan, &opts),
        apply(&mut second, &two_plan, &opts)
    );
    let winners = [one.is_ok(), two.is_ok()];
    assert_eq!(winners.iter().filter(|ok| **ok).count(), 1, "{one:?} {two:?}");
    let loser = one.err().or(two.err()).expect("one failed");
    assert!(matches!(loser, Error::LockBusy { .. }), "{loser:?}");
    let expected = if winners[0] { "a" } else { "b" };
    assert_eq!(
        table_names(&mut first).await,
        [expected],
        "only the winner's statements ran"
    );
    first.close().await.expect("close");
    second.close().await.expect("close");
    db.drop().await;
}

const ROUND_TRIP: &str = r"
CREATE TABLE account (
    tenant INT NOT NULL,
    code VARCHAR(32) NOT NULL,
    name VARCHAR(255) NOT NULL DEFAULT 'unnamed',
    PRIMARY KEY (tenant, code)
) ENGINE=InnoDB COMMENT='Accounts';
CREATE TABLE invoice (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    tenant INT NOT NULL,
    account_code VARCHAR(32) NOT NULL,
    status ENUM('draft','sent','paid') NOT NULL DEFAULT 'draft',
    paid TINYINT(1) NOT NULL DEFAULT 0,
    amount DECIMAL(12,2) NOT NULL DEFAULT 0.00,
    body TEXT,
    doc JSON,
    created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    ref CHAR(36) COMMENT 'external ref',
    PRIMARY KEY (id),
    UNIQUE KEY invoice_ref_key (ref),
    KEY invoice_multi_idx (tenant, created_at DESC),
    KEY invoice_body_prefix (body(20)),
    CONSTRAINT invoice_account_fk FOREIGN KEY (tenant, account_code)
        REFERENCES account (tenant, code) ON DELETE CASCADE,
    CONSTRAINT invoice_amount_check CHECK (amount >= 0)
) ENGINE=InnoDB COMMENT='Bills';
";

#[tokio::test]
async fn serial_db_a_planned_schema_applies_and_verifies_empty() {
    let source = Fresh::new(MY, "apply_my_source").await;
    source.run(ROUND_TRIP).await;
    let mut session = source.session().await;
    let desired = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect source");
    session.close().await.expect("close");

    let target = Fresh::new(MY, "apply_my_target").await;
    let mut session = target.session().await;
    let options = PlanOptions {
        mysql_flavor: mysql_flavor(&mut session).await.expect("flavor").expect("mysql"),
        ..PlanOptions::default()
    };
    let scope = InspectScope::of(&desired);
    let actual = inspect(&mut session, &scope).await.expect("inspect target");
    let planned = ptah_schema::plan(&desired, &actual, MY, &options).expect("plan");
    assert!(!planned.is_empty());
    let opts = ApplyOptions {
        scope: scope.clone(),
        ..ApplyOptions::default()
    };
    let report = apply(&mut session, &planned, &opts).await.expect("apply");
    assert_eq!(
        (report.applied, report.total),
        (planned.statements.len(), planned.statements.len())
    );
    verify(&mut session, &desired, &scope, &options)
        .await
        .expect("converged");
    session.close().await.expect("close");
    target.drop().await;
    source.drop().await;
}
