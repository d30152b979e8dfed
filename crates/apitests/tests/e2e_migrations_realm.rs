//! T4 (`e2e_migrations_<engine>_shared_realm`, phases `migrations-postgresql` and
//! `migrations-mysql`): a PtahSchema and a PtahMigration on one database (`sharedRealm` on both,
//! one coordination key) approved at the same moment. Their Applies take turns through the one
//! realm Lease: the Lease passes between the two kinds' holders, and no Apply Job of one kind runs
//! while an Apply Job of the other runs. The schema leaves the migration's tables out of its scope.

mod common;
mod lifecycle;
mod migrations;

use std::time::{Duration, Instant};

use kube::Api;
use lifecycle::app::approve as approve_schema;
use migrations::*;
use ptah_api::{PtahSchema, schema::SchemaPhase};
use ptah_apitests::e2e::create;
use serde_json::json;

const SCHEMA: &str = "catalog";

fn catalog_hcl(engine: Engine) -> String {
    let (header, attach) = match engine {
        Engine::Postgres => ("schema \"public\" {}\n\n", "  schema = schema.public\n"),
        Engine::Mariadb => ("", ""),
    };
    format!(
        "{header}table \"catalog\" {{\n{attach}  column \"id\" {{\n    type = bigint\n  }}\n  primary_key {{\n    columns = [column.id]\n  }}\n}}\n"
    )
}

async fn wait_schema(api: &Api<PtahSchema>, what: &str, pred: impl Fn(&PtahSchema) -> bool) -> PtahSchema {
    let deadline = Instant::now() + STEP;
    loop {
        let s = api.get(SCHEMA).await.expect("the PtahSchema");
        if pred(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {}",
            serde_json::to_string_pretty(&s.status).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn overlaps(a: &Span, b: &Span) -> bool {
    match (&a.2, &a.3, &b.2, &b.3) {
        (Some(a0), Some(a1), Some(b0), Some(b1)) => a0.0 < b1.0 && b0.0 < a1.0,
        _ => true,
    }
}

async fn shared_realm(engine: Engine) {
    let app = Mig::setup(engine, "e2e-realm").await;
    let _release = Release(app.release_ns.clone());
    let spans = observe_spans(&app.client, &app.ns);
    let holders = observe_holders(&app.client, &app.release_ns);

    push_migrations(&app.services, &app.repository, "v1", &v1_files());
    app.create_migration("v1", true).await;
    let schema_repo = format!("e2e/{}-schema", app.ns);
    push_schema(&app.services, &schema_repo, "v1", &catalog_hcl(engine));
    let schemas: Api<PtahSchema> = Api::namespaced(app.client.clone(), &app.ns);
    let engine_name = match engine {
        Engine::Postgres => "PostgreSQL",
        Engine::Mariadb => "MySQL",
    };
    create(
        &schemas,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
            "metadata": {"name": SCHEMA},
            "spec": {
                "target": {"engine": engine_name, "coordinationKey": "orders", "sharedRealm": true,
                           "urlFrom": {"name": "db", "key": "url"}},
                "desired": {
                    "ociRef": format!("oci://{}/{schema_repo}:v1", app.registry),
                    "registryAuthFrom": {"name": "registry"},
                    "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
                    "transport": {"caFrom": {"name": "registry-ca", "key": "ca.pem"}}
                },
                "interval": "10s",
                // The migration's tables are the migration's: out of the schema's scope.
                "policy": {"apply": "OnApproval", "exclude": ["items", "orders", "schema_migrations"]},
                "execution": {"activeDeadlineSeconds": 300, "imagePullSecrets": [{"name": "pull"}]}
            }
        }),
    )
    .await;

    let (m, plan) = app.wait_plan(None, 2).await;
    let s = wait_schema(&schemas, "the schema awaiting its approval", |s| {
        s.status
            .as_ref()
            .is_some_and(|st| st.phase == Some(SchemaPhase::AwaitingApproval) && st.plan.is_some())
    })
    .await;
    // Both approved at the same moment: both Applies become due together.
    approve_schema(&app.client, &app.ns, &s).await;
    app.approve(&m, &plan).await;
    app.in_sync(2).await;
    wait_schema(&schemas, "the schema InSync", |s| {
        s.status
            .as_ref()
            .is_some_and(|st| st.phase == Some(SchemaPhase::InSync))
    })
    .await;
    assert!(app.engine.has_table(&app.host_url, "catalog").await);
    assert!(app.engine.has_table(&app.host_url, "items").await);

    let spans = spans.lock().expect("spans").clone();
    let applies = |owner: &str| -> Vec<(String, Span)> {
        spans
            .iter()
            .filter(|(_, s)| s.0.contains("apply") && s.1 == owner)
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect()
    };
    let (schema_applies, migration_applies) = (applies(SCHEMA), applies(NAME));
    assert_eq!(schema_applies.len(), 1, "{spans:?}");
    assert_eq!(migration_applies.len(), 1, "{spans:?}");
    for (a, sa) in &schema_applies {
        for (b, sb) in &migration_applies {
            assert!(!overlaps(sa, sb), "Apply Jobs {a} {sa:?} and {b} {sb:?} overlap");
        }
    }
    let holders = holders.lock().expect("holders").clone();
    let leases: std::collections::BTreeSet<&str> = holders.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(leases.len(), 1, "one realm Lease for both kinds: {holders:?}");
    let distinct: std::collections::BTreeSet<&str> = holders.iter().map(|(_, h)| h.as_str()).collect();
    assert!(
        distinct.len() >= 2,
        "the Lease passed between holders: {holders:?}"
    );
    eprintln!(
        "Applies: schema {:?}, migration {:?}; Lease holders in order: {}",
        schema_applies
            .iter()
            .map(|(_, s)| (&s.2, &s.3))
            .collect::<Vec<_>>(),
        migration_applies
            .iter()
            .map(|(_, s)| (&s.2, &s.3))
            .collect::<Vec<_>>(),
        holders.len()
    );
    let said = app.everything_said().await;
    assert!(!said.contains(&app.password), "the database password appeared");
    uninstall(&app.release_ns);
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_migrations_postgresql_shared_realm() {
    shared_realm(Engine::Postgres).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn e2e_migrations_mysql_shared_realm() {
    shared_realm(Engine::Mariadb).await;
}
