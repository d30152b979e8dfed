//! Directories written for other tools, applied unchanged on PostgreSQL 15 and MariaDB 10.11:
//! golang-migrate's six-digit pairs as Mattermost writes them (`-- morph:nontransactional`, MySQL
//! procedures without `DELIMITER`), goose's and dbmate's single files with fourteen-digit
//! versions; then `repair` of a failed version, and the refusal of a transactional file holding
//! `CREATE INDEX CONCURRENTLY`. MariaDB variants are `serial_db_` tests (see `database.rs`).

mod support;

use std::{path::Path, time::Duration};

use ptah_engine::Dialect;
use ptah_migrate::{
    Error, ExecOrder, Outcome, RecordAs, RepairOptions, TxMode, UpOptions, Version, read_revisions, repair,
    status, up,
};
use support::{Db, Dir};

fn options() -> UpOptions {
    UpOptions {
        lock_wait: Duration::from_secs(30),
        ..UpOptions::default()
    }
}

fn engine(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Postgres => "postgres",
        Dialect::Mysql => "mysql",
    }
}

/// A scratch copy of `fixtures/<tool>/<engine>`, so tampering never touches the fixture.
fn copy_fixture(tool: &str, dialect: Dialect) -> Dir {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(tool)
        .join(engine(dialect));
    let dir = Dir::new();
    for entry in std::fs::read_dir(&from).expect("fixture") {
        let entry = entry.expect("entry");
        let name = entry.file_name().into_string().expect("utf-8 name");
        dir.write(&name, &std::fs::read_to_string(entry.path()).expect("read"));
    }
    dir
}

macro_rules! on_both_engines {
    ($($scenario:ident => $pg:ident, $mysql:ident;)*) => {$(
        #[tokio::test]
        async fn $pg() {
            $scenario(Dialect::Postgres).await;
        }

        #[tokio::test]
        async fn $mysql() {
            let _turn = support::MYSQL_TURN.lock().await;
            $scenario(Dialect::Mysql).await;
        }
    )*};
}

on_both_engines! {
    golang_migrate_directory_applies_unchanged => pg_golang_migrate_directory_applies_unchanged, serial_db_mysql_golang_migrate_directory_applies_unchanged;
    goose_directory_applies_unchanged => pg_goose_directory_applies_unchanged, serial_db_mysql_goose_directory_applies_unchanged;
    dbmate_directory_applies_unchanged => pg_dbmate_directory_applies_unchanged, serial_db_mysql_dbmate_directory_applies_unchanged;
    repair_records_a_failed_version => pg_repair_records_a_failed_version, serial_db_mysql_repair_records_a_failed_version;
}

/// Applies `dir` in one run and checks that `status` has nothing left to say.
async fn apply_clean(db: &Db, dir: &Dir, versions: &[i64]) {
    let report = up(&db.target(), &dir.read(), &options()).await.expect("up");
    assert_eq!(report.failure, None);
    assert_eq!(report.outcome, Outcome::Applied);
    let expected: Vec<Version> = versions.iter().copied().map(Version).collect();
    assert_eq!(report.applied_versions, expected);
    let after = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert!(
        after.pending_migrations.is_empty(),
        "{:?}",
        after.pending_migrations
    );
    assert!(after.modified_migrations.is_empty() && after.ahead_migrations.is_empty());
    assert!(after.dirty_revision.is_none() && after.blocked.is_none());
    assert_eq!(after.pending_sequence, Some(Vec::new()));
    assert_eq!(after.current_version, expected.last().copied());
}

