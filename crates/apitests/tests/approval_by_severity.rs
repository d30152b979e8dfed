//! T4 (`e2e_schema_lifecycle_by_severity_…`, phase `schema-lifecycle` of `cargo xtask e2e --suite
//! schema-lifecycle`): `policy.apply: BySeverity` on the full local cluster with the manager
//! binary, the data-plane image, the TLS registry and a real PostgreSQL.
//!
//! A safe plan (two new tables) applies with no approval; a warning plan (a NOT NULL column)
//! waits for one, changes nothing until it exists, and one approval applies it.

mod common;
mod lifecycle;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api,
    api::{ListParams, Patch, PatchParams},
};
use lifecycle::{
    Manager,
    app::{App, Engine, approve, phase, push, reason},
    everything_said, wait_for,
};
use ptah_api::{
    PtahSchema, PtahSchemaApproval, conditions::ConditionType, schema::SchemaPhase, shared::PlanSeverity,
};
use serde_json::json;

const STEP: Duration = Duration::from_secs(240);

async fn has_column(url: &str, table: &str, column: &str) -> bool {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let row = client
        .query_one(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 AND column_name = $2",
            &[&table, &column],
        )
        .await
        .expect("query");
    row.get::<_, i64>(0) == 1
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_schema_lifecycle_by_severity_applies_a_safe_plan_alone_and_waits_for_one_approval_of_a_warning_postgresql()
 {
    let engine = Engine::Postgres;
    let app = App::setup(engine, "e2e-severity").await;
    let (client, ns) = (app.client.clone(), app.ns.clone());
    // The admin (system:masters, exempt from the apply-policy guard) turns it on.
    app.schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"policy": {"apply": "BySeverity"}}})),
        )
        .await
        .expect("BySeverity");
    let (kubeconfig, cluster_scoped) = lifecycle::chart_kubeconfig(&client, &ns, &ns, &app.image).await;
    let manager = Manager::start(&ns, &app.image, kubeconfig);
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &ns);

    let in_sync = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
    };
    let s = wait_for(
        &app.schemas,
        "orders",
        "the safe plan applied with no approval",
        STEP,
        &manager,
        in_sync,
    )
    .await;
    assert_eq!(reason(&s, ConditionType::ApprovalRequired), "NotRequired");
    assert!(engine.has_table(&app.host_url, "items").await);
    assert_eq!(lifecycle::apply_jobs(&jobs).await, 1);
    let none = approvals.list(&ListParams::default()).await.expect("approvals");
    assert!(none.items.is_empty(), "nobody approved anything");

    // v2 adds a NOT NULL column (an HCL column is NOT NULL unless it says `null = true`).
    let primary_key = "  primary_key {\n    columns = [column.id]\n  }\n";
    let v2 = engine.schema(true).replacen(
        primary_key,
        &format!("  column \"sku\" {{\n    type = varchar(20)\n  }}\n{primary_key}"),
        1,
    );
    assert!(v2.contains("\"sku\""), "the edit found the items table");
    push(&app.services, &app.repository, "v2", &v2);
    app.schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"desired": {"ociRef": format!("oci://{}/{}:v2", app.registry, app.repository)}}}),
            ),
        )
        .await
        .expect("point at v2");
    let waiting = wait_for(
        &app.schemas,
        "orders",
        "the warning plan awaiting one approval",
        STEP,
        &manager,
        |s| {
            phase(s) == Some(SchemaPhase::AwaitingApproval)
                && reason(s, ConditionType::ApprovalRequired) == "WarningChanges"
        },
    )
    .await;
    let plan = waiting
        .status
        .as_ref()
        .and_then(|st| st.plan.clone())
        .expect("the plan");
    assert_eq!(plan.severity, Some(PlanSeverity::Warning));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        !has_column(&app.host_url, "items", "sku").await,
        "nothing is applied before the approval"
    );
    assert_eq!(
        lifecycle::apply_jobs(&jobs).await,
        1,
        "no Apply before the approval"
    );

    approve(&client, &ns, &waiting).await;
    let done = wait_for(
        &app.schemas,
        "orders",
        "InSync after the one approval",
        STEP,
        &manager,
        |s| {
            in_sync(s)
                && s.status
                    .as_ref()
                    .and_then(|st| st.applied.as_ref())
                    .is_some_and(|a| a.plan_fingerprint == plan.fingerprint)
        },
    )
    .await;
    assert!(has_column(&app.host_url, "items", "sku").await);
    assert_eq!(lifecycle::apply_jobs(&jobs).await, 2, "two plans, two Applies");

    let said = everything_said(&client, &ns, &done).await + &manager.log();
    assert!(
        !said.contains(&app.password),
        "the database password appeared in a log, Event or status"
    );
    drop(manager);
    lifecycle::delete_cluster_scoped(&client, &cluster_scoped).await;
}
