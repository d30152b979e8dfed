//! T3: the CRD upgrade fences against the real kube-apiserver (`cargo xtask cluster up --tier api`).
//!
//! Each test installs its own CRDs in a group of its own (`<unique>.crdupgrade.test`), never the
//! operator's, so the suites running beside it keep their API.

use std::{collections::BTreeMap, time::Duration};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{
    Api, Client,
    api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams},
};
use ptah_api::{CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION_ANNOTATION};
use ptah_apitests::client::{admin_client, unique};
use ptah_crdupgrade::{Error, Refusal, crds::apply, identity::CrdChange};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);
const DIGEST_A: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const DIGEST_B: &str = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/// A namespaced `Widget` CRD in `group`, stamped `version`/`digest`, serving `versions` (the
/// first is the storage version) and, when `column` is set, an extra printer column.
fn widget(
    group: &str,
    version: u64,
    digest: &str,
    versions: &[&str],
    column: Option<&str>,
) -> CustomResourceDefinition {
    let columns = column.map(|c| json!([{"name": c, "type": "string", "jsonPath": ".spec.note"}]));
    let versions: Vec<_> = versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            json!({
                "name": v, "served": true, "storage": i == 0,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "additionalPrinterColumns": columns.clone().unwrap_or(json!([])),
            })
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {
            "name": format!("widgets.{group}"),
            "annotations": {CRD_SCHEMA_VERSION_ANNOTATION: version.to_string(), CRD_SCHEMA_DIGEST_ANNOTATION: digest},
        },
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": versions,
        }
    }))
    .expect("a CRD")
}

fn group() -> String {
    format!("{}.crdupgrade.test", unique("g"))
}

async fn live(client: &Client, name: &str) -> Option<CustomResourceDefinition> {
    Api::<CustomResourceDefinition>::all(client.clone())
        .get_opt(name)
        .await
        .expect("get CRD")
}

fn version_of(crd: &CustomResourceDefinition) -> Option<String> {
    crd.metadata
        .annotations
        .as_ref()?
        .get(CRD_SCHEMA_VERSION_ANNOTATION)
        .cloned()
}

fn refusal(result: Result<Vec<ptah_crdupgrade::crds::Applied>, Error>) -> Refusal {
    match result {
        Err(Error::Refused(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn delete(client: &Client, names: &[&str]) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for name in names {
        let _ = api.delete(name, &Default::default()).await;
    }
}

#[tokio::test]
async fn install_upgrade_and_a_second_run_change_only_what_they_must() {
    let client = admin_client().await;
    let group = group();
    let name = format!("widgets.{group}");
    let v1 = widget(&group, 1, DIGEST_A, &["v1"], None);

    let first = apply(&client, std::slice::from_ref(&v1), WAIT)
        .await
        .expect("install");
    assert_eq!(first[0].change, CrdChange::Create);
    let again = apply(&client, std::slice::from_ref(&v1), WAIT)
        .await
        .expect("idempotent");
    assert_eq!(
        again[0].change,
        CrdChange::Unchanged,
        "a second run writes nothing"
    );

    // Someone else's label stays through the upgrade: only spec and the identity are replaced.
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"team": "dba"}}})),
    )
    .await
    .expect("label");
    let v2 = widget(&group, 2, DIGEST_B, &["v1"], Some("Note"));
    let upgraded = apply(&client, std::slice::from_ref(&v2), WAIT)
        .await
        .expect("upgrade");
    assert_eq!(upgraded[0].change, CrdChange::Update { from: Some(1) });
    let after = live(&client, &name).await.expect("live");
    assert_eq!(version_of(&after).as_deref(), Some("2"));
    assert_eq!(
        after.spec.versions[0]
            .additional_printer_columns
            .as_ref()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        after
            .metadata
            .labels
            .unwrap_or_default()
            .get("team")
            .map(String::as_str),
        Some("dba")
    );
    let twice = apply(&client, std::slice::from_ref(&v2), WAIT)
        .await
        .expect("upgrade again");
    assert_eq!(twice[0].change, CrdChange::Unchanged);
    delete(&client, &[&name]).await;
}

