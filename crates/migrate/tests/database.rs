//! `status`, `up` and `baseline` on the real PostgreSQL 15 and MariaDB 10.11.
//!
//! Every scenario runs once per engine. MariaDB's `GET_LOCK` names are server-wide (PostgreSQL's
//! advisory locks are per database), so the MariaDB variants are `serial_db_` tests: they would
//! otherwise contend with each other and with the engine's lock tests under nextest; within this
//! binary they also take turns on a mutex, so plain `cargo test` gives the same answer.

mod support;

use std::time::Duration;

use ptah_engine::Dialect;
use ptah_migrate::{
    Error, ExecOrder, Outcome, Revision, SumCheck, UpOptions, Version, baseline, read_revisions, status, up,
};
use support::{Db, Dir};

fn options() -> UpOptions {
    UpOptions {
        lock_wait: Duration::from_secs(30),
        ..UpOptions::default()
    }
}

fn versions(list: &[i64]) -> Vec<Version> {
    list.iter().copied().map(Version).collect()
}

async fn rows(db: &Db) -> Vec<Revision> {
    let mut session = db.session().await;
    let rows = read_revisions(&mut session).await.expect("read rows");
    session.close().await.expect("close");
    rows
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
    one_run_and_limited_runs_agree => pg_one_run_and_limited_runs_agree, serial_db_mysql_one_run_and_limited_runs_agree;
    failure_mid_file_leaves_a_dirty_row => pg_failure_mid_file_leaves_a_dirty_row, serial_db_mysql_failure_mid_file_leaves_a_dirty_row;
    modified_out_of_order_and_ahead => pg_modified_out_of_order_and_ahead, serial_db_mysql_modified_out_of_order_and_ahead;
    concurrent_ups_apply_each_migration_once => pg_concurrent_ups_apply_each_migration_once, serial_db_mysql_concurrent_ups_apply_each_migration_once;
    stale_expected_sequence_runs_nothing => pg_stale_expected_sequence_runs_nothing, serial_db_mysql_stale_expected_sequence_runs_nothing;
    splitter_corpus_runs_on_the_server => pg_splitter_corpus_runs_on_the_server, serial_db_mysql_splitter_corpus_runs_on_the_server;
    dry_run_and_baseline => pg_dry_run_and_baseline, serial_db_mysql_dry_run_and_baseline;
}

async fn one_run_and_limited_runs_agree(dialect: Dialect) {
    let dir = Dir::new();
    dir.add(
        1,
        "create items",
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(50));\n",
    );
    dir.add(
        2,
        "seed",
        "INSERT INTO items VALUES (1, 'a;b');\nINSERT INTO items VALUES (2, 'c');\n",
    );
    dir.add(
        3,
        "index",
        match dialect {
            Dialect::Postgres => {
                "-- +ptah no_transaction\nCREATE INDEX CONCURRENTLY items_name ON items (name);\n"
            }
            Dialect::Mysql => {
                "-- +ptah lock_timeout=5s statement_timeout=30s\nCREATE INDEX items_name ON items (name);\n"
            }
        },
    );
    ptah_migrate::hash(&dir.read()).expect("hash");
    let one = Db::fresh(dialect).await;
    let many = Db::fresh(dialect).await;

    let report = up(&one.target(), &dir.read(), &options()).await.expect("up");
    assert_eq!(report.outcome, Outcome::Applied);
    assert_eq!(report.applied_versions, versions(&[1, 2, 3]));
    assert_eq!(report.current_version, Some(Version(3)));

    let limited = |n| UpOptions {
        limit: Some(n),
        ..options()
    };
    let first = up(&many.target(), &dir.read(), &limited(1))
        .await
        .expect("up --limit 1");
    assert_eq!(
        (first.outcome, first.applied_versions),
        (Outcome::Applied, versions(&[1]))
    );
    let status_between = status(&many.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert_eq!(status_between.current_version, Some(Version(1)));
    let pending: Vec<Version> = status_between
        .pending_migrations
        .iter()
        .map(|p| p.version)
        .collect();
    assert_eq!(pending, versions(&[2, 3]));
    assert!(status_between.has_pending_changes);
    let rest = up(&many.target(), &dir.read(), &limited(2))
        .await
        .expect("up --limit 2");
    assert_eq!(rest.applied_versions, versions(&[2, 3]));
    let again = up(&many.target(), &dir.read(), &options())
        .await
        .expect("up again");
    assert_eq!(
        (again.outcome, again.applied_versions.len()),
        (Outcome::UpToDate, 0)
    );

    let mut histories = Vec::new();
    for db in [&one, &many] {
        let s = status(&db.target(), &dir.read(), ExecOrder::Linear)
            .await
            .expect("status");
        assert_eq!(s.sum, SumCheck::Verified);
        assert!(s.pending_migrations.is_empty() && !s.has_pending_changes, "{s:?}");
        assert_eq!(s.current_version, Some(Version(3)));
        assert_eq!(s.applied_migrations.len(), 3);
        assert!(
            s.dirty_revision.is_none() && s.modified_migrations.is_empty() && s.ahead_migrations.is_empty()
        );
        assert_eq!(s.pending_sequence.as_deref(), Some(&[][..]));
        assert_eq!(db.count("SELECT COUNT(*) FROM items").await, 2);
        let rows = rows(db).await;
        let seed = &rows[1];
        assert_eq!((seed.state.as_str(), seed.applied, seed.total), ("applied", 2, 2));
        assert_eq!(seed.checksum.len(), 64);
        assert_eq!(rows[2].description, "index");
        histories.push(s.history_fingerprint);
    }
    assert_eq!(
        histories[0], histories[1],
        "one run and three limited runs leave the same history"
    );
    one.drop_database().await;
    many.drop_database().await;
}

