//! Scenario 19 [four-eyes-distinct-approver]: the chart value `approvals.requireDistinctApprover`
//! on a live release. Alice, bound to both the chart's author and approver roles (so RBAC lets
//! her do both and only four-eyes can refuse), writes `orders`' spec: the release's spec-writer
//! webhook records her. Her approval of the plan is refused by the approval webhook, naming her
//! as a writer on record; Bob's (approver role only) is admitted, and its one Apply converges.
//! The users are impersonated through the admin kubeconfig, as the API server authenticates them.

use std::time::Duration;

use kube::{Api, Client, ResourceExt, api::PostParams};
use ptah_api::{PtahSchema, PtahSchemaApproval, schema::SchemaPhase};
use ptah_apitests::{
    admissionpolicy::{Verdict, impersonating},
    e2e::create,
    release::RELEASE,
};
use serde_json::json;

use crate::{
    dataplane::{by_hand::said, database::expect_tables, released::Released},
    lifecycle::app::{Engine, phase},
};

const BOUND: Duration = Duration::from_secs(480);

/// Binds the chart's ClusterRole `<release>-ptah-operator-<role>` to `user` in `ns`.
async fn bind(client: &Client, ns: &str, user: &str, role: &str) {
    let bindings: Api<k8s_openapi::api::rbac::v1::RoleBinding> = Api::namespaced(client.clone(), ns);
    create(
        &bindings,
        json!({
            "metadata": {"name": format!("{user}-{role}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": format!("{RELEASE}-ptah-operator-{role}")},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]
        }),
    )
    .await;
}

/// `as_user`'s approval of `s`'s current plan, as admission judged it.
async fn approve_as(as_user: &Client, ns: &str, s: &PtahSchema, name: &str) -> Verdict {
    let plan = s.status.as_ref().and_then(|st| st.plan.clone()).expect("a plan");
    let approval: PtahSchemaApproval = serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchemaApproval",
        "metadata": {"name": name},
        "spec": {
            "schemaRef": {"name": s.name_any(), "uid": s.uid().expect("uid")},
            "planRef": {"name": plan.name, "uid": plan.uid},
            "planFingerprint": plan.fingerprint,
        }
    }))
    .expect("an approval");
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(as_user.clone(), ns);
    Verdict::of(approvals.create(&PostParams::default(), &approval).await)
}

async fn four_eyes(name: &'static str, engine: Engine) {
    let r = Released::install(
        name,
        engine,
        &["approvals.requireDistinctApprover=true".to_owned()],
        json!({}),
    )
    .await;
    let (client, ns) = (r.app.client.clone(), r.app.ns.clone());
    bind(&client, &ns, "alice", "author").await;
    bind(&client, &ns, "alice", "approver").await;
    bind(&client, &ns, "bob", "approver").await;
    let alice = impersonating("alice", &["system:authenticated"]).await;
    let bob = impersonating("bob", &["system:authenticated"]).await;

    // Alice writes the spec (the interval: it retires no plan, so only the record changes).
    let as_alice: Api<PtahSchema> = Api::namespaced(alice.clone(), &ns);
    let written = as_alice
        .patch(
            "orders",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"interval": "12s"}})),
        )
        .await
        .expect("alice writes the spec");
    let generation = written.metadata.generation;
    assert!(
        serde_json::to_string(&written.metadata.annotations)
            .unwrap_or_default()
            .contains("alice"),
        "the spec-writer webhook recorded alice: {:?}",
        written.metadata.annotations
    );
    let waiting = r
        .wait("a plan awaiting approval for alice's spec", |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval)
                && s.status.as_ref().is_some_and(|st| {
                    st.pending_observation.is_none()
                        && st.plan.is_some()
                        && st.observed_generation == generation
                })
        })
        .await;

    let refused = approve_as(&alice, &ns, &waiting, "by-alice").await;
    assert!(
        refused.refused_for("four-eyes") && refused.refused_for("alice"),
        "the last spec writer cannot approve: {refused:?}"
    );
    let admitted = approve_as(&bob, &ns, &waiting, "by-bob").await;
    assert_eq!(admitted, Verdict::Admitted, "another person can approve");

    let synced = r
        .wait("InSync after bob's approval", |s| {
            phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
        })
        .await;
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &ns);
    assert!(
        approvals.get_opt("by-alice").await.expect("read").is_none(),
        "alice's approval was never stored\nstatus: {}",
        said(&synced)
    );
    let database = expect_tables(engine, &r.app.host_url, &["audit", "items"]).await;
    let leak = r
        .scenario
        .leak_scan(&r.app.services, &r.manager_log().await)
        .await;
    let (scenario, cleanup) = r.end();
    scenario.finish(&[1], database, leak, BOUND).await;
    cleanup.delete().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_four_eyes_refuses_the_last_spec_writer_and_admits_another_approver_postgresql() {
    four_eyes(
        "e2e_dataplane_four_eyes_refuses_the_last_spec_writer_and_admits_another_approver_postgresql",
        Engine::Postgres,
    )
    .await;
}
