//! Scenario 14: a Helm upgrade that changes the executor image makes a waiting approval stale, and
//! no Apply runs on it. The chart is installed by helm; `orders`' plan is approved while no
//! replica leads (the leader Lease is held by a holder that is no manager), so the approval is
//! certain to wait while every replica still serves the approval webhook; the release is
//! upgraded to the same data-plane image by another reference (its digest alone, without the
//! tag: a different pinned reference, the bytes unchanged, so nothing but the reference moves).
//! Resumed, the new manager's execution binding (a new epoch) retires the plan, marks the approval
//! stale, and offers a new plan for a new approval. Zero Apply Jobs.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use ptah_api::{PtahSchema, PtahSchemaPlan, schema::SchemaPhase};
use ptah_apitests::release::ChartSource;
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::said,
        database::expect_tables,
        released::{Released, approval_condition},
        setup::approval_name,
    },
    lifecycle::{
        Diagnose,
        app::{Engine, approve, phase},
        everything_said,
    },
};

/// The chart's leader Lease (`--leader-lease-name` default), in the release namespace.
const LEADER_LEASE: &str = "ptah-operator-leader";

const BOUND: Duration = Duration::from_secs(600);

/// The epoch `s`'s current plan was made under.
fn plan_epoch(s: &PtahSchema) -> Option<String> {
    let plan = s.status.as_ref()?.plan.as_ref()?;
    Some(plan.binding.execution_binding_id.as_str().to_owned())
}

async fn executor_image_upgrade(name: &'static str, engine: Engine) {
    let r = Released::install(name, engine, &[], json!({})).await;
    let waiting = r
        .wait("a plan awaiting approval", |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval)
                && s.status
                    .as_ref()
                    .is_some_and(|st| st.pending_observation.is_none() && st.plan.is_some())
        })
        .await;
    let old_epoch = plan_epoch(&waiting).expect("the plan's epoch");

    // No replica leads while the approval waits: the leader Lease is taken by a holder that is
    // no manager, for an hour, so the leader steps down and the others stand by. Every replica
    // still serves the webhooks, so the approval is admitted against the current plan.
    let leases: Api<Lease> = Api::namespaced(r.app.client.clone(), &r.release_ns);
    leases
        .patch(
            LEADER_LEASE,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"holderIdentity": "e2e-hold", "leaseDurationSeconds": 3600}})),
        )
        .await
        .expect("hold the leader Lease");
    tokio::time::sleep(Duration::from_secs(10)).await;
    // The old replicas' logs, read now: the upgrade replaces their Pods.
    let before = r.manager_log().await;
    assert!(
        before.contains("lost leadership"),
        "the leader stepped down\n{}",
        r.manager.diagnose()
    );
    approve(&r.app.client, &r.app.ns, &waiting).await;
    let approval = approval_name(&waiting);
    // Waiting, and certain to: nothing leads, nothing is dispatched.
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert!(
        r.scenario.apply_jobs().await.is_empty(),
        "no Apply while the approval waits"
    );

    // The same image by another pinned reference: `<repository>@sha256:…` without the tag.
    let (repository, digest) = r.app.image.split_once('@').expect("a pinned image");
    let repository = repository
        .rsplit_once(':')
        .filter(|(_, tag)| !tag.contains('/'))
        .map_or(repository, |(name, _)| name);
    let other = format!("{repository}@{digest}");
    assert_ne!(other, r.app.image, "another reference of the same image");
    r.upgrade(&ChartSource::head(&other), &[]);

    // The upgraded replicas may lead once the Lease is free.
    leases
        .delete(LEADER_LEASE, &Default::default())
        .await
        .expect("free the leader Lease");
    // A new plan under the new binding, waiting for its own approval.
    let next = r
        .wait("a new plan under the new binding", |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval) && plan_epoch(s).is_some_and(|e| e != old_epoch)
        })
        .await;
    let stale = approval_condition(&r.app.client, &r.app.ns, &approval, "Stale").await;
    assert!(
        matches!(&stale, Some((status, reason, _)) if status == "True" && reason == "PlanNoLongerCurrent"),
        "the waiting approval is reported stale: {stale:?}\nstatus: {}",
        said(&next)
    );
    let consumed = approval_condition(&r.app.client, &r.app.ns, &approval, "Consumed").await;
    assert!(
        consumed.as_ref().is_none_or(|(status, _, _)| status != "True"),
        "the stale approval was never consumed: {consumed:?}"
    );
    // Why, in words: the schema's Event names the binding change that retired the plan.
    let story = everything_said(&r.app.client, &r.app.ns, &next).await;
    assert!(
        story.contains("the execution binding changed; the plan and its approvals are retired"),
        "the schema says why its approval went stale"
    );
    // The new plan binds the new executor reference.
    let plans: Api<PtahSchemaPlan> = Api::namespaced(r.app.client.clone(), &r.app.ns);
    let plan_name = next
        .status
        .as_ref()
        .and_then(|st| st.plan.as_ref())
        .map(|p| p.name.clone())
        .expect("a plan");
    let plan = serde_json::to_string(&plans.get(&plan_name).await.expect("the new plan")).unwrap_or_default();
    assert!(
        plan.contains(&other),
        "the new plan binds the upgraded executor image {other}"
    );

    // Two intervals more: nothing is dispatched on the stale approval.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let database = expect_tables(engine, &r.app.host_url, &[]).await;
    let leak = r
        .scenario
        .leak_scan(&r.app.services, &(before + &r.manager_log().await))
        .await;
    let (scenario, cleanup) = r.end();
    scenario.finish(&[], database, leak, BOUND).await;
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_helm_upgrade_of_the_executor_image_makes_a_waiting_approval_stale_postgresql() {
    executor_image_upgrade(
        "e2e_dataplane_helm_upgrade_of_the_executor_image_makes_a_waiting_approval_stale_postgresql",
        Engine::Postgres,
    )
    .await;
}