async fn failure_mid_file_leaves_a_dirty_row(dialect: Dialect) {
    let dir = Dir::new();
    dir.add(1, "base", "CREATE TABLE base (id INT);\n");
    dir.add(
        2,
        "breaks",
        "CREATE TABLE a (id INT);\nINSERT INTO a VALUES (1);\nINSERT INTO missing_table VALUES (1);\nCREATE TABLE b (id INT);\n",
    );
    let db = Db::fresh(dialect).await;
    let report = up(&db.target(), &dir.read(), &options())
        .await
        .expect("up runs and reports");
    assert_eq!(report.applied_versions, versions(&[1]));
    let failure = report.failure.expect("a failure");
    assert_eq!(
        (failure.version, failure.statement, failure.line, failure.total),
        (Version(2), 3, 3, 4)
    );
    assert!(failure.error.contains("missing_table"), "{}", failure.error);
    let row = rows(&db)
        .await
        .into_iter()
        .find(|r| r.version == Version(2))
        .expect("row 2");
    assert_eq!(row.state, "failed");
    assert_eq!(row.total, 4);
    assert_eq!(
        row.error_stmt.as_deref(),
        Some("INSERT INTO missing_table VALUES (1)")
    );
    assert!(row.error.as_deref().is_some_and(|e| e.contains("missing_table")));
    match dialect {
        Dialect::Postgres => {
            assert_eq!(report.outcome, Outcome::Failed);
            assert_eq!((failure.applied, row.applied), (0, 0), "the file rolled back");
            assert!(
                !db.has_table("a").await,
                "the transaction rolled back the CREATE TABLE"
            );
        }
        Dialect::Mysql => {
            assert_eq!(report.outcome, Outcome::Partial);
            assert_eq!((failure.applied, row.applied), (2, 2), "two statements committed");
            assert_eq!(db.count("SELECT COUNT(*) FROM a").await, 1);
        }
    }
    assert!(!db.has_table("b").await);

    let refused = up(&db.target(), &dir.read(), &options())
        .await
        .expect_err("dirty");
    assert!(
        matches!(refused, Error::Dirty { version: Version(2), ref state, .. } if state == "failed"),
        "{refused}"
    );
    let s = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert_eq!(s.dirty_revision.map(|r| r.version), Some(Version(2)));
    assert!(s.pending_sequence.is_none() && s.blocked.is_some());

    // The manual repair: fix the file, clear the row; then the run completes.
    dir.add(
        2,
        "breaks",
        "CREATE TABLE IF NOT EXISTS a (id INT);\nCREATE TABLE b (id INT);\n",
    );
    db.exec("DELETE FROM schema_migrations WHERE version = 2").await;
    let fixed = up(&db.target(), &dir.read(), &options())
        .await
        .expect("up after repair");
    assert_eq!(
        (fixed.outcome, fixed.applied_versions),
        (Outcome::Applied, versions(&[2]))
    );
    assert!(db.has_table("b").await);
    db.drop_database().await;
}

