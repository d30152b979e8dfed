//! Scenario 15: on MySQL, a plan that drops an index (made by hand, absent from the artifact) is
//! destructive, and stays `Blocked` at `DestructiveChangesDisabled` across scheduled cycles, even
//! under `policy.apply: Always`: no Apply Job runs and the index is still there.

use std::time::Duration;

use mysql_async::prelude::Queryable;
use ptah_api::{conditions::ConditionType, schema::SchemaPhase};
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{patch_spec, phases_during, said},
        database::expect_tables,
        setup::Run,
    },
    lifecycle::app::{Engine, phase, reason},
};

const BOUND: Duration = Duration::from_secs(360);
/// Three scheduled cycles at the scenario's 10 s interval, and their Jobs.
const THROUGH: Duration = Duration::from_secs(45);

fn blocked(s: &ptah_api::PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::Blocked)
        && reason(s, ConditionType::ApprovalRequired) == "DestructiveChangesDisabled"
        && s.status
            .as_ref()
            .and_then(|st| st.plan.as_ref())
            .is_some_and(|p| p.destructive)
}

async fn has_index(url: &str) -> bool {
    let mut conn = mysql_async::Conn::from_url(url)
        .await
        .expect("connect to MariaDB");
    let n: Option<i64> = conn
        .query_first(
            "SELECT COUNT(*) FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND table_name = 'items' AND index_name = 'items_by_name'",
        )
        .await
        .expect("read the indexes");
    n.unwrap_or(0) > 0
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_drop_index_is_destructive_and_stays_blocked_mysql() {
    let name = "e2e_dataplane_drop_index_is_destructive_and_stays_blocked_mysql";
    let engine = Engine::Mariadb;
    let run = Run::start(
        name,
        engine,
        json!({"suspend": true, "policy": {"apply": "Always"}}),
    )
    .await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    // The artifact's tables, plus an index it does not declare.
    for ddl in [
        "CREATE TABLE items (id bigint NOT NULL, name varchar(40) NULL, PRIMARY KEY (id))",
        "CREATE TABLE audit (id bigint NOT NULL, PRIMARY KEY (id))",
        "CREATE INDEX items_by_name ON items (name)",
    ] {
        engine.exec(&run.app.host_url, ddl).await;
    }
    patch_spec(&run, json!({"suspend": false})).await;

    let first = run.wait("Blocked as destructive", blocked).await;
    let observed_from = first
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
    let observed_to = last
        .status
        .as_ref()
        .and_then(|st| st.target.as_ref())
        .and_then(|t| t.last_observed_at.clone())
        .map(|t| t.0);
    assert!(
        observed_to > observed_from,
        "the cycles ran (observed at {observed_from:?}, then {observed_to:?}); phases {phases:?}"
    );
    let last = run.wait("still Blocked", blocked).await;
    eprintln!("phases through {THROUGH:?}: {phases:?}; last: {}", said(&last));

    let database = match (
        expect_tables(engine, &run.app.host_url, &["audit", "items"]).await,
        has_index(&run.app.host_url).await,
    ) {
        (Ok(()), true) => Ok(()),
        (tables, index) => Err(format!("tables: {tables:?}; index items_by_name exists: {index}")),
    };
    run.conclude(&[], database, BOUND).await;
}
