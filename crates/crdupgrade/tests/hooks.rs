//! T3: the preflight, retirement and teardown hooks against the real kube-apiserver
//! (`cargo xtask cluster up --tier api`), each refusal with its message, each hook run twice.
//!
//! The admission configurations get a unique name per test (the chart's is `ptah-operator`), and
//! the stored-state scan is limited to the test's namespace, so tests run side by side.

use std::time::Duration;

use k8s_openapi::{
    api::{
        admissionregistration::v1::{MutatingWebhookConfiguration, ValidatingWebhookConfiguration},
        apps::v1::Deployment,
        core::v1::ConfigMap,
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Api, Client,
    api::{Patch, PatchParams, PostParams},
};
use ptah_api::PtahSchema;
use ptah_apitests::{
    client::{admin_client, install_crds, namespace, unique},
    e2e::create,
};
use ptah_controllerstate::{BindingInputs, CONTROLLER_STATE_VERSION, STATE_CONFIGMAP, STATE_KEY, ensure};
use ptah_crdupgrade::{Error, Refusal, preflight::Release, retire, teardown, window::SupportWindow};
use serde_json::json;

const IMAGE: &str =
    "registry.local/ptah@sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

fn release(ns: &str, webhook: &str) -> Release {
    Release {
        name: "ptah".into(),
        namespace: ns.into(),
        webhook_configuration: webhook.into(),
        coordination_namespace: ns.into(),
    }
}

fn refused<T: std::fmt::Debug>(result: Result<T, Error>) -> Refusal {
    match result {
        Err(Error::Refused(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Both admission configurations named `name`, recorded by Helm as owned by `owner` (`ns/release`).
async fn webhook_configurations(client: &Client, name: &str, owner: Option<(&str, &str)>) {
    let annotations = owner.map_or(
        json!({}),
        |(ns, release)| json!({"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns}),
    );
    let metadata = json!({"name": name, "annotations": annotations});
    create(
        &Api::<MutatingWebhookConfiguration>::all(client.clone()),
        json!({"metadata": metadata}),
    )
    .await;
    create(
        &Api::<ValidatingWebhookConfiguration>::all(client.clone()),
        json!({"metadata": metadata}),
    )
    .await;
}

async fn the_window(client: &Client) -> (SupportWindow, u32) {
    let info = client.apiserver_version().await.expect("/version");
    let minor: u32 = info.minor.trim_end_matches('+').parse().expect("numeric minor");
    (
        SupportWindow {
            oldest: minor,
            newest: minor,
        },
        minor,
    )
}

#[tokio::test]
async fn a_second_release_is_refused_and_our_own_is_not() {
    let client = admin_client().await;
    let ns = namespace(&client, "preflight").await;
    let (window, _) = the_window(&client).await;
    let webhook = unique("ptah-operator");
    let ours = release(&ns, &webhook);

    // Nothing installed yet: passes, twice.
    for _ in 0..2 {
        ptah_crdupgrade::preflight::run(&client, &ours, window, Some(&ns))
            .await
            .expect("a first install");
    }
    webhook_configurations(&client, &webhook, Some(("team-a", "ptah"))).await;
    let refusal = refused(ptah_crdupgrade::preflight::run(&client, &ours, window, Some(&ns)).await);
    assert_eq!(
        refusal,
        Refusal::SecondRelease {
            kind: "MutatingWebhookConfiguration".into(),
            name: webhook.clone(),
            other: "team-a/ptah".into(),
            ours: format!("{ns}/ptah"),
        }
    );
    assert!(
        refusal
            .to_string()
            .contains("another release of ptah-operator is installed"),
        "{refusal}"
    );
    // The release that owns them (an upgrade) passes.
    let owner = Release {
        namespace: "team-a".into(),
        ..ours.clone()
    };
    ptah_crdupgrade::preflight::run(&client, &owner, window, Some(&ns))
        .await
        .expect("the owner upgrades");
}

#[tokio::test]
async fn an_api_server_outside_the_window_is_refused() {
    let client = admin_client().await;
    let ns = namespace(&client, "preflight").await;
    let (_, minor) = the_window(&client).await;
    let future = SupportWindow {
        oldest: minor + 1,
        newest: minor + 2,
    };
    let refusal = refused(
        ptah_crdupgrade::preflight::run(&client, &release(&ns, &unique("wh")), future, Some(&ns)).await,
    );
    let message = refusal.to_string();
    assert!(matches!(refusal, Refusal::UnsupportedMinor { .. }), "{refusal:?}");
    assert!(message.contains(&format!("Kubernetes 1.{minor}")), "{message}");
    assert!(
        message.contains(&format!("1.{}–1.{}", minor + 1, minor + 2)),
        "{message}"
    );
    // The window this binary was built with holds the test cluster's minor (matrix/kubernetes.json).
    let built_in = SupportWindow::built_in().expect("matrix");
    ptah_crdupgrade::preflight::run(&client, &release(&ns, &unique("wh")), built_in, Some(&ns))
        .await
        .expect("the matrix minor is supported");
}

#[tokio::test]
async fn newer_stored_state_is_refused_in_the_state_configmap_and_in_objects() {
    let client = admin_client().await;
    install_crds(&client).await;
    let (window, _) = the_window(&client).await;

    // The state ConfigMap of a newer manager.
    let ns = namespace(&client, "preflight").await;
    let newer = CONTROLLER_STATE_VERSION + 1;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    create(
        &cms,
        json!({"metadata": {"name": STATE_CONFIGMAP},
        "data": {STATE_KEY: format!(r#"{{"controllerStateVersion":{newer},"future":true}}"#)}}),
    )
    .await;
    let refusal = refused(
        ptah_crdupgrade::preflight::run(&client, &release(&ns, &unique("wh")), window, Some(&ns)).await,
    );
    assert_eq!(
        refusal,
        Refusal::StoredStateNewer {
            object: format!("ConfigMap {ns}/{STATE_CONFIGMAP}"),
            stored: newer,
            ours: CONTROLLER_STATE_VERSION
        }
    );
    assert!(
        refusal
            .to_string()
            .contains("newer than the 1 this release understands"),
        "{refusal}"
    );

    // A PtahSchema whose status a newer manager wrote.
    let ns = namespace(&client, "preflight").await;
    let schemas: Api<PtahSchema> = Api::namespaced(client.clone(), &ns);
    create(&schemas, json!({
        "apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema", "metadata": {"name": "orders"},
        "spec": {
            "target": {"engine": "PostgreSQL", "coordinationKey": "orders", "urlFrom": {"name": "db", "key": "url"}},
            "desired": {"ociRef": "oci://registry.invalid/shop/orders:v1", "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"}}
        }
    }))
    .await;
    let unused = release(&ns, "unused");
    let run = || ptah_crdupgrade::preflight::run(&client, &unused, window, Some(&ns));
    run().await.expect("a PtahSchema without status is fine");
    schemas
        .patch_status(
            "orders",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"executionBinding": {"controllerStateVersion": newer}}})),
        )
        .await
        .expect("write a newer status");
    let refusal = refused(run().await);
    // Removed before asserting: a newer-state object left behind would refuse every later install
    // in this cluster (the real preflight scans every namespace).
    schemas
        .delete("orders", &Default::default())
        .await
        .expect("delete the newer object");
    assert_eq!(
        refusal,
        Refusal::StoredStateNewer {
            object: format!("PtahSchema {ns}/orders"),
            stored: newer,
            ours: CONTROLLER_STATE_VERSION
        }
    );
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let _ = namespaces.delete(&ns, &Default::default()).await;
}

fn inputs(image: &str) -> BindingInputs {
    BindingInputs {
        controller_state_version: CONTROLLER_STATE_VERSION,
        ptah_version: "0.1.0".into(),
        executor_image: image.into(),
        runner_protocol_version: 5,
    }
}

#[tokio::test]
async fn retirement_waits_for_the_new_binding() {
    let client = admin_client().await;
    let ns = namespace(&client, "retire").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    // No replica: whether a kube-controller-manager runs (full tier) or not (API tier), the rollout
    // is complete once the generation is observed. Rollout arithmetic is unit-tested in `retire`.
    create(&deployments, json!({"metadata": {"name": "manager"}, "spec": {"replicas": 0,
        "selector": {"matchLabels": {"app": "m"}},
        "template": {"metadata": {"labels": {"app": "m"}}, "spec": {"containers": [{"name": "m", "image": "x"}]}}}}))
    .await;
    let wait = Duration::from_secs(2);
    let manager = retire::Manager {
        namespace: &ns,
        deployment: "manager",
        coordination_namespace: &ns,
        watch_namespace: Some(&ns),
    };
    let run = |image: &'static str| retire::run(&client, &manager, image, wait);
    deployments
        .patch_status(
            "manager",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"observedGeneration": 1}})),
        )
        .await
        .expect("observe the generation");
    let refusal = refused(run(IMAGE).await);
    assert!(
        refusal
            .to_string()
            .contains("has not written the controller state"),
        "{refusal}"
    );

    let old = ensure(
        client.clone(),
        &ns,
        inputs("registry.local/ptah@sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
    )
    .await
    .expect("the old manager's state");
    let refusal = refused(run(IMAGE).await);
    assert!(refusal.to_string().contains("still binds executor"), "{refusal}");
    let new = ensure(client.clone(), &ns, inputs(IMAGE))
        .await
        .expect("the new manager's state");
    assert_ne!(old.epoch, new.epoch);
    for _ in 0..2 {
        let retired = run(IMAGE).await.expect("retired");
        assert_eq!(retired.epoch, new.epoch.as_str());
        // Counted in the watched namespace only, which holds none.
        assert_eq!(
            retired.pending,
            vec![
                ("PtahSchema".to_owned(), 0, 0),
                ("PtahMigration".to_owned(), 0, 0)
            ]
        );
    }
}

/// A CRD of its own group holding `objects` Widgets.
async fn widget_crd(client: &Client, ns: &str, objects: usize) -> CustomResourceDefinition {
    let group = format!("{}.crdupgrade.test", unique("t"));
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("widgets.{group}"), "annotations": {
            ptah_api::CRD_SCHEMA_VERSION_ANNOTATION: "1",
            ptah_api::CRD_SCHEMA_DIGEST_ANNOTATION: "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .expect("CRD");
    ptah_crdupgrade::crds::apply(client, std::slice::from_ref(&crd), Duration::from_secs(60))
        .await
        .expect("install");
    let resource = kube::api::ApiResource {
        group: group.clone(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource);
    for i in 0..objects {
        let object = kube::api::DynamicObject::new(&format!("w{i}"), &resource);
        api.create(&PostParams::default(), &object).await.expect("widget");
    }
    crd
}

#[tokio::test]
async fn teardown_removes_only_our_admission_configurations_and_keeps_everything_else() {
    let client = admin_client().await;
    let ns = namespace(&client, "teardown").await;
    let ours_name = unique("ptah-operator");
    webhook_configurations(&client, &ours_name, Some((&ns, "ptah"))).await;
    let crd = widget_crd(&client, &ns, 2).await;
    let crds = std::slice::from_ref(&crd);
    let ours = release(&ns, &ours_name);

    // keepOnUninstall=false with objects left: refused before anything is deleted.
    let refusal = refused(teardown::run(&client, &ours, crds, false).await);
    assert_eq!(
        refusal,
        Refusal::ObjectsRemain {
            kind: "Widget".into(),
            count: 2
        }
    );
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    assert!(
        mutating.get_opt(&ours_name).await.expect("get").is_some(),
        "nothing deleted on a refusal"
    );

    let done = teardown::run(&client, &ours, crds, true).await.expect("teardown");
    assert_eq!(
        done.removed,
        vec![
            format!("MutatingWebhookConfiguration {ours_name}"),
            format!("ValidatingWebhookConfiguration {ours_name}")
        ]
    );
    assert_eq!(done.remaining, vec![("Widget".to_owned(), 2)]);
    assert!(done.deleted_crds.is_empty());
    assert!(mutating.get_opt(&ours_name).await.expect("get").is_none());
    assert!(validating.get_opt(&ours_name).await.expect("get").is_none());
    let crd_name = crd.metadata.name.clone().unwrap_or_default();
    let crd_api: Api<CustomResourceDefinition> = Api::all(client.clone());
    assert!(
        crd_api.get_opt(&crd_name).await.expect("get").is_some(),
        "the CRD stays"
    );
    // Twice: nothing left to remove, the same report.
    let again = teardown::run(&client, &ours, crds, true)
        .await
        .expect("teardown again");
    assert!(again.removed.is_empty());
    assert_eq!(again.remaining, done.remaining);

    // Configurations of another release are never touched.
    let foreign = unique("ptah-operator");
    webhook_configurations(&client, &foreign, Some(("elsewhere", "ptah"))).await;
    let done = teardown::run(&client, &release(&ns, &foreign), crds, true)
        .await
        .expect("teardown");
    assert!(done.removed.is_empty());
    assert!(mutating.get_opt(&foreign).await.expect("get").is_some());

    // With no object left, keepOnUninstall=false deletes the CRD.
    let empty = widget_crd(&client, &ns, 0).await;
    let done = teardown::run(&client, &ours, std::slice::from_ref(&empty), false)
        .await
        .expect("teardown");
    assert_eq!(
        done.deleted_crds,
        vec![empty.metadata.name.clone().unwrap_or_default()]
    );
    let _ = crd_api.delete(&crd_name, &Default::default()).await;
    let _ = mutating.delete(&foreign, &Default::default()).await;
    let _ = validating.delete(&foreign, &Default::default()).await;
}