async fn golang_migrate_directory_applies_unchanged(dialect: Dialect) {
    let dir = copy_fixture("golang_migrate", dialect);
    let db = Db::fresh(dialect).await;
    let before = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    let shown: Vec<(Option<&str>, TxMode)> = before
        .pending_migrations
        .iter()
        .map(|p| (p.file_version.as_deref(), p.transaction))
        .collect();
    let index_mode = match dialect {
        Dialect::Postgres => TxMode::None,
        Dialect::Mysql => TxMode::File,
    };
    assert_eq!(shown[3], (Some("000004"), index_mode), "the digits as written");
    assert_eq!(shown.len(), 6);
    ptah_migrate::hash(&dir.read()).expect("hash");
    apply_clean(&db, &dir, &[1, 2, 3, 4, 5, 10]).await;
    let bumped = match dialect {
        Dialect::Postgres => "SELECT totalmsgcount FROM channels WHERE name = 'off-topic'",
        Dialect::Mysql => "SELECT TotalMsgCount FROM Channels WHERE Name = 'off-topic'",
    };
    assert_eq!(
        db.count(bumped).await,
        1,
        "the trigger of 000005 ran on the seed post"
    );
    if dialect == Dialect::Mysql {
        let props = "SELECT COUNT(*) FROM Posts WHERE Props = '{}'";
        assert_eq!(
            db.count(props).await,
            1,
            "the IF-bodied trigger without DELIMITER"
        );
        assert_eq!(
            db.count("SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = DATABASE()")
                .await,
            1,
            "ChannelKind stays, MigrateChannelCounts was dropped"
        );
    }

    // A changed file is refused: first by ptah.sum, then (without it) by the recorded checksum.
    let path = dir.path().join("000003_create_posts.up.sql");
    let text = std::fs::read_to_string(&path).expect("read");
    std::fs::write(&path, format!("{text}-- edited after it ran\n")).expect("tamper");
    let err = up(&db.target(), &dir.read(), &options())
        .await
        .expect_err("tampered");
    assert!(matches!(err, Error::SumDrift { .. }), "{err}");
    std::fs::remove_file(dir.path().join(ptah_migrate::SUM_FILE)).expect("rm sum");
    let err = up(&db.target(), &dir.read(), &options())
        .await
        .expect_err("modified");
    assert!(matches!(err, Error::Modified { version: Version(3) }), "{err}");
    db.drop_database().await;
}

async fn goose_directory_applies_unchanged(dialect: Dialect) {
    let dir = copy_fixture("goose", dialect);
    let db = Db::fresh(dialect).await;
    let planned = up(
        &db.target(),
        &dir.read(),
        &UpOptions {
            dry_run: true,
            ..options()
        },
    )
    .await
    .expect("dry run");
    let planned = planned.planned.expect("planned");
    assert_eq!(planned[0].file_version.as_deref(), Some("20230101120000"));
    let statements = match dialect {
        Dialect::Postgres => 3,
        Dialect::Mysql => 2,
    };
    assert_eq!(
        planned[1].statements.len(),
        statements,
        "the StatementBegin block is one statement"
    );
    assert!(!planned[1].statements[0].ends_with(';'), "sent without its `;`");
    assert_eq!(planned[2].transaction, TxMode::None);
    apply_clean(
        &db,
        &dir,
        &[20_230_101_120_000, 20_230_102_093_000, 20_230_103_000_000],
    )
    .await;
    let lowered = match dialect {
        Dialect::Postgres => "SELECT count(*) FROM accounts WHERE email LIKE '%;%'",
        Dialect::Mysql => "SELECT COUNT(*) FROM accounts WHERE email = 'a@example.com' AND logins = 0",
    };
    assert_eq!(db.count(lowered).await, 1);
    db.drop_database().await;
}

async fn dbmate_directory_applies_unchanged(dialect: Dialect) {
    let dir = copy_fixture("dbmate", dialect);
    let db = Db::fresh(dialect).await;
    apply_clean(&db, &dir, &[20_240_101_000_000, 20_240_102_000_000]).await;
    assert_eq!(db.count("SELECT COUNT(*) FROM orders").await, 2);
    db.drop_database().await;
}

