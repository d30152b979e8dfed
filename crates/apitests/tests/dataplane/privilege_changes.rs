//! Scenario 13: a plan with a `SECURITY DEFINER` function and a `GRANT … TO PUBLIC` waits at
//! `PrivilegeChanges` even under `policy.apply: Always`, and stays there through the refresh of
//! several scheduled cycles (each a new Resolve, Observe and Plan): it is never `ReadyToApply`,
//! never `Applying`, no Apply Job runs, and the database has neither the function nor the grant.
//!
//! On MySQL the schema language has neither `grant` blocks nor `security_definer` (and a view's
//! `sql_security = DEFINER`, MySQL's default, is written without the clause): its analogue is a
//! trigger with a `DEFINER` clause, which runs with its definer's rights.

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

const POSTGRES_ARTIFACT: &str = r#"schema "public" {}

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

const MYSQL_ARTIFACT: &str = r#"table "items" {
  column "id" {
    type = bigint
  }
  primary_key {
    columns = [column.id]
  }
}

trigger "items_ai" {
  on = table.items
  as = "CREATE DEFINER = CURRENT_USER TRIGGER items_ai AFTER INSERT ON items FOR EACH ROW SET @x = 1"
}
"#;

fn at_privilege_changes(s: &ptah_api::PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::AwaitingApproval)
        && reason(s, ConditionType::ApprovalRequired) == "PrivilegeChanges"
}

/// The routines (PostgreSQL: `whoami`) or triggers (MySQL: `items_ai`) the plan would create.
async fn programs(engine: Engine, url: &str) -> i64 {
    match engine {
        Engine::Postgres => {
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
        Engine::Mariadb => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(url)
                .await
                .expect("connect to MariaDB");
            conn.query_first::<i64, _>(
                "SELECT COUNT(*) FROM information_schema.triggers \
                 WHERE trigger_schema = DATABASE() AND trigger_name = 'items_ai'",
            )
            .await
            .expect("read the triggers")
            .unwrap_or(0)
        }
    }
}

async fn privilege_changes(name: &'static str, engine: Engine) {
    let (artifact, want) = match engine {
        Engine::Postgres => (
            POSTGRES_ARTIFACT,
            &[PrivilegeChangeKind::SecurityDefiner, PrivilegeChangeKind::Grant][..],
        ),
        // The classifier reads MySQL's `DEFINER =` as `SecurityDefiner` (`ptah_schema::classify`);
        // the API's separate `Definer` kind is never reported.
        Engine::Mariadb => (MYSQL_ARTIFACT, &[PrivilegeChangeKind::SecurityDefiner][..]),
    };
    let run = Run::start(
        name,
        engine,
        json!({"suspend": true, "policy": {"apply": "Always"}}),
    )
    .await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    push(&run.app.services, &run.app.repository, "v2", artifact);
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
        want.iter().all(|k| kinds.contains(k)),
        "the plan's privilege changes name {want:?}: {kinds:?}"
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
        programs(engine, &run.app.host_url).await,
    ) {
        (Ok(()), 0) => Ok(()),
        (tables, n) => Err(format!("tables: {tables:?}; definer-rights programs: {n}")),
    };
    run.conclude(&[], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_privilege_changes_stay_awaiting_approval_under_always_postgresql() {
    privilege_changes(
        "e2e_dataplane_privilege_changes_stay_awaiting_approval_under_always_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_privilege_changes_stay_awaiting_approval_under_always_mysql() {
    privilege_changes(
        "e2e_dataplane_privilege_changes_stay_awaiting_approval_under_always_mysql",
        Engine::Mariadb,
    )
    .await;
}
