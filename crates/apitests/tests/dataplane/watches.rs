//! Scenario 18 [watches]: every status transition of a PtahSchema is recorded losslessly, from
//! the exact resourceVersion of its create response. A raw watch (no informer, no relist) starts
//! there and, when the server ends it (its timeout), resumes from the last resourceVersion it
//! delivered; a 410 Gone (the history compacted past that point) fails the scenario instead of
//! relisting over a gap. The test then asserts the whole phase sequence from the create to
//! InSync, not just the end: one Apply, approved once, verified, in sync.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::{
    Api, ResourceExt,
    api::{PostParams, WatchEvent, WatchParams},
};
use ptah_api::{PtahSchema, schema::SchemaPhase};
use ptah_apitests::e2e::create;
use serde_json::json;

use crate::{
    dataplane::{database::expect_tables, setup::Run},
    lifecycle::app::{Engine, approve, phase},
};

const BOUND: Duration = Duration::from_secs(420);
/// The watched PtahSchema (`orders`, created before the manager starts, has no create response
/// to watch from).
const WATCHED: &str = "watched";

/// Every status the watch delivered, in order: (resourceVersion, phase, the status in short).
type Seen = Arc<Mutex<Vec<(String, Option<SchemaPhase>, String)>>>;

/// Watches `name` from `version` until dropped, recording every event; resumes a watch the
/// server ended from the last resourceVersion delivered. Panics on a 410 Gone.
fn record(api: Api<PtahSchema>, name: &str, version: String, seen: Seen) -> tokio::task::JoinHandle<()> {
    let params = WatchParams::default()
        .fields(&format!("metadata.name={name}"))
        .timeout(60);
    tokio::spawn(async move {
        let mut from = version;
        loop {
            let stream = match api.watch(&params, &from).await {
                Ok(s) => s,
                Err(kube::Error::Api(status)) if status.code == 410 => {
                    panic!("the watch from {from} is gone (410): a gap, not relisted over")
                }
                Err(e) => {
                    // A transport error before any event: the same resourceVersion again.
                    eprintln!("watch from {from}: {e}; again");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            let mut stream = Box::pin(stream);
            while let Some(event) = stream.next().await {
                match event {
                    Ok(WatchEvent::Added(s) | WatchEvent::Modified(s) | WatchEvent::Deleted(s)) => {
                        from = s.resource_version().expect("a resourceVersion");
                        seen.lock().expect("seen").push((
                            from.clone(),
                            phase(&s),
                            crate::lifecycle::summary(&s),
                        ));
                    }
                    Ok(WatchEvent::Bookmark(b)) => from = b.metadata.resource_version,
                    Ok(WatchEvent::Error(status)) if status.code == 410 => {
                        panic!("the watch from {from} is gone (410): a gap, not relisted over")
                    }
                    Ok(WatchEvent::Error(status)) => panic!("the watch failed: {status:?}"),
                    // A broken stream resumes from the last event it delivered.
                    Err(e) => {
                        eprintln!("watch stream from {from}: {e}; resuming");
                        break;
                    }
                }
            }
        }
    })
}

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
    let seen: Seen = Arc::default();
    let watch = record(run.app.schemas.clone(), WATCHED, version, seen.clone());

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
    let last = synced.resource_version().expect("a resourceVersion");
    // The watch has delivered everything up to the InSync the GET saw.
    let until = tokio::time::Instant::now() + Duration::from_secs(30);
    while !seen.lock().expect("seen").iter().any(|(v, _, _)| *v == last) {
        assert!(
            tokio::time::Instant::now() < until,
            "the watch never delivered {last}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    watch.abort();
    let events = seen.lock().expect("seen").clone();
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
