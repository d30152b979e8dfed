//! What PostgreSQL itself does with the statements the lock rules flag: while the statement's
//! transaction is open, a concurrent INSERT into the table waits (here: fails at its 500 ms
//! lock_timeout). The lock-safe second step (`VALIDATE CONSTRAINT`) is not flagged, and the server
//! lets the INSERT through. Needs `cargo xtask services up`.

use std::time::Duration;

use ptah_engine::{DatabaseUrl, Dialect, Session};
use ptah_migrate::Directory;
use ptah_migrationlint::{
    Config, lint_directory,
    lock::{Lock, taken},
};
use ptah_testservices::{TestServices, unique_name};

async fn fresh() -> DatabaseUrl {
    let services = TestServices::require();
    let name = unique_name("lint");
    let admin = DatabaseUrl::parse(services.postgres.admin_url.expose()).expect("admin url");
    let mut session = Session::connect(&admin, Duration::from_secs(10))
        .await
        .expect("admin");
    session
        .batch(&format!("CREATE DATABASE {name} OWNER app"))
        .await
        .expect("create database");
    session.close().await.expect("close");
    DatabaseUrl::parse(services.postgres.url_for_database(&name).expose()).expect("url")
}

/// The codes the linter reports for `sql` as the only pending migration, on a table made earlier.
fn codes(sql: &str) -> Vec<&'static str> {
    let dir = tempfile::tempdir().expect("dir");
    for (name, text) in [
        ("000001_t.up.sql", "CREATE TABLE t (a int, b text);\n"),
        ("000001_t.down.sql", "DROP TABLE t;\n"),
        ("000002_change.up.sql", sql),
        ("000002_change.down.sql", "SELECT 1;\n"),
    ] {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let read = Directory::read(dir.path()).expect("dir");
    let report = lint_directory(
        &read,
        Dialect::Postgres,
        &Config::default(),
        Some(ptah_migrate::Version(1)),
    )
    .expect("linted");
    report.findings.iter().map(|f| f.code).collect()
}

/// Whether an INSERT into `table` waits on `statement` while the statement's transaction is open.
async fn blocks_writes(url: &DatabaseUrl, table: &str, statement: &str) -> bool {
    let mut changer = Session::connect(url, Duration::from_secs(10))
        .await
        .expect("connect");
    changer.batch("BEGIN").await.expect("begin");
    changer
        .batch(statement)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
    let mut writer = Session::connect(url, Duration::from_secs(10))
        .await
        .expect("connect");
    let insert = writer
        .batch(&format!(
            "SET lock_timeout = '500ms'; INSERT INTO {table} (a, b) VALUES (7, 'x')"
        ))
        .await;
    changer.batch("ROLLBACK").await.expect("rollback");
    changer.close().await.expect("close");
    writer.close().await.expect("close");
    match insert {
        Ok(()) => false,
        Err(e) if e.to_string().contains("lock timeout") => true,
        Err(e) => panic!("the INSERT failed otherwise: {e}"),
    }
}

#[tokio::test]
async fn what_the_lock_rules_flag_blocks_writes_on_the_server_and_the_safe_step_does_not() {
    let url = fresh().await;
    let cases = [
        ("CREATE INDEX t_a ON t (a)", "PG101"),
        ("ALTER TABLE t ALTER COLUMN b SET NOT NULL", "PG303"),
        ("ALTER TABLE t ADD CONSTRAINT t_a_positive CHECK (a > 0)", "PG304"),
        ("ALTER TABLE t ADD CONSTRAINT t_a_key UNIQUE (a)", "PG105"),
        ("ALTER TABLE t ADD PRIMARY KEY (a)", "PG104"),
        ("ALTER TABLE t SET UNLOGGED", "PG305"),
        (
            "ALTER TABLE t ADD COLUMN c int GENERATED ALWAYS AS (a * 2) STORED",
            "PG307",
        ),
        (
            "CREATE TRIGGER t_touch BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION t_touch()",
            "PG306",
        ),
    ];
    for (statement, code) in cases {
        assert_eq!(codes(&format!("{statement};\n")), [code], "{statement}");
        let mut setup = Session::connect(&url, Duration::from_secs(10))
            .await
            .expect("connect");
        setup
            .batch(
                "DROP TABLE IF EXISTS t; CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, 'one'), (2, 'two'); \
                 CREATE OR REPLACE FUNCTION t_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
            )
            .await
            .expect("table");
        setup.close().await.expect("close");
        assert!(
            blocks_writes(&url, "t", statement).await,
            "{statement} lets writes through"
        );
    }
    // The lock-safe form: the constraint added NOT VALID (a brief lock, no scan), then validated
    // under a lock that lets writes through.
    let mut setup = Session::connect(&url, Duration::from_secs(10))
        .await
        .expect("connect");
    setup
        .batch("DROP TABLE IF EXISTS t; CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, 'one'); ALTER TABLE t ADD CONSTRAINT t_a_positive CHECK (a > 0) NOT VALID")
        .await
        .expect("table");
    setup.close().await.expect("close");
    let validate = "ALTER TABLE t VALIDATE CONSTRAINT t_a_positive";
    assert!(codes(&format!("{validate};\n")).is_empty());
    assert!(
        !blocks_writes(&url, "t", validate).await,
        "VALIDATE CONSTRAINT blocks writes"
    );
}

