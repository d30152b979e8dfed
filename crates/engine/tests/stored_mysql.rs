//! MySQL/MariaDB stored routines, events, view options, partitioning, index comments and `ON
//! UPDATE` defaults on a real MariaDB 10.11: what the server holds after the DDL inspects as
//! exactly what the SQL reader makes of the same DDL, so the script plans nothing against the
//! database it built; a hand-written view is brought to the server's spelling by a probe that
//! leaves nothing behind.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{Dialect, InspectScope, comparable, inspect};
use ptah_schema::{PlanOptions, QualifiedName};

const MY: Dialect = Dialect::Mysql;

/// Each statement as the server takes it (bodies hold `;`, so one statement per call).
const STATEMENTS: &[&str] = &[
    "CREATE TABLE film (id int NOT NULL PRIMARY KEY, title varchar(100) NOT NULL, \
     changed timestamp(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), \
     seen datetime NULL ON UPDATE now(), KEY film_title (title) COMMENT 'by title')",
    "CREATE TABLE logs (id int NOT NULL, at date NOT NULL, PRIMARY KEY (id, at)) \
     PARTITION BY RANGE (YEAR(at)) (PARTITION p2024 VALUES LESS THAN (2025), PARTITION pmax VALUES LESS THAN MAXVALUE)",
    "CREATE TABLE buckets (id int NOT NULL PRIMARY KEY) PARTITION BY HASH (id) PARTITIONS 3",
    "CREATE FUNCTION title_of(p_id INT) RETURNS VARCHAR(100) CHARSET utf8mb4 DETERMINISTIC READS SQL DATA \
     SQL SECURITY INVOKER COMMENT 'a title' BEGIN DECLARE t VARCHAR(100); \
     SELECT title INTO t FROM film WHERE id = p_id; RETURN t; END",
    "CREATE PROCEDURE touch(INOUT n INT, IN why VARCHAR(20)) MODIFIES SQL DATA lbl: BEGIN \
     IF n IS NULL THEN LEAVE lbl; END IF; UPDATE film SET title = title WHERE id = n; END",
    "CREATE EVENT nightly ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 03:00:00' ON COMPLETION PRESERVE \
     DISABLE COMMENT 'sweep' DO DELETE FROM logs WHERE at < '2000-01-01'",
    "CREATE EVENT often ON SCHEDULE EVERY '1:30' HOUR_MINUTE DISABLE DO DELETE FROM logs WHERE id < 0",
    "CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW titled AS SELECT id, title FROM film WHERE title <> '' \
     WITH CASCADED CHECK OPTION",
];

#[tokio::test]
async fn serial_db_stored_programs_inspect_as_the_sql_that_declared_them() {
    let db = Fresh::new(MY, "stored_my").await;
    let mut session = db.session().await;
    for statement in STATEMENTS {
        session
            .batch(statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
    let script: String = STATEMENTS
        .iter()
        .map(|s| format!("DELIMITER ;;\n{s} ;;\nDELIMITER ;\n"))
        .collect();
    let read = ptah_schema::read::sql::parse(MY, "script.sql", &script).expect("the reader takes the DDL");
    let live = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");

    assert_eq!(live.stored_routines, read.stored_routines);
    let nightly = QualifiedName::new("", "nightly");
    assert_eq!(live.events[&nightly], read.events[&nightly]);
    // `often` declares no STARTS: the server took the time of creation, which is not compared.
    let often = QualifiedName::new("", "often");
    assert!(read.events[&often].matches(&live.events[&often]));
    assert!(live.events[&often].starts.is_some());
    assert_eq!(live.view_options, read.view_options);
    for name in ["film", "logs", "buckets"] {
        let (l, r) = (
            &live.tables[&QualifiedName::new("", name)],
            &read.tables[&QualifiedName::new("", name)],
        );
        assert_eq!(l.partition_by, r.partition_by, "{name}");
        assert_eq!(l.index_comments, r.index_comments, "{name}");
        assert_eq!(l.columns, r.columns, "{name}");
    }

    // The hand-written view differs as text; the probe learns the server's spelling of it.
    assert_ne!(live.views, read.views);
    let desired = comparable(&mut session, &read, &live).await.expect("comparable");
    assert_eq!(desired.views, live.views);
    let plan = ptah_schema::plan(&desired, &live, MY, &PlanOptions::default()).expect("plan");
    assert!(plan.is_empty(), "{:?}", plan.statements);
    let after = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");
    assert_eq!(
        after.views.len(),
        1,
        "the probe view is gone: {:?}",
        after.views.keys()
    );
    session.close().await.expect("close");
    db.drop().await;
}