#[tokio::test]
async fn a_lowered_schema_version_is_refused_and_nothing_changes() {
    let client = admin_client().await;
    let group = group();
    let name = format!("widgets.{group}");
    apply(
        &client,
        &[widget(&group, 2, DIGEST_B, &["v1"], Some("Note"))],
        WAIT,
    )
    .await
    .expect("install v2");
    // The older set also brings a CRD the cluster lacks: the refusal must come before creating it.
    let other_group = self::group();
    let other = widget(&other_group, 1, DIGEST_A, &["v1"], None);
    let older = widget(&group, 1, DIGEST_A, &["v1"], None);
    let refused = refusal(apply(&client, &[other, older], WAIT).await);
    assert_eq!(
        refused,
        Refusal::SchemaVersionLowered {
            crd: name.clone(),
            live: 2,
            ours: 1
        }
    );
    let message = refused.to_string();
    assert!(
        message.contains(&name) && message.contains("crd-schema-version 2"),
        "{message}"
    );
    assert!(
        live(&client, &format!("widgets.{other_group}")).await.is_none(),
        "nothing was created"
    );
    assert_eq!(
        version_of(&live(&client, &name).await.expect("live")).as_deref(),
        Some("2")
    );
    delete(&client, &[&name]).await;
}

#[tokio::test]
async fn a_second_digest_under_one_version_is_refused() {
    let client = admin_client().await;
    let group = group();
    let name = format!("widgets.{group}");
    apply(&client, &[widget(&group, 1, DIGEST_A, &["v1"], None)], WAIT)
        .await
        .expect("install");
    let refused = refusal(
        apply(
            &client,
            &[widget(&group, 1, DIGEST_B, &["v1"], Some("Note"))],
            WAIT,
        )
        .await,
    );
    assert!(
        matches!(refused, Refusal::SameVersionDigestChanged { version: 1, .. }),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("must raise the version"),
        "{refused}"
    );
    let after = live(&client, &name).await.expect("live");
    assert!(
        after.spec.versions[0]
            .additional_printer_columns
            .as_ref()
            .is_none_or(Vec::is_empty)
    );
    delete(&client, &[&name]).await;
}

#[tokio::test]
async fn a_version_objects_are_stored_in_cannot_be_removed() {
    let client = admin_client().await;
    let group = group();
    let name = format!("widgets.{group}");
    apply(&client, &[widget(&group, 1, DIGEST_A, &["v1alpha1"], None)], WAIT)
        .await
        .expect("install");
    let resource = ApiResource {
        group: group.clone(),
        version: "v1alpha1".into(),
        api_version: format!("{group}/v1alpha1"),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let mut object = DynamicObject::new("one", &resource);
    object.data = json!({"spec": {"note": "stored as v1alpha1"}});
    widgets
        .create(&PostParams::default(), &object)
        .await
        .expect("store an object");

    let refused = refusal(apply(&client, &[widget(&group, 2, DIGEST_B, &["v1beta1"], None)], WAIT).await);
    assert_eq!(
        refused,
        Refusal::StoredVersionRemoved {
            crd: name.clone(),
            version: "v1alpha1".into()
        }
    );
    assert!(refused.to_string().contains("status.storedVersions"), "{refused}");
    // Serving both keeps the stored objects readable: allowed.
    let both = apply(
        &client,
        &[widget(&group, 2, DIGEST_B, &["v1beta1", "v1alpha1"], None)],
        WAIT,
    )
    .await
    .expect("serving the stored version too is an upgrade");
    assert_eq!(both[0].change, CrdChange::Update { from: Some(1) });
    delete(&client, &[&name]).await;
}

#[tokio::test]
async fn the_shipped_crds_install_over_the_fixture_ones_unchanged() {
    // The T3 fixture installs exactly the shipped CRDs: the hook finds nothing to do, twice.
    let client = admin_client().await;
    ptah_apitests::client::install_crds(&client).await;
    let shipped = ptah_api::crds().expect("shipped CRDs");
    for _ in 0..2 {
        let applied = apply(&client, &shipped, WAIT)
            .await
            .expect("reconcile the shipped CRDs");
        assert_eq!(applied.len(), shipped.len());
        let unchanged: BTreeMap<_, _> = applied
            .iter()
            .map(|a| (a.name.clone(), a.change.clone()))
            .collect();
        assert!(
            unchanged.values().all(|c| *c == CrdChange::Unchanged),
            "{unchanged:?}"
        );
    }
}
