//! T4 (`e2e_refusals_…`, phase `refusals` of `cargo xtask e2e --suite refusals`): operations
//! refused before their main container started reach status, typed, within one interval, and
//! never make the resource run Jobs in a loop (issue 33, D2 and D5).
//!
//! - A hostile artifact: a `schema.hcl` over the fetch container's 16 MiB file limit (an artifact
//!   the Resolve and the policy accept; only the pull refuses it). The Plan's `fetch-schema`
//!   refuses it with `limit_exceeded`; the status says `ArtifactRefused` with that code, one
//!   Event says so, and no second Plan Job is made for that digest while the resource keeps
//!   cycling. Pointing at a good artifact again plans it.
//! - A URL Secret that does not exist: the Plan Pod sits in `CreateContainerConfigError`; the
//!   status says `SecretNotFound` naming the Secret within seconds, not at the Job's deadline, and
//!   the Job is deleted so its Pod cannot start later. Naming the right Secret plans it.

mod common;
mod lifecycle;

use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, Client,
    api::{ListParams, Patch, PatchParams},
};
use lifecycle::{
    Manager,
    app::{App, Engine, phase, push, reason},
    everything_said, wait_for,
};
use ptah_api::{PtahSchema, conditions::ConditionType, schema::SchemaPhase};
use serde_json::json;

/// How long a step may take on this machine (a Job's Pod start included).
const STEP: Duration = Duration::from_secs(240);
/// How long the resource is watched after its refusal for a second fetching Job.
const WATCH: Duration = Duration::from_secs(90);

fn message(s: &PtahSchema, t: ConditionType) -> String {
    s.status
        .as_ref()
        .and_then(|st| st.conditions.iter().find(|c| c.type_ == t.as_str()))
        .map(|c| c.message.clone())
        .unwrap_or_default()
}

async fn jobs(client: &Client, ns: &str, operation: &str) -> Vec<Job> {
    let api: Api<Job> = Api::namespaced(client.clone(), ns);
    api.list(&ListParams::default().labels(&format!("operator.ptah.run/operation={operation}")))
        .await
        .expect("list Jobs")
        .items
}

/// How often an Event with `reason` was recorded in `ns`, repetitions an Event series folded in
/// included.
async fn events(client: &Client, ns: &str, reason: &str) -> i32 {
    let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), ns);
    api.list(&ListParams::default())
        .await
        .expect("list Events")
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .map(|e| e.series.as_ref().map_or(1, |s| s.count))
        .sum()
}

/// The schema `orders` of `app` re-pointed (and with a long interval, so every Job the test
/// counts is one the refusal could have caused) before the manager starts.
async fn respec(app: &App, patch: serde_json::Value) {
    app.schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(&json!({ "spec": patch })),
        )
        .await
        .expect("patch the schema");
}

async fn start_manager(app: &App) -> (Manager, Vec<(String, String)>) {
    let (kubeconfig, cluster_scoped) =
        lifecycle::chart_kubeconfig(&app.client, &app.ns, &app.ns, &app.image).await;
    (Manager::start(&app.ns, &app.image, kubeconfig), cluster_scoped)
}