/// The strongest lock an open transaction holds on `t`, found by what a second session can take
/// without waiting (`LOCK TABLE … NOWAIT`): each of the modes below conflicts with a different
/// set, so three probes name it.
async fn held_lock(url: &DatabaseUrl) -> Lock {
    let mut probe = Session::connect(url, Duration::from_secs(10))
        .await
        .expect("connect");
    let mut takes = Vec::new();
    for mode in ["ACCESS SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE", "SHARE"] {
        let ok = probe
            .batch(&format!("BEGIN; LOCK TABLE t IN {mode} MODE NOWAIT"))
            .await
            .is_ok();
        probe.batch("ROLLBACK").await.expect("rollback");
        takes.push(ok);
    }
    probe.close().await.expect("close");
    match takes.as_slice() {
        [false, ..] => Lock::AccessExclusiveLock,
        [true, false, _, false] => Lock::ShareRowExclusiveLock,
        [true, false, _, true] => Lock::ShareLock,
        [true, true, false, false] => Lock::ShareUpdateExclusiveLock,
        [true, true, true, false] => Lock::RowExclusiveLock,
        other => panic!("no mode explains what the probes could take: {other:?}"),
    }
}

/// Every form the classification names, run in a transaction on the server: the lock the server
/// holds is the one `lock::taken` says.
#[tokio::test]
async fn the_lock_each_statement_takes_is_the_one_the_server_holds() {
    let url = fresh().await;
    let cases = [
        "INSERT INTO t (a, b) VALUES (3, 'three')",
        "CREATE INDEX t_a ON t (a)",
        "CREATE TRIGGER t_touch BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION t_touch()",
        "ALTER TABLE t ADD CONSTRAINT t_p FOREIGN KEY (a) REFERENCES p (id)",
        "ALTER TABLE t VALIDATE CONSTRAINT t_a_positive",
        "ALTER TABLE t ADD COLUMN c int",
        "ALTER TABLE t ALTER COLUMN b SET NOT NULL",
        "ALTER TABLE t ALTER COLUMN a TYPE bigint",
        "ALTER TABLE t ADD CONSTRAINT t_a_small CHECK (a < 100)",
        "ALTER TABLE t DISABLE TRIGGER t_touch",
        "TRUNCATE t",
        "DROP TABLE t",
    ];
    for statement in cases {
        let mut setup = Session::connect(&url, Duration::from_secs(10))
            .await
            .expect("connect");
        setup
            .batch(
                "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS p; CREATE TABLE p (id int PRIMARY KEY); \
                 INSERT INTO p VALUES (1), (2); CREATE TABLE t (a int, b text); \
                 INSERT INTO t VALUES (1, 'one'), (2, 'two'); \
                 CREATE OR REPLACE FUNCTION t_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$; \
                 CREATE TRIGGER t_touch BEFORE UPDATE ON t FOR EACH ROW EXECUTE FUNCTION t_touch(); \
                 ALTER TABLE t ADD CONSTRAINT t_a_positive CHECK (a > 0) NOT VALID",
            )
            .await
            .expect("the tables");
        setup.close().await.expect("close");
        // The trigger the setup made is the one some cases create again: drop it for those.
        let prepare = if statement.starts_with("CREATE TRIGGER") {
            "BEGIN; DROP TRIGGER t_touch ON t; COMMIT"
        } else {
            "SELECT 1"
        };
        let mut changer = Session::connect(&url, Duration::from_secs(10))
            .await
            .expect("connect");
        changer.batch(prepare).await.expect("prepare");
        changer.batch("BEGIN").await.expect("begin");
        changer
            .batch(statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
        let held = held_lock(&url).await;
        changer.batch("ROLLBACK").await.expect("rollback");
        changer.close().await.expect("close");
        assert_eq!(
            taken(statement, Dialect::Postgres),
            Some(held),
            "{statement}: the server holds {held:?}"
        );
    }
}
