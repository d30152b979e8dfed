//! Scenario 18 [watches]: every status transition of a PtahSchema is recorded losslessly, from
//! the exact resourceVersion of its create response, by a raw watch (`history::History`). The
//! test then asserts the whole phase sequence from the create to InSync, not just the end: one
//! Apply, approved once, verified, in sync.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::{Api, ResourceExt, api::PostParams};
use ptah_api::{PtahSchema, schema::SchemaPhase};
use ptah_apitests::e2e::create;
use serde_json::json;

use crate::{
    dataplane::{database::expect_tables, history::History, setup::Run},
    lifecycle::app::{Engine, approve, phase},
};

const BOUND: Duration = Duration::from_secs(420);
/// The watched PtahSchema (`orders`, created before the manager starts, has no create response
/// to watch from).
const WATCHED: &str = "watched";

/// `phases` with consecutive repeats collapsed (a status write that kept the phase).
fn transitions(phases: &[Option<SchemaPhase>]) -> Vec<Option<SchemaPhase>> {
    let mut out: Vec<Option<SchemaPhase>> = Vec::new();
    for p in phases {
        if out.last() != Some(p) {
            out.push(*p);
        }
    }
    out
}

async fn watches(name: &'static str, engine: Engine) {
    let run = Run::start(name, engine, json!({})).await;
    // `watched`: the spec of `orders` on a database and realm of its own, created here so the
    // watch starts at its create response's resourceVersion.
    let db = ptah_testservices::unique_name("e2e").replace('-', "_");
    let (host_url, pod_url) = engine.fresh_database(&run.app.services, &db).await;
    let secrets: Api<Secret> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    create(
        &secrets,
        json!({"metadata": {"name": "watched-db"}, "stringData": {"url": format!("{pod_url}?sslmode=verify-full")}}),
    )
    .await;
    let mut spec = run.app.schemas.get("orders").await.expect("orders").spec;
    spec.target.coordination_key = Some(WATCHED.to_owned());
    spec.target.url_from.name = "watched-db".to_owned();
    let mut schema = PtahSchema::new(WATCHED, spec);
    schema.metadata.namespace = Some(run.app.ns.clone());
    let created = run
        .app
        .schemas
        .create(&PostParams::default(), &schema)
        .await
        .expect("create the watched schema");
    assert_eq!(phase(&created), None, "no status at the create");
    let version = created.resource_version().expect("the create's resourceVersion");
    let history = History::watch(run.app.schemas.clone(), WATCHED, version);

    let wait = |what: &'static str, pred: fn(&PtahSchema) -> bool| {
        crate::lifecycle::wait_for(
            &run.app.schemas,
            WATCHED,
            what,
            crate::dataplane::setup::STEP,
            &run.manager,
            pred,
        )
    };
    let waiting = wait("a plan awaiting approval", |s| {
        phase(s) == Some(SchemaPhase::AwaitingApproval)
            && s.status
                .as_ref()
                .is_some_and(|st| st.pending_observation.is_none() && st.plan.is_some())
    })
    .await;
    approve(&run.app.client, &run.app.ns, &waiting).await;
    let synced = wait("InSync", |s| phase(s) == Some(SchemaPhase::InSync)).await;
    // The watch has delivered everything up to the InSync the GET saw.
    history
        .caught_up(&synced.resource_version().expect("a resourceVersion"))
        .await;
    let events: Vec<(String, Option<SchemaPhase>, String)> = history
        .versions()
        .iter()
        .map(|s| {
            (
                s.resource_version().unwrap_or_default(),
                phase(s),
                crate::lifecycle::summary(s),
            )
        })
        .collect();
    drop(history);
    let phases: Vec<Option<SchemaPhase>> = events.iter().map(|(_, p, _)| *p).collect();
    let sequence = transitions(&phases);
    eprintln!("{name}: {} events, phases {sequence:?}", events.len());

    // Each event is a newer write of the one object: resourceVersions never repeat.
    let mut versions: Vec<&String> = events.iter().map(|(v, _, _)| v).collect();
    versions.dedup();
    assert_eq!(
        versions.len(),
        events.len(),
        "an event delivered twice: {events:?}"
    );
    // The whole sequence, as the manager writes it (a run showed it): the first cycle's Resolve
    // and Observe+Plan Jobs (the status has no separate Verifying or Observing write), the plan
    // awaiting approval, the approval making it ready, the one Apply, its proof, then InSync; no
    // failure, no second Apply. Before the first status the manager may write the object without
    // one (its finalizer).
    use SchemaPhase::*;
    let expected: Vec<Option<SchemaPhase>> = [
        Resolving,
        Planning,
        AwaitingApproval,
        ReadyToApply,
        Applying,
        VerifyingConvergence,
        InSync,
    ]
    .into_iter()
    .map(Some)
    .collect();
    let with_status = match sequence.first() {
        Some(None) => &sequence[1..],
        _ => &sequence[..],
    };
    assert_eq!(
        with_status,
        expected.as_slice(),
        "the whole phase sequence, from the create to InSync; every status:\n{}",
        events
            .iter()
            .map(|(v, _, summary)| format!("{v}: {summary}"))
            .collect::<Vec<_>>()
            .join("\n")
    );

    let database = expect_tables(engine, &host_url, &["audit", "items"]).await;
    let (client, ns) = (run.app.client.clone(), run.app.ns.clone());
    run.conclude(&[1], database, BOUND).await;
    crate::dataplane::scenario::delete_namespace(&client, &ns).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_watches_record_every_phase_from_the_create_to_in_sync_postgresql() {
    watches(
        "e2e_dataplane_watches_record_every_phase_from_the_create_to_in_sync_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_watches_record_every_phase_from_the_create_to_in_sync_mysql() {
    watches(
        "e2e_dataplane_watches_record_every_phase_from_the_create_to_in_sync_mysql",
        Engine::Mariadb,
    )
    .await;
}
