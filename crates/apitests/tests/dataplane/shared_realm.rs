//! Scenario 8: two PtahSchemas reach one database through two addresses, `orders` directly and
//! `orders-proxied` through the Toxiproxy proxy, under one coordination key. Approved together,
//! they take turns on the realm: the second Apply is dispatched exactly once, after the first
//! finished; its plan is stale by then (the first created the tables), so nothing of it runs, and
//! a read-only proof settles it; neither plan is replayed.

use std::time::Duration;

use k8s_openapi::api::{batch::v1::Job, core::v1::Secret};
use kube::{Api, ResourceExt, api::ListParams};
use ptah_api::{PtahSchema, schema::SchemaPhase};
use ptah_apitests::e2e::create;
use ptah_dataplane::Operation;
use ptah_workload::labels::OPERATION_LABEL;
use serde_json::json;

use crate::{
    dataplane::{
        database::expect_tables,
        setup::{Run, STEP, pod_address, with_address},
    },
    lifecycle::{
        app::{Engine, approve, phase},
        wait_for,
    },
};

const BOUND: Duration = Duration::from_secs(600);
const PROXIED: &str = "orders-proxied";

fn awaiting(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::AwaitingApproval) && s.status.as_ref().is_some_and(|st| st.plan.is_some())
}

fn in_sync(s: &PtahSchema) -> bool {
    phase(s) == Some(SchemaPhase::InSync)
}

async fn shared_realm(name: &'static str, engine: Engine) {
    let variable = match engine {
        Engine::Postgres => "PTAH_POD_PG_PROXY_URL",
        Engine::Mariadb => "PTAH_POD_MARIADB_PROXY_URL",
    };
    // Both declare the shared realm: without it the manager refuses two claims on one database
    // (RealmConflict) instead of letting them take turns.
    // A short deadline: the stale second Apply's proof waits until its Pod can no longer run.
    let run = Run::start(
        name,
        engine,
        json!({"target": {"sharedRealm": true}, "execution": {"activeDeadlineSeconds": 60}}),
    )
    .await;
    // The second schema: the same database and coordination key, through the proxy.
    let secrets: Api<Secret> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let direct = secrets.get("db").await.expect("the database Secret");
    let url = direct
        .data
        .as_ref()
        .and_then(|d| d.get("url"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned())
        .expect("the database URL");
    create(
        &secrets,
        json!({"metadata": {"name": "db-proxied"}, "stringData": {"url": with_address(&url, &pod_address(variable))}}),
    )
    .await;
    let mut spec = run.app.schemas.get("orders").await.expect("orders").spec;
    spec.target.url_from.name = "db-proxied".into();
    let mut proxied = PtahSchema::new(PROXIED, spec);
    proxied.metadata.namespace = Some(run.app.ns.clone());
    run.app
        .schemas
        .create(&Default::default(), &proxied)
        .await
        .expect("create the proxied schema");

    let a = run.wait("orders awaiting approval", awaiting).await;
    let b = wait_for(
        &run.app.schemas,
        PROXIED,
        "a plan awaiting approval",
        STEP,
        &run.manager,
        awaiting,
    )
    .await;
    approve(&run.app.client, &run.app.ns, &a).await;
    approve(&run.app.client, &run.app.ns, &b).await;
    run.wait("orders InSync", in_sync).await;
    wait_for(
        &run.app.schemas,
        PROXIED,
        "InSync after its proof",
        STEP,
        &run.manager,
        in_sync,
    )
    .await;

    // They took turns: the later Apply Job was created after the earlier one completed.
    let jobs: Api<Job> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let mut applies: Vec<Job> = jobs
        .list(&ListParams::default().labels(&format!("{OPERATION_LABEL}={}", Operation::Apply.as_str())))
        .await
        .expect("list the Apply Jobs")
        .items;
    applies.sort_by_key(|j| j.creation_timestamp().map(|t| t.0));
    assert_eq!(applies.len(), 2, "one Apply per schema");
    let first_done = applies[0]
        .status
        .as_ref()
        .and_then(|s| {
            s.completion_time.clone().or(s
                .conditions
                .as_ref()
                .and_then(|c| c.last().and_then(|c| c.last_transition_time.clone())))
        })
        .map(|t| t.0)
        .expect("the first Apply finished");
    let second_created = applies[1].creation_timestamp().map(|t| t.0).expect("created");
    assert!(
        second_created >= first_done,
        "the second Apply was dispatched at {second_created} before the first ended at {first_done}"
    );
    let database = expect_tables(engine, &run.app.host_url, &["audit", "items"]).await;
    run.conclude(&[1, 1], database, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_two_schemas_one_realm_direct_and_through_toxiproxy_take_turns_postgresql() {
    shared_realm(
        "e2e_fault_two_schemas_one_realm_direct_and_through_toxiproxy_take_turns_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_fault_two_schemas_one_realm_direct_and_through_toxiproxy_take_turns_mysql() {
    shared_realm(
        "e2e_fault_two_schemas_one_realm_direct_and_through_toxiproxy_take_turns_mysql",
        Engine::Mariadb,
    )
    .await;
}