async fn repair_records_a_failed_version(dialect: Dialect) {
    let dir = Dir::new();
    dir.write("1_base.up.sql", "CREATE TABLE base (id INT PRIMARY KEY);\n");
    dir.write("1_base.down.sql", "DROP TABLE base;\n");
    dir.write(
        "2_half.up.sql",
        "CREATE TABLE half (id INT);\nINSERT INTO missing VALUES (1);\n",
    );
    dir.write("2_half.down.sql", "DROP TABLE half;\n");
    let db = Db::fresh(dialect).await;
    let report = up(&db.target(), &dir.read(), &options()).await.expect("up");
    assert!(matches!(report.outcome, Outcome::Failed | Outcome::Partial));
    let repair_as = |version: i64, record_as: RecordAs| RepairOptions {
        version: Version(version),
        record_as,
        reason: "checked by hand; see ticket 42".into(),
        by: "alice".into(),
        lock_wait: Duration::from_secs(30),
        allow_unverified_lock: false,
    };
    for (version, state) in [(1, "applied"), (3, "missing")] {
        let err = repair(&db.target(), &dir.read(), &repair_as(version, RecordAs::Absent))
            .await
            .expect_err("nothing to repair");
        match err {
            Error::NotRepairable { state: s, .. } => assert!(s.starts_with(state), "{s}"),
            other => panic!("{other}"),
        }
    }

    // Undo what committed (MariaDB commits each DDL statement), then record the version absent.
    if dialect == Dialect::Mysql {
        db.exec("DROP TABLE half").await;
    }
    let absent = repair(&db.target(), &dir.read(), &repair_as(2, RecordAs::Absent))
        .await
        .expect("repair absent");
    assert_eq!(
        (absent.previous_state.as_str(), absent.state.as_str()),
        ("failed", "absent")
    );
    let between = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert!(between.dirty_revision.is_none() && between.blocked.is_none());
    assert_eq!(between.pending_migrations[0].version, Version(2));
    let err = repair(&db.target(), &dir.read(), &repair_as(2, RecordAs::Applied))
        .await
        .expect_err("absent is resolved");
    assert!(matches!(err, Error::NotRepairable { .. }), "{err}");

    // It fails again; this time the person finishes it by hand and records it applied.
    let again = up(&db.target(), &dir.read(), &options()).await.expect("up");
    assert!(again.failure.is_some());
    if dialect == Dialect::Postgres {
        db.exec("CREATE TABLE half (id INT)").await;
    }
    let applied = repair(&db.target(), &dir.read(), &repair_as(2, RecordAs::Applied))
        .await
        .expect("repair applied");
    assert_eq!(applied.state, "applied");
    let rows = {
        let mut session = db.session().await;
        let rows = read_revisions(&mut session).await.expect("rows");
        session.close().await.expect("close");
        rows
    };
    assert!(rows.iter().all(|r| r.is_applied()), "{rows:?}");
    let stored = "SELECT COUNT(*) FROM schema_migrations WHERE repaired_by = 'alice' \
                  AND repair_reason = 'checked by hand; see ticket 42' AND repaired_at IS NOT NULL";
    assert_eq!(db.count(stored).await, 1);
    let clean = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert!(clean.pending_migrations.is_empty() && clean.blocked.is_none());
    assert_eq!(clean.current_version, Some(Version(2)));
    db.drop_database().await;
}

#[tokio::test]
async fn pg_concurrently_in_a_transactional_file_is_refused_before_any_sql() {
    let dir = Dir::new();
    dir.write("000001_t.up.sql", "CREATE TABLE t (a int);\n");
    dir.write("000001_t.down.sql", "DROP TABLE t;\n");
    dir.write(
        "000002_i.up.sql",
        "-- an index without the header\n\nCREATE INDEX CONCURRENTLY t_a ON t (a);\n",
    );
    dir.write("000002_i.down.sql", "DROP INDEX t_a;\n");
    let err = ptah_migrate::hash(&dir.read()).expect_err("hash refuses");
    match &err {
        Error::NeedsNoTransaction {
            path, line, header, ..
        } => {
            assert_eq!((path.as_str(), *line), ("000002_i.up.sql", 3));
            assert_eq!(*header, "-- +ptah no_transaction");
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("CREATE INDEX CONCURRENTLY"), "{err}");
    let db = Db::fresh(Dialect::Postgres).await;
    let err = up(&db.target(), &dir.read(), &options())
        .await
        .expect_err("up refuses");
    assert!(matches!(err, Error::NeedsNoTransaction { .. }), "{err}");
    let err = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect_err("status refuses");
    assert!(matches!(err, Error::NeedsNoTransaction { .. }), "{err}");
    assert!(!db.has_table("schema_migrations").await, "nothing ran");
    assert!(!db.has_table("t").await, "nothing ran");
    dir.write(
        "000002_i.up.sql",
        "-- morph:nontransactional\nCREATE INDEX CONCURRENTLY t_a ON t (a);\n",
    );
    apply_clean(&db, &dir, &[1, 2]).await;
    db.drop_database().await;
}
