//! T4 (`e2e_schema_lifecycle_…`, phase `schema-lifecycle` of `cargo xtask e2e --suite
//! schema-lifecycle`): the PtahSchema lifecycle end to end on the full local cluster with the
//! manager binary, the locally built data-plane image, the TLS registry and a real database.
//!
//! Publish a schema; a plan appears; an approval converges the database (`InSync`, proved by a
//! fresh empty plan); an out-of-band change becomes drift and a new plan; the manager is killed
//! while that plan's Apply runs and restarted: the Apply ran once and the schema converges; a
//! destructive change is blocked; nothing the run said contains the database password.

mod common;
mod lifecycle;

use lifecycle::app::{App, Engine, approve, phase, push, reason};

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api, ResourceExt,
    api::{ListParams, Patch, PatchParams},
};
use lifecycle::{Manager, everything_said, wait_for};
use ptah_api::{
    PtahSchema,
    conditions::ConditionType,
    schema::{SchemaOperationType, SchemaPhase},
};
use serde_json::json;

const STEP: Duration = Duration::from_secs(240);

async fn lifecycle(engine: Engine) {
    let app = App::setup(engine, "e2e-schema").await;
    let (client, ns, schemas, host_url, password) = (
        app.client.clone(),
        app.ns.clone(),
        app.schemas.clone(),
        app.host_url.clone(),
        app.password.clone(),
    );
    let (services, registry, repository, image) = (
        &app.services,
        app.registry.clone(),
        app.repository.clone(),
        app.image.clone(),
    );
    // The manager runs as the chart's ServiceAccount with exactly the chart's RBAC.
    let (kubeconfig, cluster_scoped) = lifecycle::chart_kubeconfig(&client, &ns, &ns, &image).await;
    let mut manager = Manager::start(&ns, &image, kubeconfig);
    let waiting = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::AwaitingApproval)
            && s.status.as_ref().is_some_and(|st| st.plan.is_some())
    };
    let s = wait_for(
        &schemas,
        "orders",
        "a first plan awaiting approval",
        STEP,
        &manager,
        waiting,
    )
    .await;
    assert!(
        !engine.has_table(&host_url, "items").await,
        "nothing is applied before the approval"
    );
    approve(&client, &ns, &s).await;
    let in_sync = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
    };
    wait_for(
        &schemas,
        "orders",
        "InSync after the approved Apply",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    assert!(engine.has_table(&host_url, "items").await && engine.has_table(&host_url, "audit").await);

    // Out of band: drop a table; the next cycle sees drift and plans it back.
    engine.exec(&host_url, "DROP TABLE audit").await;
    let s = wait_for(&schemas, "orders", "a drift plan", STEP, &manager, waiting).await;
    assert_eq!(reason(&s, ConditionType::DriftDetected), "Observed");
    let digest = approve(&client, &ns, &s).await;
    // Kill the manager while that Apply runs (its Job exists and is recorded), then restart it.
    wait_for(
        &schemas,
        "orders",
        "the Apply Job recorded",
        STEP,
        &manager,
        |s| {
            s.status
                .as_ref()
                .and_then(|st| st.active_operation.as_ref())
                .is_some_and(|c| c.operation_type == SchemaOperationType::Apply && c.job_uid.is_some())
        },
    )
    .await;
    manager.kill();
    tokio::time::sleep(Duration::from_secs(3)).await;
    manager.restart();
    wait_for(
        &schemas,
        "orders",
        "InSync after the restart",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    assert!(
        engine.has_table(&host_url, "audit").await,
        "the drift was repaired"
    );
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let applies: Vec<Job> = jobs
        .list(&ListParams::default().labels("operator.ptah.run/operation=apply"))
        .await
        .expect("jobs")
        .items;
    let this = applies
        .iter()
        .filter(|j| j.annotations().get("operator.ptah.run/plan-content-digest") == Some(&digest))
        .count();
    assert_eq!(this, 1, "the Apply interrupted by the restart ran exactly once");
    assert_eq!(applies.len(), 2, "two plans, two Applies");
    refused_as_the_manager(&ns, &applies[0]).await;

    // A destructive change (dropping `audit`) is blocked without allowDestructive.
    push(services, &repository, "v2", &engine.schema(false));
    schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"desired": {"ociRef": format!("oci://{registry}/{repository}:v2")}}}),
            ),
        )
        .await
        .expect("point at v2");
    let blocked = wait_for(
        &schemas,
        "orders",
        "Blocked on the destructive plan",
        STEP,
        &manager,
        |s| {
            phase(s) == Some(SchemaPhase::Blocked)
                && reason(s, ConditionType::Ready) == "DestructiveChangesDisabled"
        },
    )
    .await;
    assert!(
        engine.has_table(&host_url, "audit").await,
        "a blocked destructive plan changes nothing"
    );

    let said = everything_said(&client, &ns, &blocked).await + &manager.log();
    assert!(said.len() > 1000, "the scan read the run's output");
    assert!(
        !said.contains(&password),
        "the database password appeared in a log, Event or status"
    );
    drop(manager);
    lifecycle::delete_cluster_scoped(&client, &cluster_scoped).await;
}

