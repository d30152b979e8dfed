//! T4 (`e2e_schema_lifecycle_rehearsal_…`, phase `schema-lifecycle` of `cargo xtask e2e --suite
//! schema-lifecycle`): a plan rehearsed on a dev database (`spec.dev`) before approval, on the
//! full local cluster with the manager binary, the data-plane image, the TLS registry and a real
//! PostgreSQL holding both the target and the dev database.
//!
//! v1 (two new tables) is rehearsed, passes, waits for its approval with its per-statement
//! timings, and applies. v2 adds a foreign key whose column type cannot reference the key: the
//! planner does not know that, the server does. Its rehearsal fails at that statement, the plan is
//! blocked with `RehearsalFailed`, an approval does not let it through, and nothing reaches the
//! target. The dev database is left as it was found both times.

mod common;
mod lifecycle;

use std::time::Duration;

use k8s_openapi::api::{batch::v1::Job, core::v1::Secret};
use kube::{
    Api,
    api::{Patch, PatchParams},
};
use lifecycle::{
    Manager,
    app::{App, Engine, approve, phase, push, reason},
    everything_said, wait_for,
};
use ptah_api::{
    conditions::ConditionType,
    schema::{RehearsalOutcome, SchemaPhase},
};
use ptah_apitests::e2e::create;
use serde_json::json;

const STEP: Duration = Duration::from_secs(240);

async fn tables(url: &str) -> Vec<String> {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
            &[],
        )
        .await
        .expect("query")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_schema_lifecycle_rehearsal_passes_before_approval_and_a_failing_one_blocks_the_plan_postgresql()
{
    let engine = Engine::Postgres;
    let app = App::setup(engine, "e2e-rehearsal").await;
    let (client, ns) = (app.client.clone(), app.ns.clone());
    let dev_name = format!("{}_dev", ptah_testservices::unique_name("e2e").replace('-', "_"));
    let (dev_host_url, dev_pod_url) = engine.fresh_database(&app.services, &dev_name).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    create(
        &secrets,
        json!({"metadata": {"name": "dev"}, "stringData": {"url": format!("{dev_pod_url}?sslmode=verify-full")}}),
    )
    .await;
    app.schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"dev": {"urlFrom": {"name": "dev", "key": "url"}}}})),
        )
        .await
        .expect("spec.dev");
    let (kubeconfig, cluster_scoped) = lifecycle::chart_kubeconfig(&client, &ns, &ns, &app.image).await;
    let manager = Manager::start(&ns, &app.image, kubeconfig);
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);

    let waiting = wait_for(
        &app.schemas,
        "orders",
        "the rehearsed v1 plan awaiting approval",
        STEP,
        &manager,
        |s| phase(s) == Some(SchemaPhase::AwaitingApproval),
    )
    .await;
    let plan = waiting
        .status
        .as_ref()
        .and_then(|st| st.plan.clone())
        .expect("the plan");
    let rehearsal = plan.rehearsal.clone().expect("v1 was rehearsed");
    assert_eq!(rehearsal.outcome, RehearsalOutcome::Passed, "{rehearsal:?}");
    assert_eq!(
        rehearsal.statement_millis.len(),
        usize::try_from(plan.statement_count).expect("count"),
        "one timing per statement"
    );
    assert!(rehearsal.restored);
    assert_eq!(
        tables(&dev_host_url).await,
        Vec::<String>::new(),
        "the dev database is as found"
    );
    approve(&client, &ns, &waiting).await;
    wait_for(&app.schemas, "orders", "v1 in sync", STEP, &manager, |s| {
        phase(s) == Some(SchemaPhase::InSync) && s.status.as_ref().is_some_and(|st| st.applied.is_some())
    })
    .await;
    assert_eq!(tables(&app.host_url).await, ["audit", "items"]);

    // v2: `lines.item` is varchar and references `items.id`, a bigint.
    let v2 = format!(
        "{}\ntable \"lines\" {{\n  schema = schema.public\n  column \"id\" {{\n    type = bigint\n  }}\n  column \"item\" {{\n    type = varchar(20)\n  }}\n  primary_key {{\n    columns = [column.id]\n  }}\n  foreign_key \"lines_item_fk\" {{\n    columns = [column.item]\n    ref_columns = [table.items.column.id]\n  }}\n}}\n",
        engine.schema(true)
    );
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
    let blocked = wait_for(
        &app.schemas,
        "orders",
        "the v2 plan blocked by its rehearsal",
        STEP,
        &manager,
        |s| phase(s) == Some(SchemaPhase::Blocked) && reason(s, ConditionType::Ready) == "RehearsalFailed",
    )
    .await;
    let failed = blocked
        .status
        .as_ref()
        .and_then(|st| st.plan.as_ref())
        .and_then(|p| p.rehearsal.clone())
        .expect("v2 was rehearsed");
    assert_eq!(failed.outcome, RehearsalOutcome::Failed, "{failed:?}");
    let statement = failed.failed_statement.expect("the failing statement");
    let message = blocked
        .status
        .as_ref()
        .and_then(|st| st.conditions.iter().find(|c| c.type_ == "Ready"))
        .map(|c| c.message.clone())
        .unwrap_or_default();
    assert!(
        message.contains(&format!("statement {statement}")) && message.contains("lines_item_fk"),
        "{message}"
    );
    // An approval does not let a failed rehearsal through: the next plans (every 10 s) are
    // rehearsed again, fail again, and are blocked again, and none is approved or applied.
    approve(&client, &ns, &blocked).await;
    tokio::time::sleep(Duration::from_secs(15)).await;
    let still = wait_for(
        &app.schemas,
        "orders",
        "v2 blocked again after its approval",
        STEP,
        &manager,
        |s| phase(s) == Some(SchemaPhase::Blocked) && reason(s, ConditionType::Ready) == "RehearsalFailed",
    )
    .await;
    assert!(
        still
            .status
            .as_ref()
            .and_then(|st| st.plan.as_ref())
            .is_some_and(|p| p.approval.is_none()),
        "the approval is not accepted"
    );
    assert_eq!(lifecycle::apply_jobs(&jobs).await, 1, "v2 never reached an Apply");
    assert_eq!(
        tables(&app.host_url).await,
        ["audit", "items"],
        "nothing of v2 on the target"
    );
    assert_eq!(
        tables(&dev_host_url).await,
        Vec::<String>::new(),
        "the dev database is as found"
    );

    let said = everything_said(&client, &ns, &still).await + &manager.log();
    assert!(
        !said.contains(&app.password),
        "the database password appeared in a log, Event or status"
    );
    drop(manager);
    lifecycle::delete_cluster_scoped(&client, &cluster_scoped).await;
}
