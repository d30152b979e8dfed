//! T4 (`e2e_schema_lifecycle_renames_…`, phase `schema-lifecycle` of `cargo xtask e2e --suite
//! schema-lifecycle`): a declared rename through the operator, on the full local cluster with the
//! manager binary, the data-plane image, the TLS registry and a real PostgreSQL.
//!
//! v1 (`items`: id, name) applies on its own under `policy.apply: BySeverity`, and three rows go
//! in. v2 names the table `line_items` and the column `title`, each with `renamed_from`: the plan
//! is a warning (clients of the old names fail), not destructive; it waits for one approval, and
//! once approved the database has `line_items` with the same three rows and titles, no `items`,
//! and two Apply Jobs in all.

mod common;
mod lifecycle;

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use lifecycle::{
    Manager,
    app::{App, Engine, approve, phase, push, reason},
    everything_said, wait_for,
};
use ptah_api::{PtahSchema, conditions::ConditionType, schema::SchemaPhase, shared::PlanSeverity};
use serde_json::json;

const STEP: Duration = Duration::from_secs(240);

/// `SELECT count(*) …` on the target, as the server counts.
async fn count(url: &str, sql: &str) -> i64 {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client.query_one(sql, &[]).await.expect(sql).get(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_schema_lifecycle_renames_a_table_and_a_column_without_losing_a_row_postgresql() {
    let engine = Engine::Postgres;
    let app = App::setup(engine, "e2e-rename").await;
    let (client, ns) = (app.client.clone(), app.ns.clone());
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
    let in_sync = |s: &PtahSchema| {
        phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
    };
    wait_for(&app.schemas, "orders", "v1 applied", STEP, &manager, in_sync).await;
    engine
        .exec(
            &app.host_url,
            "INSERT INTO items (id, name) VALUES (1, 'bolt'), (2, 'nut'), (3, 'washer')",
        )
        .await;
    let before = count(&app.host_url, "SELECT count(*) FROM items").await;
    assert_eq!(before, 3);

    let v2 = engine
        .schema(true)
        .replacen(
            "table \"items\" {\n",
            "table \"line_items\" {\n  renamed_from = \"items\"\n",
            1,
        )
        .replacen(
            "  column \"name\" {\n",
            "  column \"title\" {\n    renamed_from = \"name\"\n",
            1,
        );
    assert!(v2.contains("renamed_from = \"items\"") && v2.contains("renamed_from = \"name\""));
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
        "the rename plan awaiting one approval",
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
    assert_eq!(
        plan.severity,
        Some(PlanSeverity::Warning),
        "a rename is a warning, not destructive"
    );
    assert!(
        engine.has_table(&app.host_url, "items").await,
        "nothing before the approval"
    );

    approve(&client, &ns, &waiting).await;
    let done = wait_for(
        &app.schemas,
        "orders",
        "InSync after the rename",
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
    assert!(
        !engine.has_table(&app.host_url, "items").await,
        "the old name is gone"
    );
    assert_eq!(
        count(&app.host_url, "SELECT count(*) FROM line_items").await,
        before,
        "every row is kept"
    );
    assert_eq!(
        count(
            &app.host_url,
            "SELECT count(*) FROM line_items WHERE (id, title) IN ((1, 'bolt'), (2, 'nut'), (3, 'washer'))"
        )
        .await,
        3,
        "every value is kept under the new column name"
    );
    assert_eq!(lifecycle::apply_jobs(&jobs).await, 2, "two plans, two Applies");

    let said = everything_said(&client, &ns, &done).await + &manager.log();
    assert!(
        !said.contains(&app.password),
        "the database password appeared in a log, Event or status"
    );
    drop(manager);
    lifecycle::delete_cluster_scoped(&client, &cluster_scoped).await;
}