async fn modified_out_of_order_and_ahead(dialect: Dialect) {
    let dir = Dir::new();
    dir.add(1, "one", "CREATE TABLE one (id INT);\n");
    dir.add(3, "three", "CREATE TABLE three (id INT);\n");
    let db = Db::fresh(dialect).await;
    let first = up(&db.target(), &dir.read(), &options()).await.expect("up");
    assert_eq!(first.applied_versions, versions(&[1, 3]));

    dir.add(2, "two", "CREATE TABLE two (id INT);\n");
    let s = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert_eq!(s.out_of_order_migrations, versions(&[2]));
    assert!(
        s.blocked.as_deref().is_some_and(|b| b.contains("out-of-order")),
        "{:?}",
        s.blocked
    );
    let refused = up(&db.target(), &dir.read(), &options())
        .await
        .expect_err("out of order");
    assert!(
        matches!(refused, Error::OutOfOrder { ref versions, current: Version(3) } if versions == &[Version(2)]),
        "{refused}"
    );
    assert!(!db.has_table("two").await);
    let skip = UpOptions {
        exec_order: ExecOrder::LinearSkip,
        ..options()
    };
    assert_eq!(
        up(&db.target(), &dir.read(), &skip).await.expect("skip").outcome,
        Outcome::UpToDate
    );
    let nonlinear = UpOptions {
        exec_order: ExecOrder::NonLinear,
        ..options()
    };
    let applied = up(&db.target(), &dir.read(), &nonlinear)
        .await
        .expect("non-linear");
    assert_eq!(applied.applied_versions, versions(&[2]));

    dir.write("0000000001_one.up.sql", "CREATE TABLE one (id BIGINT);\n");
    let s = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert_eq!(s.modified_migrations.len(), 1);
    let m = &s.modified_migrations[0];
    assert_eq!(m.version, Version(1));
    assert_ne!(m.recorded_checksum, m.file_checksum);
    let refused = up(&db.target(), &dir.read(), &options())
        .await
        .expect_err("modified");
    assert!(
        matches!(refused, Error::Modified { version: Version(1) }),
        "{refused}"
    );

    dir.write("0000000001_one.up.sql", "CREATE TABLE one (id INT);\n");
    dir.remove(3, "three");
    let s = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert!(s.modified_migrations.is_empty());
    assert_eq!(s.ahead_migrations.len(), 1);
    assert_eq!(
        (
            s.ahead_migrations[0].version,
            s.ahead_migrations[0].description.as_str()
        ),
        (Version(3), "three")
    );
    assert_eq!(s.current_version, Some(Version(3)));
    assert!(!s.has_pending_changes);
    db.drop_database().await;
}

async fn concurrent_ups_apply_each_migration_once(dialect: Dialect) {
    let dir = Dir::new();
    let sleep = match dialect {
        Dialect::Postgres => "SELECT pg_sleep(1)",
        Dialect::Mysql => "SELECT SLEEP(1)",
    };
    dir.add(
        1,
        "first",
        &format!("INSERT INTO sentinel VALUES (1);\n{sleep};\n"),
    );
    dir.add(2, "second", "INSERT INTO sentinel VALUES (2);\n");
    for wait in [Duration::from_secs(30), Duration::ZERO] {
        let db = Db::fresh(dialect).await;
        db.exec("CREATE TABLE sentinel (v INT)").await;
        let (target, listing) = (db.target(), dir.read());
        let opts = UpOptions {
            lock_wait: wait,
            ..options()
        };
        let (a, b) = tokio::join!(up(&target, &listing, &opts), up(&target, &listing, &opts));
        let mut applied = Vec::new();
        let mut losers = 0;
        for result in [a, b] {
            match result {
                Ok(r) if r.outcome == Outcome::Applied => applied.push(r.applied_versions),
                Ok(r) => {
                    assert_eq!(r.outcome, Outcome::UpToDate, "the waiter finds nothing left");
                    losers += 1;
                }
                Err(Error::Engine(ptah_engine::Error::LockBusy { .. })) if wait.is_zero() => losers += 1,
                Err(e) => panic!("unexpected: {e}"),
            }
        }
        assert_eq!(applied, vec![versions(&[1, 2])], "exactly one process applies");
        assert_eq!(losers, 1);
        assert_eq!(
            db.count("SELECT COUNT(*) FROM sentinel").await,
            2,
            "nothing ran twice"
        );
        assert_eq!(db.count("SELECT COUNT(*) FROM sentinel WHERE v = 1").await, 1);
        assert_eq!(rows(&db).await.len(), 2);
        db.drop_database().await;
    }
}

