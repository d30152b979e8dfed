//! T3: the retirement hook names the PtahSchemas and PtahMigrations a narrowed `watchNamespace`
//! strands with the manager's finalizer, and the patch it prints releases them (issue 33: their
//! deletion hung).

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{
    Api, Client,
    api::{DeleteParams, Patch, PatchParams},
};
use ptah_api::{FINALIZER, PtahMigration, PtahSchema};
use ptah_apitests::{
    client::{admin_client, install_crds, namespace},
    e2e::create,
    fixtures,
};
use ptah_controllerstate::{BindingInputs, CONTROLLER_STATE_VERSION, ensure};
use ptah_crdupgrade::{retire, stranded::Stranded};
use serde_json::{Value, json};

const IMAGE: &str =
    "registry.local/ptah@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn with_finalizers(mut object: Value, finalizers: &[&str]) -> Value {
    object["metadata"]["finalizers"] = json!(finalizers);
    object
}

fn migration(ns: &str, name: &str) -> Value {
    json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahMigration",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": format!("{name}-primary"),
                       "urlFrom": {"name": format!("{name}-db"), "key": "url"}},
            "artifact": {"ociRef": format!("oci://registry.example.com/shop/{name}-migrations:v7"),
                         "verificationPolicyFrom": {"name": format!("{name}-verification-policy"), "key": "policy.yaml"}}
        }
    })
}

/// A rolled-out manager Deployment with no replica, and its state binding `IMAGE`.
async fn manager(client: &Client, ns: &str) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    create(&deployments, json!({"metadata": {"name": "manager"}, "spec": {"replicas": 0,
        "selector": {"matchLabels": {"app": "m"}},
        "template": {"metadata": {"labels": {"app": "m"}}, "spec": {"containers": [{"name": "m", "image": "x"}]}}}}))
    .await;
    deployments
        .patch_status(
            "manager",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"observedGeneration": 1}})),
        )
        .await
        .expect("observe the generation");
    let inputs = BindingInputs {
        controller_state_version: CONTROLLER_STATE_VERSION,
        ptah_version: "0.1.0".into(),
        executor_image: IMAGE.into(),
        runner_protocol_version: 5,
    };
    ensure(client.clone(), ns, inputs)
        .await
        .expect("the manager's state");
}

/// The stranded resources of namespace `ns` the retirement reports with `watched` as the watch.
async fn reported(client: &Client, watched: &str, ns: &str) -> Vec<Stranded> {
    let manager = retire::Manager {
        namespace: watched,
        deployment: "manager",
        coordination_namespace: watched,
        watch_namespace: Some(watched),
    };
    let retired = retire::run(client, &manager, IMAGE, Duration::from_secs(5))
        .await
        .expect("retired");
    // Other tests' resources live in the same cluster: only this test's namespace counts.
    retired
        .stranded
        .into_iter()
        .filter(|s| s.namespace == ns)
        .collect()
}

#[tokio::test]
async fn retirement_names_what_a_narrowed_watch_namespace_strands_and_its_patch_releases_them() {
    let client = admin_client().await;
    install_crds(&client).await;
    let watched = namespace(&client, "stranded-watched").await;
    let outside = namespace(&client, "stranded-outside").await;
    manager(&client, &watched).await;
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &outside);
    let migrations: Api<PtahMigration> = Api::namespaced(client.clone(), &outside);
    create(
        &Api::<PtahSchema>::namespaced(client.clone(), &watched),
        with_finalizers(fixtures::schema(&watched, "inside"), &[FINALIZER]),
    )
    .await;
    create(
        &schemas,
        with_finalizers(fixtures::schema(&outside, "orders"), &[FINALIZER]),
    )
    .await;
    create(&schemas, fixtures::schema(&outside, "released")).await;
    create(
        &migrations,
        with_finalizers(migration(&outside, "billing"), &["example.com/keep", FINALIZER]),
    )
    .await;

    let found = reported(&client, &watched, &outside).await;
    let seen: Vec<(&str, &str, usize, bool)> = found
        .iter()
        .map(|s| (s.kind.as_str(), s.name.as_str(), s.index, s.deleting))
        .collect();
    assert_eq!(
        seen,
        [
            ("PtahSchema", "orders", 0, false),
            ("PtahMigration", "billing", 1, false)
        ]
    );
    assert!(
        found[0].warning(&watched).contains(&format!(
            "kubectl patch ptahschemas.operator.ptah.run orders -n {outside} --type=json"
        )),
        "{}",
        found[0].warning(&watched)
    );

    // Deleting it hangs on the finalizer; the report says so.
    schemas
        .delete("orders", &DeleteParams::default())
        .await
        .expect("delete");
    let hanging = schemas.get("orders").await.expect("still there");
    assert!(hanging.metadata.deletion_timestamp.is_some());
    let found = reported(&client, &watched, &outside).await;
    assert!(found[0].deleting && found[0].warning(&watched).contains("its deletion hangs now"));

    // The printed patch releases exactly the manager's finalizer.
    schemas
        .patch(
            "orders",
            &PatchParams::default(),
            &Patch::<()>::Json(serde_json::from_value(found[0].release_patch()).expect("a JSON patch")),
        )
        .await
        .expect("release the schema");
    assert!(
        schemas.get_opt("orders").await.expect("get").is_none(),
        "deleted once released"
    );
    let billing = migrations
        .patch(
            "billing",
            &PatchParams::default(),
            &Patch::<()>::Json(serde_json::from_value(found[1].release_patch()).expect("a JSON patch")),
        )
        .await
        .expect("release the migration");
    assert_eq!(
        billing.metadata.finalizers,
        Some(vec!["example.com/keep".to_owned()])
    );
    assert!(reported(&client, &watched, &outside).await.is_empty());
    // A stale patch (the finalizer moved) changes nothing.
    let stale = migrations
        .patch(
            "billing",
            &PatchParams::default(),
            &Patch::<()>::Json(serde_json::from_value(found[1].release_patch()).expect("a JSON patch")),
        )
        .await;
    assert!(stale.is_err(), "the test operation guards the removal");
}
