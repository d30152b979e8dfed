//! Online changes on a real MariaDB 10.11 (issue 37, item 2): a column is added
//! `ALGORITHM=INSTANT` and an index built and dropped `ALGORITHM=INPLACE, LOCK=NONE`; a table with
//! a FULLTEXT index, which the server changes only under a lock, is planned without the clause.
//! When the server refuses an online form anyway, the Apply tries `INPLACE, LOCK=NONE`, then fails
//! saying so and leaves the table as it was; it copies or locks only when `allow_table_copy` says
//! it may.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{ApplyOptions, Dialect, Error, InspectScope, Session, apply, inspect};
use ptah_schema::{Plan, PlanOptions, QualifiedName, Schema};

const MY: Dialect = Dialect::Mysql;

async fn plan(session: &mut Session, desired: &Schema) -> (Plan, Schema) {
    let live = inspect(session, &InspectScope::of(desired))
        .await
        .expect("inspect");
    let p = ptah_schema::plan(desired, &live, MY, &PlanOptions::default()).expect("plan");
    (p, live)
}

fn sql(p: &Plan) -> Vec<&str> {
    p.statements.iter().map(|s| s.sql.as_str()).collect()
}

fn read(text: &str) -> Schema {
    ptah_schema::read::sql::parse(MY, "schema.sql", text).expect("reads")
}

#[tokio::test]
async fn columns_and_indexes_change_online_and_a_copy_happens_only_when_allowed() {
    let db = Fresh::new(MY, "online").await;
    db.run(
        "CREATE TABLE items (id int PRIMARY KEY, sku varchar(20), KEY items_old (sku));
CREATE TABLE docs (id int PRIMARY KEY, body text, FULLTEXT KEY docs_body (body));
INSERT INTO items VALUES (1, 'a'), (2, 'b');
INSERT INTO docs VALUES (1, 'x')",
    )
    .await;
    let mut session = db.session().await;

    // A table without a FULLTEXT index: every change keeps writes going.
    let desired = read(
        "CREATE TABLE items (id int PRIMARY KEY, sku varchar(20), qty int, KEY items_sku_qty (sku, qty));
CREATE TABLE docs (id int PRIMARY KEY, body text, FULLTEXT KEY docs_body (body));",
    );
    let (online, _) = plan(&mut session, &desired).await;
    assert_eq!(
        sql(&online),
        [
            "ALTER TABLE `items` ADD COLUMN `qty` int NULL, ALGORITHM=INSTANT",
            "CREATE INDEX `items_sku_qty` ON `items` (`sku`, `qty`) ALGORITHM=INPLACE LOCK=NONE",
            "ALTER TABLE `items` DROP INDEX `items_old`, ALGORITHM=INPLACE, LOCK=NONE",
        ]
    );
    let options = ApplyOptions {
        scope: InspectScope::of(&desired),
        ..ApplyOptions::default()
    };
    let report = apply(&mut session, &online, &options)
        .await
        .expect("online apply");
    assert_eq!(report.applied, 3);
    assert!(plan(&mut session, &desired).await.0.is_empty(), "converged");

    // A table with a FULLTEXT index changes only under a lock: the plan says so up front (no
    // online clause, so nothing to fall back from).
    let with_note = read(
        "CREATE TABLE items (id int PRIMARY KEY, sku varchar(20), qty int, KEY items_sku_qty (sku, qty));
CREATE TABLE docs (id int PRIMARY KEY, body text, note text, FULLTEXT KEY docs_body (body));",
    );
    let (locking, _) = plan(&mut session, &with_note).await;
    assert_eq!(sql(&locking), ["ALTER TABLE `docs` ADD COLUMN `note` text NULL"]);

    // The executor's guard, for a server that refuses what a plan asked for (a hand-written
    // statement here, since the planner knows this table): INSTANT, then INPLACE without a lock,
    // are refused; the Apply fails saying what would allow it, and changes nothing.
    let from = inspect_support::fingerprint(&mut session).await;
    let asked = inspect_support::plan(
        MY,
        from,
        &[(
            "ALTER TABLE `docs` ADD COLUMN `note` text NULL, ALGORITHM=INSTANT",
            true,
        )],
    );
    let everything = ApplyOptions::default();
    match apply(&mut session, &asked, &everything).await {
        Err(Error::ApplyFailed {
            index: 0,
            committed,
            error,
            ..
        }) => {
            assert!(committed.is_empty());
            assert!(error.contains("LOCK=NONE is not supported"), "{error}");
            assert!(error.contains("--allow-table-copy"), "{error}");
        }
        other => panic!("expected the online form to be refused, got {other:?}"),
    }
    let (_, live) = plan(&mut session, &with_note).await;
    let docs = live.tables.get(&QualifiedName::new("", "docs")).expect("docs");
    assert!(docs.column("note").is_none(), "the table was left as it was");

    let allowed = ApplyOptions {
        allow_table_copy: true,
        ..everything
    };
    apply(&mut session, &asked, &allowed)
        .await
        .expect("allowed to lock");
    assert!(plan(&mut session, &with_note).await.0.is_empty(), "converged");
    session.close().await.expect("close");
    db.drop().await;
}
