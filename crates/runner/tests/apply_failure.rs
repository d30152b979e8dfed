//! A failed Apply's frame says why, in the server's words: the failed statement, the SQLSTATE
//! and the server's message (quoted spans removed), with the real `ptah` on the real PostgreSQL.
//! Without it the frame of an `ALTER TABLE` that ran into its lock timeout read "a statement
//! failed; 0 statement(s) committed", like any other failure (issue 35, scenario 2).

mod support;

use ptah_dataplane::ErrorCode;
use ptah_testservices::TestServices;
use support::{db_env, deadlines, fresh_database, password_forms, ptah, run_runner, scratch};

const PG_SCHEMA: &str = "CREATE TABLE widgets (id integer PRIMARY KEY, name text NOT NULL);\n";

#[tokio::test]
async fn an_apply_that_runs_into_its_lock_timeout_reports_the_sqlstate() {
    let work = scratch();
    let services = TestServices::require();
    let url = fresh_database(&services.postgres, true).await;
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
        .batch_execute("CREATE TABLE widgets (id integer PRIMARY KEY)")
        .await
        .expect("create");
    let schema = work.path().join("schema.sql");
    std::fs::write(&schema, PG_SCHEMA).expect("schema");
    let mut env = db_env(&url);
    env.insert("PTAH_SCHEMA_FROM".into(), schema.display().to_string());
    let planned = run_runner("plan", &env, &ptah(), work.path());
    let p = &planned.frame().payload;
    let plan_file = work.path().join("approved.plan.json");
    std::fs::write(&plan_file, p.stdout.clone().expect("plan")).expect("plan file");
    let digest = p.plan.as_ref().expect("plan").plan_content_digest.to_string();
    env.insert("PTAH_PLAN_FILE".into(), plan_file.display().to_string());
    env.insert("PTAH_EXPECTED_PLAN_CONTENT_DIGEST".into(), digest);
    // The ALTER waits one second for the table the test holds, then the server cancels it.
    env.insert("PTAH_LOCK_TIMEOUT".into(), "1s".into());
    deadlines(&mut env, 60, 3);
    client
        .batch_execute("BEGIN; LOCK TABLE widgets IN ACCESS SHARE MODE")
        .await
        .expect("lock");
    let run = run_runner("apply", &env, &ptah(), work.path());
    client.batch_execute("ROLLBACK").await.expect("unlock");
    run.assert_no_secret(&password_forms(&url));
    let p = &run.frame().payload;
    let err = p.error.as_ref().expect("an error");
    assert_eq!(err.code, ErrorCode::ChildFailed, "{err:?}");
    assert_eq!(err.child_code.as_deref(), Some("apply_failed"), "{err:?}");
    assert_eq!(
        err.message,
        "statement 1 failed; 0 statement(s) committed: canceling statement due to lock timeout (SQLSTATE 55P03)"
    );
    // The executor knows what it committed: nothing, and certainly so.
    assert_eq!(p.uncertain, Some(false));
}