async fn stale_expected_sequence_runs_nothing(dialect: Dialect) {
    let dir = Dir::new();
    dir.add(1, "a", "INSERT INTO sentinel VALUES (1);\n");
    dir.add(2, "b", "INSERT INTO sentinel VALUES (2);\n");
    let db = Db::fresh(dialect).await;
    db.exec("CREATE TABLE sentinel (v INT)").await;
    let approved = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status")
        .pending_sequence
        .expect("up would run");
    assert_eq!(approved.len(), 2);
    let expecting = |seq: &Vec<ptah_migrate::SequenceEntry>| UpOptions {
        expect: Some(seq.clone()),
        ..options()
    };

    // A file added after approval.
    dir.add(3, "c", "INSERT INTO sentinel VALUES (3);\n");
    let err = up(&db.target(), &dir.read(), &expecting(&approved))
        .await
        .expect_err("file added");
    assert!(
        matches!(err, Error::SequenceMismatch { ref difference, .. } if difference.contains("expected 2 migrations, found 3")),
        "{err}"
    );
    nothing_ran(&db, 0, 0).await;
    dir.remove(3, "c");

    // A checksum changed after approval.
    dir.write("0000000002_b.up.sql", "INSERT INTO sentinel VALUES (22);\n");
    let err = up(&db.target(), &dir.read(), &expecting(&approved))
        .await
        .expect_err("checksum");
    assert!(
        matches!(err, Error::SequenceMismatch { ref difference, .. } if difference.contains("checksum")),
        "{err}"
    );
    nothing_ran(&db, 0, 0).await;
    dir.write("0000000002_b.up.sql", "INSERT INTO sentinel VALUES (2);\n");

    // An approval that names another transaction mode (the header is part of the checksum, so
    // only a hand-edited approval can differ in the mode alone).
    let mut wrong_mode = approved.clone();
    wrong_mode[1].transaction = ptah_migrate::TxMode::None;
    let err = up(&db.target(), &dir.read(), &expecting(&wrong_mode))
        .await
        .expect_err("mode");
    assert!(
        matches!(err, Error::SequenceMismatch { ref difference, .. } if difference.contains("transaction mode")),
        "{err}"
    );
    nothing_ran(&db, 0, 0).await;

    // History moved: someone applied version 1 in between.
    up(
        &db.target(),
        &dir.read(),
        &UpOptions {
            limit: Some(1),
            ..options()
        },
    )
    .await
    .expect("limit 1");
    let err = up(&db.target(), &dir.read(), &expecting(&approved))
        .await
        .expect_err("history moved");
    assert!(
        matches!(err, Error::SequenceMismatch { ref difference, .. } if difference.contains("expected version 1, found version 2")),
        "{err}"
    );
    nothing_ran(&db, 1, 1).await;

    // A fresh approval matches and runs.
    let fresh = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    let seq = fresh.pending_sequence.expect("sequence");
    let done = up(&db.target(), &dir.read(), &expecting(&seq))
        .await
        .expect("matching sequence");
    assert_eq!(done.applied_versions, versions(&[2]));
    assert_eq!(
        Some(done.sequence_fingerprint),
        fresh.pending_sequence_fingerprint
    );
    nothing_ran(&db, 2, 2).await;
    db.drop_database().await;
}

async fn nothing_ran(db: &Db, sentinel: i64, revisions: usize) {
    assert_eq!(db.count("SELECT COUNT(*) FROM sentinel").await, sentinel);
    assert_eq!(rows(db).await.len(), revisions);
}

