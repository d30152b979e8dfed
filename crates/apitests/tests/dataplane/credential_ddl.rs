//! Scenario 12: credential-bearing DDL smuggled into an artifact. The schema's view body carries a
//! second statement, `CREATE ROLE … PASSWORD '…'` (MySQL: `CREATE USER … IDENTIFIED BY '…'`),
//! which the executor's planner copies into the plan as written. The operator reads every
//! statement of the plan and refuses it as `invalid_plan_output`: no plan is offered for approval,
//! nothing is applied, no role exists, and the role's password appears nowhere the namespace or
//! the manager says anything (the services' passwords are scanned as in every scenario).

use std::time::Duration;

use kube::{Api, api::ListParams};
use mysql_async::prelude::Queryable;
use ptah_api::{PtahSchemaPlan, schema::SchemaPhase};
use serde_json::json;

use crate::{
    dataplane::{
        by_hand::{both, patch_spec, said, scan_for},
        database::expect_tables,
        setup::Run,
    },
    lifecycle::app::{Engine, phase, push},
};

const BOUND: Duration = Duration::from_secs(300);
const ROLE: &str = "ptah_s12_smuggled";
/// The smuggled role's password: long and unlikely, so finding it anywhere is a leak.
const ROLE_PASSWORD: &str = "s12-Smuggled-Pw-9d41c7e2";

fn artifact(engine: Engine) -> String {
    let (attach, ddl) = match engine {
        Engine::Postgres => (
            "  schema = schema.public\n",
            format!("CREATE ROLE {ROLE} LOGIN PASSWORD '{ROLE_PASSWORD}'"),
        ),
        Engine::Mariadb => (
            "",
            format!("CREATE USER '{ROLE}'@'%' IDENTIFIED BY '{ROLE_PASSWORD}'"),
        ),
    };
    format!(
        "{}\nview \"v\" {{\n{attach}  as = \"SELECT 1 AS x; {ddl}\"\n}}\n",
        engine.schema(true)
    )
}

/// Whether the server knows the role (read as the admin: `mysql.user` is not the app's to read).
async fn role_exists(run: &Run, engine: Engine) -> bool {
    match engine {
        Engine::Postgres => {
            let url = run.app.services.postgres.admin_url.expose();
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                .await
                .expect("connect to PostgreSQL");
            tokio::spawn(conn);
            client
                .query_one("SELECT count(*) FROM pg_roles WHERE rolname = $1", &[&ROLE])
                .await
                .expect("read pg_roles")
                .get::<_, i64>(0)
                > 0
        }
        Engine::Mariadb => {
            let url = run.app.services.mysql.admin_url.expose();
            let mut conn = mysql_async::Conn::from_url(url)
                .await
                .expect("connect to MariaDB");
            let n: Option<i64> = conn
                .exec_first("SELECT COUNT(*) FROM mysql.user WHERE User = ?", (ROLE,))
                .await
                .expect("read mysql.user");
            n.unwrap_or(0) > 0
        }
    }
}

async fn credential_ddl(name: &'static str, engine: Engine) {
    let run = Run::start(name, engine, json!({"suspend": true})).await;
    run.wait("suspended", |s| phase(s) == Some(SchemaPhase::Suspended))
        .await;
    assert!(!role_exists(&run, engine).await, "no such role before");
    push(&run.app.services, &run.app.repository, "v2", &artifact(engine));
    let reference = format!("oci://{}/{}:v2", run.app.registry, run.app.repository);
    patch_spec(&run, json!({"suspend": false, "desired": {"ociRef": reference}})).await;

    let refused = run
        .wait("the plan refused as invalid_plan_output", |s| {
            said(s).contains("invalid_plan_output")
                && s.status.as_ref().is_some_and(|st| st.active_operation.is_none())
        })
        .await;
    assert!(
        refused.status.as_ref().is_some_and(|st| st.plan.is_none()),
        "no plan is offered: {}",
        said(&refused)
    );
    // Two more intervals: never offered, never applied.
    tokio::time::sleep(Duration::from_secs(25)).await;
    let plans: Api<PtahSchemaPlan> = Api::namespaced(run.app.client.clone(), &run.app.ns);
    let published = plans
        .list(&ListParams::default())
        .await
        .expect("list plans")
        .items
        .len();
    let database = match (
        expect_tables(engine, &run.app.host_url, &[]).await,
        role_exists(&run, engine).await,
        published,
    ) {
        (Ok(()), false, 0) => Ok(()),
        (tables, role, plans) => Err(format!(
            "tables: {tables:?}; role {ROLE} exists: {role}; plans published: {plans}"
        )),
    };
    let leak = both(
        run.scenario
            .leak_scan(&run.app.services, &run.manager_log())
            .await,
        scan_for(&run, "the smuggled role's password", ROLE_PASSWORD).await,
    );
    run.end().await.finish(&[], database, leak, BOUND).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_credential_ddl_in_an_artifact_is_refused_and_never_shown_postgresql() {
    credential_ddl(
        "e2e_dataplane_credential_ddl_in_an_artifact_is_refused_and_never_shown_postgresql",
        Engine::Postgres,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_dataplane_credential_ddl_in_an_artifact_is_refused_and_never_shown_mysql() {
    credential_ddl(
        "e2e_dataplane_credential_ddl_in_an_artifact_is_refused_and_never_shown_mysql",
        Engine::Mariadb,
    )
    .await;
}
