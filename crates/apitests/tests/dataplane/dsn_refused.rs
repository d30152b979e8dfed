//! Scenario 16 [mysql-dsn-refusal]: a database URL that asks for MySQL's multi-statement mode
//! (`multiStatements=true`), or PostgreSQL's `sslmode=prefer` (which falls back to plaintext), is
//! refused by the runner before its child starts: the status carries the runner's
//! `invalid_input` (given only when the child never started) and why, nothing is planned or applied, and the database is
//! untouched.
//!
//! The URL is edited while the schema is suspended, so the first Job that reads it reads the
//! refused one.

use std::time::Duration;

use kube::{Api, api::ListParams};
use ptah_api::{PtahSchemaPlan, schema::SchemaPhase};
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{db_url, patch_spec, said, set_db_url},
        database::expect_tables,
        setup::Run,
    },
    lifecycle::app::{Engine, phase},
};

const BOUND: Duration = Duration::from_secs(300);

async fn dsn_refused(name: &'static str, engine: Engine, edit: fn(&str) -> String, why: &str) {
    let run = Run::start(name, engine, json!({"suspend": true})).await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    let url = edit(&db_url(&run).await);
    set_db_url(&run, &url).await;
    patch_spec(&run, json!({"suspend": false})).await;

    let failed = run
        .wait("the Observe refused", |s| {
            phase(s) == Some(SchemaPhase::Failed)
                && s.status.as_ref().is_some_and(|st| st.active_operation.is_none())
        })
        .await;
    // The runner's code, which it gives only when the child never started (the Job and its Pod
    // may already be gone: the manager shortens a settled Job's life).
    let status = said(&failed);
    assert!(
        status.contains(&format!("invalid_input: invalid input PTAH_DB_URL: {why}")),
        "the runner refused the URL, saying why ({why}), before its child started: {status}"
    );
    // Two more intervals: still nothing planned or applied.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let plans: Api<PtahSchemaPlan> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let published = plans
        .list(&ListParams::default())
        .await
        .expect("list plans")
        .items
        .len();
    let database = match expect_tables(engine, &run.app.host_url, &[]).await {
        Ok(()) if published == 0 => Ok(()),
        Ok(()) => Err(format!("{published} plan(s) published from a refused URL")),
        e => e,
    };
    run.conclude(&[], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_dsn_with_multi_statements_is_refused_before_the_child_starts_mysql() {
    dsn_refused(
        "e2e_dataplane_dsn_with_multi_statements_is_refused_before_the_child_starts_mysql",
        Engine::Mariadb,
        |url| format!("{url}&multiStatements=true"),
        "multi-statement mode is refused",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_dsn_with_sslmode_prefer_is_refused_before_the_child_starts_postgresql() {
    dsn_refused(
        "e2e_dataplane_dsn_with_sslmode_prefer_is_refused_before_the_child_starts_postgresql",
        Engine::Postgres,
        |url| url.replace("sslmode=verify-full", "sslmode=prefer"),
        "unsupported TLS mode",
    )
    .await;
}