/// A schema file over the fetch container's 16 MiB file limit: valid UTF-8 (the push checks
/// that much), of comments only.
fn oversized_schema() -> String {
    let line = format!("# {}\n", "x".repeat(1022));
    line.repeat(17 * 1024)
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_refusals_hostile_artifact_postgresql() {
    let app = App::setup(Engine::Postgres, "e2e-refusals").await;
    let digest = push(&app.services, &app.repository, "hostile", &oversized_schema());
    respec(
        &app,
        json!({"desired": {"ociRef": format!("oci://{}/{}:hostile", app.registry, app.repository)},
               "interval": "20s"}),
    )
    .await;
    let (manager, cluster_scoped) = start_manager(&app).await;
    let refused = wait_for(
        &app.schemas,
        "orders",
        "the fetch refusal in status",
        STEP,
        &manager,
        |s| reason(s, ConditionType::Ready) == "ArtifactRefused",
    )
    .await;
    assert_eq!(phase(&refused), Some(SchemaPhase::Blocked));
    let ready = message(&refused, ConditionType::Ready);
    assert!(ready.contains("limit_exceeded"), "the typed code: {ready}");
    assert!(ready.contains("fetch-schema"), "the refusing container: {ready}");
    let record = refused
        .status
        .as_ref()
        .and_then(|st| st.refusal.clone())
        .expect("status.refusal");
    assert_eq!(record.digest.as_ref().map(|d| d.as_str()), Some(digest.as_str()));
    assert!(record.terminal);
    let plans = jobs(&app.client, &app.ns, "plan").await;
    assert_eq!(plans.len(), 1, "one Plan Job fetched the digest");
    // In status within one interval of its Job: the Pod's status, no log, no deadline.
    let created = plans[0].metadata.creation_timestamp.as_ref().expect("created").0;
    let took = record.refused_at.0.as_second() - created.as_second();
    assert!(took < 60, "refused {took} s after its Job was created");

    // Several intervals later: the reference was resolved again, the digest never fetched again.
    let until = Instant::now() + WATCH;
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let s = app.schemas.get("orders").await.expect("get");
        assert_ne!(
            s.status
                .as_ref()
                .and_then(|st| st.active_operation.as_ref())
                .map(|c| c.operation_type),
            Some(ptah_api::schema::SchemaOperationType::Plan),
            "a Plan was claimed again for the refused digest"
        );
    }
    assert_eq!(
        jobs(&app.client, &app.ns, "plan").await.len(),
        1,
        "at most one Job per digest"
    );
    assert!(
        jobs(&app.client, &app.ns, "resolve").await.len() >= 2,
        "the resource kept cycling (Resolve) meanwhile"
    );
    assert_eq!(
        events(&app.client, &app.ns, "ArtifactRefused").await,
        1,
        "one Event"
    );
    let s = app.schemas.get("orders").await.expect("get");
    assert_eq!(reason(&s, ConditionType::Ready), "ArtifactRefused");

    // A new digest is fetched again.
    respec(
        &app,
        json!({"desired": {"ociRef": format!("oci://{}/{}:v1", app.registry, app.repository)}}),
    )
    .await;
    wait_for(
        &app.schemas,
        "orders",
        "a plan of the good artifact",
        STEP,
        &manager,
        |s| phase(s) == Some(SchemaPhase::AwaitingApproval),
    )
    .await;
    assert_eq!(jobs(&app.client, &app.ns, "plan").await.len(), 2);
    drop(manager);
    lifecycle::delete_cluster_scoped(&app.client, &cluster_scoped).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_refusals_missing_url_secret_postgresql() {
    let app = App::setup(Engine::Postgres, "e2e-refusals-secret").await;
    respec(
        &app,
        json!({"target": {"urlFrom": {"name": "does-not-exist", "key": "url"}}, "interval": "10m"}),
    )
    .await;
    let (manager, cluster_scoped) = start_manager(&app).await;
    let started = Instant::now();
    let refused = wait_for(
        &app.schemas,
        "orders",
        "SecretNotFound in status",
        STEP,
        &manager,
        |s| reason(s, ConditionType::Ready) == "SecretNotFound",
    )
    .await;
    let ready = message(&refused, ConditionType::Ready);
    assert!(ready.contains("\"does-not-exist\""), "the Secret's name: {ready}");
    assert!(
        refused
            .status
            .as_ref()
            .is_some_and(|st| st.active_operation.is_none()),
        "the read-only claim is settled while its Pod waits"
    );
    // Long before the Job's deadline (300 s here): the Resolve and one Pod start at most.
    assert!(
        started.elapsed() < Duration::from_secs(180),
        "took {:?}",
        started.elapsed()
    );
    // The waiting Job is gone, so its Pod cannot start once the Secret appears.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left: Vec<Job> = jobs(&app.client, &app.ns, "plan")
            .await
            .into_iter()
            .filter(|j| j.metadata.deletion_timestamp.is_none())
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the stuck Plan Job was not deleted");
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    assert_eq!(
        events(&app.client, &app.ns, "SecretNotFound").await,
        1,
        "one Event"
    );
    let said = everything_said(&app.client, &app.ns, &refused).await;
    assert!(!said.contains(&app.password), "the database password appeared");

    // Naming the Secret that exists plans.
    respec(&app, json!({"target": {"urlFrom": {"name": "db", "key": "url"}}})).await;
    wait_for(
        &app.schemas,
        "orders",
        "a plan once the Secret is named",
        STEP,
        &manager,
        |s| phase(s) == Some(SchemaPhase::AwaitingApproval),
    )
    .await;
    drop(manager);
    lifecycle::delete_cluster_scoped(&app.client, &cluster_scoped).await;
}
