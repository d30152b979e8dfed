//! Scenario 13: a plan with a `SECURITY DEFINER` function and a `GRANT … TO PUBLIC` waits at
//! `PrivilegeChanges` even under `policy.apply: Always`, and stays there through the refresh of
//! several scheduled cycles (each a new Resolve, Observe and Plan): it is never `ReadyToApply`,
//! never `Applying`, no Apply Job runs, and the database has neither the function nor the grant.
//!
//! PostgreSQL only: the schema language's `grant` blocks and `security_definer` functions are
//! PostgreSQL's (a MySQL view's `sql_security = DEFINER` is MySQL's default and is written
//! without the clause, so there is nothing for the operator to raise).

use std::time::Duration;

use ptah_api::{conditions::ConditionType, schema::SchemaPhase, schemaplan::PrivilegeChangeKind};
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{patch_spec, phases_during, said},
        database::expect_tables,
        setup::Run,
    },
    lifecycle::app::{Engine, phase, push, reason},
};

const BOUND: Duration = Duration::from_secs(360);
/// Three scheduled cycles at the scenario's 10 s interval, and their Jobs.
const THROUGH: Duration = Duration::from_secs(45);

const ARTIFACT: &str = r#"schema "public" {}

table "items" {
  schema = schema.public
  column "id" {
    type = bigint
  }
  primary_key {
    columns = [column.id]
  }
  grant "PUBLIC" {
    privileges = ["SELECT"]
  }
}

function "whoami" {
  schema = schema.public
  arguments = ""
  returns = "text"
  language = "sql"
  security_definer = true
  as = "SELECT current_user::text"
}
"#;

fn at_privilege_changes(s: &ptah_api::PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::AwaitingApproval)
        && reason(s, ConditionType::ApprovalRequired) == "PrivilegeChanges"
}

async fn functions(url: &str) -> i64 {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect to PostgreSQL");
    tokio::spawn(conn);
    client
        .query_one("SELECT count(*) FROM pg_proc WHERE proname = 'whoami'", &[])
        .await
        .expect("read pg_proc")
        .get(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_privilege_changes_stay_awaiting_approval_under_always_postgresql() {
    let name = "e2e_dataplane_privilege_changes_stay_awaiting_approval_under_always_postgresql";
    let engine = Engine::Postgres;
    let run = Run::start(
        name,
        engine,
        json!({"suspend": true, "policy": {"apply": "Always"}}),
    )
    .await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    push(&run.app.services, &run.app.repository, "v2", ARTIFACT);
    let reference = format!("oci://{}/{}:v2", run.app.registry, run.app.repository);
    patch_spec(&run, json!({"suspend": false, "desired": {"ociRef": reference}})).await;

    let first = run
        .wait("the plan waits at PrivilegeChanges", at_privilege_changes)
        .await;
    let kinds = first
        .status
        .as_ref()
        .and_then(|st| st.plan.as_ref())
        .map(|p| p.privilege_changes.clone())
        .unwrap_or_default();
    assert!(
        kinds.contains(&PrivilegeChangeKind::SecurityDefiner) && kinds.contains(&PrivilegeChangeKind::Grant),
        "the plan's privilege changes name both: {kinds:?}"
    );
    let refreshed_from = first
        .status
        .as_ref()
        .and_then(|st| st.target.as_ref())
        .and_then(|t| t.last_observed_at.clone())
        .map(|t| t.0);
    let (phases, last) = phases_during(&run, THROUGH).await;
    assert!(
        !phases
            .iter()
            .any(|p| matches!(p, SchemaPhase::ReadyToApply | SchemaPhase::Applying)),
        "never ready to apply, never applying: {phases:?}"
    );
    let refreshed_to = last
        .status
        .as_ref()
        .and_then(|st| st.target.as_ref())
        .and_then(|t| t.last_observed_at.clone())
        .map(|t| t.0);
    assert!(
        refreshed_to > refreshed_from,
        "the cycles ran (observed at {refreshed_from:?}, then {refreshed_to:?}); phases {phases:?}"
    );
    let last = run.wait("still at PrivilegeChanges", at_privilege_changes).await;
    eprintln!("phases through {THROUGH:?}: {phases:?}; last: {}", said(&last));

    let database = match (
        expect_tables(engine, &run.app.host_url, &[]).await,
        functions(&run.app.host_url).await,
    ) {
        (Ok(()), 0) => Ok(()),
        (tables, n) => Err(format!("tables: {tables:?}; functions whoami: {n}")),
    };
    let leak = run
        .scenario
        .leak_scan(&run.app.services, &run.manager_log())
        .await;
    run.end().await.finish(&[], database, leak, BOUND).await;
}
