//! Phase `assert`: the control-plane contract against the live release, first and quickly. The
//! chart is installed by helm; its manager must be ready (both replicas), its CRDs discovered and
//! served, and then the API tier's own checks (`contract/`) run against that API server: the
//! documented examples accepted or refused at their field, immutable plan and approval specs, the
//! unprivileged user's RBAC refusals; and the release's approval webhook answers and refuses an
//! approval that names no plan.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Api, ResourceExt};
use ptah_api::{PtahSchema, PtahSchemaApproval};
use ptah_apitests::{
    e2e::{create, data_plane_image},
    release::{Release, install},
};
use ptah_testservices::TestServices;
use serde_json::json;

use crate::{
    common::{admin, namespace},
    contract,
    lifecycle::{Probe, probe},
};

#[tokio::test(flavor = "multi_thread")]
async fn e2e_assert_the_control_plane_contract_holds_on_the_live_release() {
    let services = TestServices::require();
    let client = admin().await;
    let app_ns = namespace(&client, "e2e-assert").await;
    // `install` returns once both manager replicas are ready: manager readiness.
    let release_ns = install(&client, &app_ns, &services, &data_plane_image(), &[]).await;
    let _release = Release(release_ns);

    // CRD discovery: the CRDs the release installed, read back as the API server serves them.
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut served = Vec::new();
    for shipped in ptah_api::crds().expect("the generated CRDs") {
        let name = shipped.name_any();
        served.push(api.get(&name).await.unwrap_or_else(|e| panic!("CRD {name}: {e}")));
    }
    contract::the_generated_crds_are_established_with_every_kind_served(&served);
    contract::every_valid_example_is_accepted_and_read_back(&client).await;
    contract::every_invalid_example_is_refused_at_its_field_with_its_message(&client).await;
    contract::plans_chunks_approvals_and_acknowledgments_refuse_spec_updates_by_put_and_merge_patch(&client)
        .await;
    contract::the_unprivileged_user_is_refused_where_rbac_says_so(&client).await;

    // The webhook configuration: in the release's application namespace an approval naming no
    // plan reaches the live webhook and is refused on its merits (not by a failed call).
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &app_ns);
    let schema = create(
        &schemas,
        json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema",
            "metadata": {"name": "orders"},
            "spec": {
                "target": {"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}},
                "desired": {
                    "ociRef": "oci://registry.example.com/shop/orders:v1",
                    "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}
                },
                "policy": {"apply": "OnApproval"}
            }
        }),
    )
    .await;
    let approvals: Api<PtahSchemaApproval> = Api::namespaced(client.clone(), &app_ns);
    let (answer, message) = probe(&approvals, &schema.uid().expect("uid")).await;
    assert_eq!(
        answer,
        Probe::Refused,
        "the release's approval webhook refuses an approval naming no plan: {message}"
    );
}
