//! T3 against the real API server: a migration plan is published once under its deterministic
//! name, owned by its PtahMigration, read back under the UID the status records; publishing the
//! same plan again is idempotent, and other content under that name is refused.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::{Api, ResourceExt, runtime::reflector};
use ptah_api::{
    PtahMigration, PtahMigrationPlan, PtahMigrationPlanSpec, PtahMigrationStatus,
    migrationplan::{PlannedMigration, PlannedTransactionMode},
    shared::{Epoch, ImmutableObjectReference, PinnedImage, PlanExecutionBinding, Sha256Digest},
};
use ptah_apitests::{
    client::{admin_client, install_crds, namespace},
    e2e::create,
};
use ptah_controller::{
    migration::MigrationPlanDraft,
    operation::Binding,
    shell::{Context, ManagerConfig, ShellError, Stores, family::Lifecycle},
};
use serde_json::json;

const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn digest(tag: &str) -> Sha256Digest {
    ptah_fingerprint::Digest::of(tag.as_bytes()).into()
}

fn binding() -> Binding {
    Binding {
        epoch: Epoch::parse(&format!("v1-{}", &HEX[..32])).expect("epoch"),
        controller_state_version: 1,
        ptah_version: "0.1.0".into(),
        executor_image: PinnedImage::parse(&format!("registry.test/ptah@sha256:{HEX}")).expect("image"),
        runner_image: PinnedImage::parse(&format!("registry.test/ptah@sha256:{HEX}")).expect("image"),
        runner_protocol_version: 1,
        controller_image: "registry.test/manager:dev".into(),
        controller_revision: "dev".into(),
        result_endpoint: None,
    }
}

fn draft(m: &PtahMigration, checksum: &str) -> MigrationPlanDraft {
    let b = binding();
    let fingerprint = digest(checksum);
    MigrationPlanDraft {
        name: format!("ptah-mplan-{}", &fingerprint.as_str()[7..31]),
        spec: PtahMigrationPlanSpec {
            contract_version: 1,
            migration_ref: ImmutableObjectReference {
                name: m.name_any(),
                uid: m.uid().expect("uid"),
            },
            fingerprint: fingerprint.as_str().to_owned(),
            migrations: vec![PlannedMigration {
                version: 1,
                version_key: None,
                description: Some("create items".into()),
                checksum: checksum.into(),
                checkpoint: false,
                transaction_mode: PlannedTransactionMode::File,
                lint: None,
            }],
            history_fingerprint: digest("history"),
            current_version: 0,
            binding: PlanExecutionBinding {
                artifact_digest: digest("artifact"),
                coordination_digest: digest("realm"),
                target_identity_digest: digest("identity"),
                policy_fingerprint: digest("policy spec"),
                verification_policy_uid: "policy-uid".into(),
                verification_policy_digest: digest("policy"),
                execution_binding_id: b.epoch.clone(),
                controller_image: b.controller_image.clone(),
                controller_revision: b.controller_revision.clone(),
                controller_state_version: 1,
                ptah_version: b.ptah_version.clone(),
                executor_image: b.executor_image.clone(),
                runner_image: b.runner_image.clone(),
                runner_protocol_version: 1,
            },
            created_at: Some(Time(
                jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).expect("now"),
            )),
        },
    }
}

#[tokio::test]
async fn a_migration_plan_is_published_once_owned_and_read_back() {
    let client = admin_client().await;
    install_crds(&client).await;
    let ns = namespace(&client, "mplan-t3").await;
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &ns);
    let m = create(&migrations, json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": "billing"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "billing", "urlFrom": {"name": "db", "key": "url"}},
            "artifact": {"ociRef": "oci://registry.invalid/shop/migrations:v1",
                         "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    }))
    .await;
    let (schemas, _) = reflector::store();
    let (migration_store, _) = reflector::store();
    let config = ManagerConfig {
        coordination_namespace: ns.clone(),
        identity: "t3".into(),
        watch_namespace: Some(ns.clone()),
    };
    let stores = Stores {
        schemas,
        migrations: migration_store,
    };
    let ctx = Context::new(
        client.clone(),
        binding(),
        config,
        Arc::new(ptah_telemetry::Metrics::new()),
        stores,
    );

    let d = draft(&m, &"a".repeat(64));
    let mut status = PtahMigrationStatus::default();
    PtahMigration::publish_plan(&ctx, &m, d.clone(), &mut status)
        .await
        .expect("publish");
    let recorded = status.plan.clone().expect("status names the plan");
    let plans: Api<PtahMigrationPlan> = Api::namespaced(client.clone(), &ns);
    let live = plans.get(&d.name).await.expect("read back");
    assert_eq!(live.uid().as_deref(), Some(recorded.uid.as_str()));
    assert_eq!(recorded.name, d.name);
    assert_eq!(live.spec, d.spec, "stored exactly as drafted");
    let owner = &live.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("PtahMigration", m.uid().expect("uid").as_str(), Some(true))
    );

    // The same plan again (made at another moment): idempotent, the same object.
    let mut again = d.clone();
    again.spec.created_at = Some(Time(jiff::Timestamp::from_second(1_800_000_000).expect("ts")));
    let mut second = PtahMigrationStatus::default();
    PtahMigration::publish_plan(&ctx, &m, again, &mut second)
        .await
        .expect("republish");
    assert_eq!(second.plan, Some(recorded.clone()));

    // Other content under the plan's name is refused, and the stored plan is untouched.
    let mut other = draft(&m, &"b".repeat(64));
    other.name = d.name.clone();
    let refused = PtahMigration::publish_plan(&ctx, &m, other, &mut PtahMigrationStatus::default()).await;
    assert!(matches!(refused, Err(ShellError::Build(_))), "{refused:?}");
    assert_eq!(plans.get(&d.name).await.expect("get").spec, d.spec);
}
