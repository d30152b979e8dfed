//! Scenario 2: the database connection is reset mid-Apply, through Toxiproxy, during a slow
//! statement. The Pods reach the database only through the fault proxy; the test holds `items`
//! locked so the Apply's `ALTER TABLE items` waits on the server (seen there), then disables the
//! proxy, which closes every connection through it. The plan is never replayed: a read-only
//! Observe and Plan decides what happened, under the realm Lease the Apply held, and the schema's
//! verdict agrees with the database's own catalog.
//!
//! On PostgreSQL the test watches `pg_locks` for the DDL's wait: `pg_stat_activity`, read from
//! the lock's own transaction, is a per-transaction snapshot that never showed it, so the DDL
//! once ran into its `lockTimeout` unseen (`database::TableLock::ddl_waiting`).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use ptah_api::schema::SchemaPhase;
use ptah_faultproxy::Toxiproxy;
use ptah_testservices::proxies;
use serde_json::json;

use crate::{
    dataplane::{
        database::{TableLock, columns, expect_tables},
        setup::{Run, STEP, Via, plan_uid, pod_address},
    },
    lifecycle::app::{Engine, approve, phase, push},
};

const BOUND: Duration = Duration::from_secs(720);

/// `orders`' v1 with a column `note` added to `items`: one `ALTER TABLE items`.
fn with_note(engine: Engine) -> String {
    let column = "  column \"name\" {\n    type = varchar(40)\n  }\n";
    engine.schema(true).replacen(
        column,
        &format!("{column}  column \"note\" {{\n    type = varchar(40)\n  }}\n"),
        1,
    )
}

/// The holders of the namespace's realm Leases right now.
async fn realm_holders(run: &Run) -> Vec<String> {
    let leases: Api<Lease> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    leases
        .list(&ListParams::default().labels("operator.ptah.run/coordination=database-target"))
        .await
        .expect("list the realm Leases")
        .items
        .into_iter()
        .filter_map(|l| l.spec.and_then(|s| s.holder_identity))
        .filter(|h| !h.is_empty())
        .collect()
}

async fn connection_reset(name: &'static str, engine: Engine) {
    let (variable, proxy) = match engine {
        Engine::Postgres => ("PTAH_POD_PG_PROXY_URL", proxies::POSTGRES),
        Engine::Mariadb => ("PTAH_POD_MARIADB_PROXY_URL", proxies::MARIADB),
    };
    let run = Run::start_via(
        name,
        engine,
        json!({"policy": {"lockTimeout": "40s"}, "execution": {"activeDeadlineSeconds": 60}}),
        Via {
            database: Some(pod_address(variable)),
            ..Via::default()
        },
    )
    .await;
    let toxiproxy = Toxiproxy::require();
    // v1 through the proxy: one ordinary Apply.
    let first = run.awaiting(None).await;
    approve(&run.app.client, &run.app.ns, &first).await;
    run.wait("InSync on v1", |s| phase(s) == Some(SchemaPhase::InSync))
        .await;
    push(&run.app.services, &run.app.repository, "v2", &with_note(engine));
    run.app
        .schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"desired": {"ociRef": format!("oci://{}/{}:v2", run.app.registry, run.app.repository)}}})),
        )
        .await
        .expect("point at v2");
    let second = run.awaiting(Some(&plan_uid(&first))).await;

    let mut lock = TableLock::take(engine, &run.app.host_url, "items").await;
    approve(&run.app.client, &run.app.ns, &second).await;
    let deadline = Instant::now() + STEP;
    while lock.ddl_waiting().await == 0 {
        assert!(
            Instant::now() < deadline,
            "the Apply's ALTER TABLE never waited on the lock: {}",
            run.apply_pod_logs().await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let holders_during_apply = realm_holders(&run).await;
    assert!(
        !holders_during_apply.is_empty(),
        "the Apply holds the realm Lease"
    );
    // Mid-statement: every connection through the proxy is closed.
    let cut = toxiproxy.cut(proxy).await.expect("disable the proxy");
    tokio::time::sleep(Duration::from_secs(2)).await;
    lock.release().await;
    cut.restore().await.expect("enable the proxy again");

    // The proof: a pending observation, under the same Lease holder until it is settled.
    let deadline = Instant::now() + STEP;
    let mut proof_seen = false;
    let settled = loop {
        let s = run.app.schemas.get("orders").await.expect("orders");
        let st = s.status.clone().unwrap_or_default();
        if st.pending_observation.is_some() {
            proof_seen = true;
            let holders = realm_holders(&run).await;
            assert_eq!(
                holders, holders_during_apply,
                "the Lease is held through the proof"
            );
        } else if proof_seen
            && matches!(
                phase(&s),
                Some(SchemaPhase::InSync | SchemaPhase::AwaitingApproval)
            )
        {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "no proof settled the reset Apply: {}",
            crate::lifecycle::summary(&s)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let has_note = columns(engine, &run.app.host_url, "items")
        .await
        .contains(&"note".to_owned());
    let in_sync = phase(&settled) == Some(SchemaPhase::InSync);
    let mut database = expect_tables(engine, &run.app.host_url, &["audit", "items"]).await;
    if database.is_ok() && has_note != in_sync {
        database = Err(format!(
            "the proof says {:?} but the column is {}",
            phase(&settled),
            if has_note { "there" } else { "missing" }
        ));
    }
    eprintln!(
        "{name}: the reset ALTER was {}; the proof agreed",
        if has_note { "committed" } else { "rolled back" }
    );
    run.conclude(&[1, 1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_connection_reset_through_toxiproxy_mid_statement_is_proved_never_replayed_mysql() {
    connection_reset(
        "e2e_fault_connection_reset_through_toxiproxy_mid_statement_is_proved_never_replayed_mysql",
        Engine::Mariadb,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_connection_reset_through_toxiproxy_mid_statement_is_proved_never_replayed_postgresql() {
    connection_reset(
        "e2e_fault_connection_reset_through_toxiproxy_mid_statement_is_proved_never_replayed_postgresql",
        Engine::Postgres,
    )
    .await;
}
