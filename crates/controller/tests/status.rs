//! T3 against the real API server: the manager's status writes are server-side applies under one
//! field manager, conditional on the resourceVersion the decision saw — a decision made on a
//! stale read is refused instead of overwriting newer state.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, ResourceExt};
use ptah_api::{PtahSchema, PtahSchemaStatus, schema::SchemaPhase};
use ptah_apitests::{
    client::{admin_client, install_crds, namespace},
    e2e::create,
};
use ptah_controller::shell::{FIELD_MANAGER, ShellError, write_status};
use serde_json::json;

async fn schema(client: &kube::Client, ns: &str) -> Api<PtahSchema> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    create(
        &cms,
        json!({"metadata": {"name": "policy"}, "immutable": true, "data": {"policy.yaml": "version: 1\n"}}),
    )
    .await;
    let api: Api<PtahSchema> = Api::namespaced(client.clone(), ns);
    create(&api, json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
        "metadata": {"name": "orders"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}},
            "desired": {"ociRef": "oci://registry.invalid/shop/orders:v1", "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    }))
    .await;
    api
}

fn with_phase(phase: SchemaPhase) -> PtahSchemaStatus {
    PtahSchemaStatus {
        phase: Some(phase),
        observed_generation: Some(1),
        ..PtahSchemaStatus::default()
    }
}

#[tokio::test]
async fn a_status_write_from_a_stale_read_is_refused_and_changes_nothing() {
    let client = admin_client().await;
    install_crds(&client).await;
    let ns = namespace(&client, "status-t3").await;
    let api = schema(&client, &ns).await;
    let read = api.get("orders").await.expect("get");
    let written = write_status(&api, &read, &with_phase(SchemaPhase::Resolving))
        .await
        .expect("first write");
    assert_eq!(
        written.status.as_ref().and_then(|s| s.phase),
        Some(SchemaPhase::Resolving)
    );
    assert_ne!(written.resource_version(), read.resource_version());
    // A second decision made on the first read must not overwrite what the first one wrote.
    let stale = write_status(&api, &read, &with_phase(SchemaPhase::Failed)).await;
    match stale {
        Err(ShellError::Kube(kube::Error::Api(s))) => assert_eq!(s.code, 409, "{s:?}"),
        other => panic!("a stale write must be refused with a conflict, got {other:?}"),
    }
    let now = api.get("orders").await.expect("get");
    assert_eq!(
        now.status.as_ref().and_then(|s| s.phase),
        Some(SchemaPhase::Resolving)
    );
    // The status belongs to one field manager, through the status subresource.
    let owners: Vec<(String, String)> = now
        .managed_fields()
        .iter()
        .filter(|m| m.subresource.as_deref() == Some("status"))
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(owners, vec![(FIELD_MANAGER.to_owned(), "Apply".to_owned())]);
}

#[tokio::test]
async fn fields_left_out_of_a_status_write_are_removed() {
    let client = admin_client().await;
    install_crds(&client).await;
    let ns = namespace(&client, "status-t3").await;
    let api = schema(&client, &ns).await;
    let read = api.get("orders").await.expect("get");
    let mut first = with_phase(SchemaPhase::Planning);
    first.last_attempt_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        jiff::Timestamp::now(),
    ));
    let written = write_status(&api, &read, &first).await.expect("write");
    assert!(
        written
            .status
            .as_ref()
            .is_some_and(|s| s.last_attempt_time.is_some())
    );
    let cleared = write_status(&api, &written, &with_phase(SchemaPhase::InSync))
        .await
        .expect("write");
    let status = cleared.status.expect("status");
    assert_eq!(status.phase, Some(SchemaPhase::InSync));
    assert!(
        status.last_attempt_time.is_none(),
        "a claim or record cleared by a decision is really gone"
    );
}