async fn splitter_corpus_runs_on_the_server(dialect: Dialect) {
    let corpus = |name: &str| {
        std::fs::read_to_string(format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR")))
            .expect("corpus")
    };
    let dir = Dir::new();
    let db = Db::fresh(dialect).await;
    match dialect {
        Dialect::Postgres => {
            dir.add(
                1,
                "tables",
                "CREATE TABLE invoices (id int PRIMARY KEY, updated_at timestamptz);\nCREATE TABLE notes (body text);\nCREATE TABLE \"we;ird\" (\"odd;name\" int);\n",
            );
            dir.add(2, "corpus", &corpus("pg_functions.sql"));
            let report = up(&db.target(), &dir.read(), &options()).await.expect("up");
            assert_eq!(report.outcome, Outcome::Applied, "{:?}", report.failure);
            assert_eq!(rows(&db).await[1].total, 6);
            assert_eq!(db.count("SELECT COUNT(*) FROM notes").await, 3);
            assert_eq!(db.count("SELECT add_one(41)::bigint").await, 42);
            db.exec("CALL log_twice('x')").await;
            assert_eq!(
                db.count("SELECT COUNT(*) FROM notes WHERE body LIKE 'x%'").await,
                2
            );
            db.exec("INSERT INTO invoices VALUES (1, NULL); UPDATE invoices SET id = 1")
                .await;
            assert_eq!(
                db.count("SELECT COUNT(*) FROM invoices WHERE updated_at IS NOT NULL")
                    .await,
                1
            );
        }
        Dialect::Mysql => {
            dir.add(1, "corpus", &corpus("mysql_procedures.sql"));
            let report = up(&db.target(), &dir.read(), &options()).await.expect("up");
            assert_eq!(report.outcome, Outcome::Applied, "{:?}", report.failure);
            assert_eq!(rows(&db).await[0].total, 6);
            assert_eq!(db.count("SELECT COUNT(*) FROM notes").await, 5);
            assert_eq!(
                db.count("SELECT COUNT(*) FROM notes WHERE body = 'hello; world; again'")
                    .await,
                1
            );
            db.exec("INSERT INTO notes (body) VALUES ('  padded  ')").await;
            assert_eq!(
                db.count("SELECT COUNT(*) FROM notes WHERE body = 'padded'").await,
                1,
                "the trigger ran"
            );
        }
    }
    db.drop_database().await;
}

async fn dry_run_and_baseline(dialect: Dialect) {
    let dir = Dir::new();
    dir.add(1, "a", "CREATE TABLE a (id INT);\n");
    dir.add(2, "b", "CREATE TABLE b (id INT);\n");
    dir.add(
        3,
        "c",
        "-- comment\nCREATE TABLE c (id INT);\nCREATE TABLE d (id INT);\n",
    );
    let db = Db::fresh(dialect).await;
    let plan = up(
        &db.target(),
        &dir.read(),
        &UpOptions {
            dry_run: true,
            ..options()
        },
    )
    .await
    .expect("dry run");
    assert_eq!(plan.outcome, Outcome::Planned);
    let planned = plan.planned.expect("statements");
    assert_eq!(planned.len(), 3);
    assert_eq!(
        planned[2].statements,
        ["CREATE TABLE c (id INT)", "CREATE TABLE d (id INT)"]
    );
    assert!(
        !db.has_table("schema_migrations").await,
        "a dry run creates nothing"
    );
    assert!(!db.has_table("a").await);

    let wait = Duration::from_secs(30);
    let report = baseline(&db.target(), &dir.read(), Version(2), false, wait)
        .await
        .expect("baseline");
    assert_eq!(report.baselined_versions, versions(&[1, 2]));
    assert!(!db.has_table("a").await, "baseline runs nothing");
    let s = status(&db.target(), &dir.read(), ExecOrder::Linear)
        .await
        .expect("status");
    assert_eq!(s.current_version, Some(Version(2)));
    assert_eq!(
        s.pending_migrations.iter().map(|p| p.version).collect::<Vec<_>>(),
        versions(&[3])
    );
    let refused = baseline(&db.target(), &dir.read(), Version(3), false, wait)
        .await
        .expect_err("rows exist");
    assert!(matches!(refused, Error::BaselineRefused { rows: 2 }), "{refused}");
    let report = up(&db.target(), &dir.read(), &options()).await.expect("up");
    assert_eq!(report.applied_versions, versions(&[3]));
    assert!(db.has_table("c").await && db.has_table("d").await && !db.has_table("a").await);
    db.drop_database().await;
}
