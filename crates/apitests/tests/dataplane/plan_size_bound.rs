//! Scenario 17: the plan byte bound is exact. An artifact whose plan is one byte over 8 MiB is
//! refused by the Plan's runner (`plan_too_large`): nothing is offered and nothing written. The
//! same artifact one byte shorter plans to exactly 8 MiB, is published as 16 chunks of 512 KiB,
//! and is applied by one Apply Job.
//!
//! The plan's size is the executor's to decide, so the test measures it: it plans a small
//! version of the artifact with the host's `ptah` against the same empty database, and pads a
//! view's string literal by the difference (one byte of literal is one byte of plan).

use std::{path::Path, process::Command, time::Duration};

use kube::{Api, api::ListParams};
use ptah_api::{PtahSchemaPlan, schema::SchemaPhase};
use ptah_apitests::e2e::build_bin;
use ptah_dataplane::MAX_PLAN_BYTES;
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{both, patch_spec, said},
        setup::Run,
    },
    lifecycle::app::{Engine, approve, phase, push},
};

/// Planning (twice, and a dry run), publishing and applying 8 MiB is CPU-bound: 90 s on an idle
/// machine here, 333 s while two other builds shared its two cores.
const BOUND: Duration = Duration::from_secs(600);
/// The plan contract's chunks of a plan at the bound: 8 MiB in chunks of 512 KiB.
const MAX_CHUNKS: usize = 16;

/// The artifact: one view selecting a literal of `n` bytes.
fn artifact(engine: Engine, n: usize) -> String {
    let attach = match engine {
        Engine::Postgres => "schema \"public\" {}\n\nview \"big\" {\n  schema = schema.public\n",
        Engine::Mariadb => "view \"big\" {\n",
    };
    format!("{attach}  as = \"SELECT '{}' AS x\"\n}}\n", "a".repeat(n))
}

/// The size of the plan the host's `ptah` writes for `hcl` against the database `url`.
fn plan_size(url: &str, hcl: &str) -> usize {
    let dir = std::env::temp_dir().join(ptah_apitests::client::unique("plan-size"));
    std::fs::create_dir_all(&dir).expect("dir");
    let (file, out) = (dir.join("schema.hcl"), dir.join("plan.json"));
    std::fs::write(&file, hcl).expect("schema.hcl");
    let run = Command::new(build_bin("ptah-cli", "ptah"))
        .args(["schema", "plan", "--format", "json", "--from"])
        .arg(&file)
        .arg("--output")
        .arg(&out)
        .env("PTAH_DB_URL", url)
        .env("PTAH_LOG", "warn")
        .output()
        .expect("run ptah schema plan");
    // Exit 1: changes are pending, the plan is written.
    assert_eq!(
        run.status.code(),
        Some(1),
        "ptah schema plan: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let size = file_len(&out);
    std::fs::remove_dir_all(&dir).expect("clean");
    size
}

fn file_len(path: &Path) -> usize {
    usize::try_from(std::fs::metadata(path).expect("the plan file").len()).expect("a size")
}

/// The view's length as the server holds it, if the view exists.
async fn view_length(engine: Engine, url: &str) -> Option<i64> {
    match engine {
        Engine::Postgres => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .expect("connect to PostgreSQL");
            tokio::spawn(conn);
            client
                .query_opt("SELECT length(x)::bigint FROM big", &[])
                .await
                .ok()
                .flatten()
                .map(|r| r.get(0))
        }
        Engine::Mariadb => {
            use mysql_async::prelude::Queryable;
            let mut conn = mysql_async::Conn::from_url(url)
                .await
                .expect("connect to MariaDB");
            conn.query_first::<i64, _>("SELECT LENGTH(x) FROM big")
                .await
                .ok()
                .flatten()
        }
    }
}

async fn plan_size_bound(name: &'static str, engine: Engine) {
    // A longer deadline: the Plan Job plans 8 MiB twice and dry-runs it on two shared cores.
    let run = Run::start(
        name,
        engine,
        json!({"suspend": true, "execution": {"activeDeadlineSeconds": 600}}),
    )
    .await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    let small = 1000;
    let overhead = plan_size(&run.app.host_url, &artifact(engine, small)) - small;
    let exact = MAX_PLAN_BYTES - overhead;
    let tag = |tag: &str| format!("oci://{}/{}:{tag}", run.app.registry, run.app.repository);

    // One byte over: refused by the Plan's runner, nothing offered, nothing written.
    push(
        &run.app.services,
        &run.app.repository,
        "over",
        &artifact(engine, exact + 1),
    );
    patch_spec(
        &run,
        json!({"suspend": false, "desired": {"ociRef": tag("over")}}),
    )
    .await;
    let refused = run
        .wait("the plan refused as too large", |s| {
            said(s).contains("plan_too_large")
                && s.status.as_ref().is_some_and(|st| st.active_operation.is_none())
        })
        .await;
    let plans: Api<PtahSchemaPlan> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let offered = plans
        .list(&ListParams::default())
        .await
        .expect("list plans")
        .items;
    let over = match (&offered[..], view_length(engine, &run.app.host_url).await) {
        ([], None) => Ok(()),
        (plans, view) => Err(format!(
            "one byte over: {} plan(s) offered, the view {view:?}",
            plans.len()
        )),
    };
    assert!(
        refused.status.as_ref().is_some_and(|st| st.plan.is_none()),
        "{}",
        said(&refused)
    );

    // Exactly the bound: offered as 16 chunks, applied once.
    push(
        &run.app.services,
        &run.app.repository,
        "exact",
        &artifact(engine, exact),
    );
    patch_spec(&run, json!({"desired": {"ociRef": tag("exact")}})).await;
    let waiting = run.awaiting(None).await;
    let plan_name = waiting
        .status
        .as_ref()
        .and_then(|st| st.plan.as_ref())
        .map(|p| p.name.clone())
        .expect("a plan");
    let plan = plans.get(&plan_name).await.expect("the plan object");
    assert_eq!(
        (plan.spec.size, plan.spec.chunks.len()),
        (i64::try_from(MAX_PLAN_BYTES).expect("bound"), MAX_CHUNKS),
        "the plan is exactly the bound, in the most chunks"
    );
    approve(&run.app.client, &run.app.ns, &waiting).await;
    run.wait("in sync", |s| phase(s) == Some(SchemaPhase::InSync))
        .await;
    let exact_db = match view_length(engine, &run.app.host_url).await {
        Some(n) if n == i64::try_from(exact).expect("length") => Ok(()),
        other => Err(format!("the view's literal is {other:?} bytes, want {exact}")),
    };
    run.conclude(&[1], both(over, exact_db), BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_plan_of_exactly_8_mib_is_applied_and_one_byte_more_is_refused_postgresql() {
    plan_size_bound(
        "e2e_dataplane_plan_of_exactly_8_mib_is_applied_and_one_byte_more_is_refused_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_plan_of_exactly_8_mib_is_applied_and_one_byte_more_is_refused_mysql() {
    plan_size_bound(
        "e2e_dataplane_plan_of_exactly_8_mib_is_applied_and_one_byte_more_is_refused_mysql",
        Engine::Mariadb,
    )
    .await;
}