/// With the manager's own token, the API server refuses a copy of one of its Jobs that mounts
/// another Secret or runs another image: the chart's admission policies hold whatever the
/// manager's code does.
async fn refused_as_the_manager(ns: &str, job: &Job) {
    use k8s_openapi::api::core::v1::{SecretVolumeSource, Volume};
    use kube::api::PostParams;
    let manager =
        ptah_apitests::client::client_from(&ptah_apitests::e2e_log_file(&format!("{ns}-manager.kubeconfig")))
            .await;
    let jobs: Api<Job> = Api::namespaced(manager, ns);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let mut copy = job.clone();
    copy.metadata = kube::api::ObjectMeta {
        name: Some(format!("{}-copy", job.name_any())),
        labels: job.metadata.labels.clone(),
        // The owner's spec decides which Secrets a Job may name (the job-secrets policies).
        owner_references: job.metadata.owner_references.clone(),
        ..Default::default()
    };
    if let Some(spec) = copy.spec.as_mut() {
        spec.selector = None;
        if let Some(labels) = spec.template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
            labels.retain(|k, _| !k.contains("controller-uid") && !k.contains("job-name"));
        }
    }
    let admitted = jobs.create(&dry_run, &copy).await;
    assert!(admitted.is_ok(), "the manager's own Job, copied: {admitted:?}");
    let pod = |j: &mut Job| {
        j.spec
            .as_mut()
            .and_then(|s| s.template.spec.as_mut())
            .expect("pod spec")
            .clone()
    };
    let mut stolen = copy.clone();
    let mut spec = pod(&mut stolen);
    spec.volumes.get_or_insert_with(Vec::new).push(Volume {
        name: "stolen".into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some("db".into()),
            ..SecretVolumeSource::default()
        }),
        ..Volume::default()
    });
    stolen.spec.as_mut().expect("spec").template.spec = Some(spec);
    let mut other_image = copy.clone();
    let mut spec = pod(&mut other_image);
    spec.containers[0].image = Some("registry.example/tool:latest".into());
    other_image.spec.as_mut().expect("spec").template.spec = Some(spec);
    // Three rules refuse another Secret's volume (the volume kinds, the one registry Secret, the
    // owner's spec); the API server reports one of them.
    let secret_rules = [
        "volumes are emptyDirs",
        "come from one Secret",
        "Docker config a Job mounts",
    ];
    for (what, job, rules) in [
        ("a Secret volume", &stolen, &secret_rules[..]),
        ("another image", &other_image, &["pins by digest"][..]),
    ] {
        match jobs.create(&dry_run, job).await {
            Err(kube::Error::Api(s)) if s.code == 403 && rules.iter().any(|r| s.message.contains(r)) => {}
            other => panic!("{what}: the API server must refuse it by the policy ({rules:?}): {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_schema_lifecycle_postgresql() {
    lifecycle(Engine::Postgres).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_schema_lifecycle_mariadb() {
    lifecycle(Engine::Mariadb).await;
}
