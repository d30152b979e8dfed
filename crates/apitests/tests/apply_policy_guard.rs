//! T3: `applyPolicyGuard` on the real kube-apiserver (`cargo xtask cluster up --tier api`).
//!
//! Turning `policy.apply` to `Always` (create, or update from another value) is refused unless the
//! requester is in `applyPolicyGuard.exemptGroups`; keeping Always and leaving it stay open. Then
//! the policy is weakened (binding dropped, validation dropped, match widened) and the case that
//! catches each weakening must flip. The chart refuses `system:authenticated` as an exempt group.

use k8s_openapi::api::{
    core::v1::Namespace,
    rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject},
};
use kube::{
    Api, Client,
    api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams},
    core::{ApiResource, GroupVersionKind},
};
use ptah_apitests::{
    admissionpolicy::{
        Verdict, Weakening, eventually, image_sets, impersonating, remove, render, set, try_render, weakened,
    },
    client::{admin_client, install_crds, namespace},
};
use serde_json::{Value, json};

const SELECTOR_LABEL: &str = "ptah-guard-test";
const ALICE: &str = "alice";
const REFUSAL: &str = "only members of system:masters may turn it on";

fn resource(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk("operator.ptah.run", "v1alpha1", kind))
}

fn schema(ns: &str, name: &str, apply: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahSchema",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": "orders-primary",
                "urlFrom": {"name": "orders-db", "key": "url"},
            },
            "desired": {
                "ociRef": "oci://registry.example.com/shop/orders-schema:v42",
                "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
            },
            "policy": {"apply": apply},
        },
    }))
    .expect("schema")
}

fn migration(ns: &str, apply: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigration",
        "metadata": {"name": "billing", "namespace": ns},
        "spec": {
            "target": {
                "engine": "mariadb",
                "coordinationKey": "billing-primary",
                "urlFrom": {"name": "billing-db", "key": "url"},
            },
            "artifact": {
                "ociRef": "oci://registry.example.com/shop/billing-migrations:v3",
                "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
            },
            "policy": {"apply": apply},
        },
    }))
    .expect("migration")
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

async fn create(client: &Client, ns: &str, object: &DynamicObject) -> Verdict {
    let kind = object.types.as_ref().map(|t| t.kind.clone()).unwrap_or_default();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource(&kind));
    Verdict::of(api.create(&dry_run(), object).await)
}

/// Sets `policy.apply` (and the interval, so a "keep Always" update still changes the spec) as
/// `client`, for real.
async fn update(client: &Client, ns: &str, name: &str, apply: &str, interval: &str) -> Verdict {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource("PtahSchema"));
    let patch = json!({"spec": {"policy": {"apply": apply}, "interval": interval}});
    Verdict::of(
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    )
}

async fn grant_alice(admin: &Client, ns: &str) {
    let params = PostParams::default();
    let role = Role {
        metadata: kube::api::ObjectMeta {
            name: Some("authors".to_owned()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["operator.ptah.run".to_owned()]),
            resources: Some(vec!["ptahschemas".to_owned(), "ptahmigrations".to_owned()]),
            verbs: ["create", "get", "patch", "update"].map(str::to_owned).to_vec(),
            ..PolicyRule::default()
        }]),
    };
    Api::<Role>::namespaced(admin.clone(), ns)
        .create(&params, &role)
        .await
        .expect("create role");
    let binding = RoleBinding {
        metadata: kube::api::ObjectMeta {
            name: Some("authors".to_owned()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: "authors".to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "User".to_owned(),
            name: ALICE.to_owned(),
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            ..Subject::default()
        }]),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), ns)
        .create(&params, &binding)
        .await
        .expect("create role binding");
}

fn sets(ns: &str) -> Vec<String> {
    let digest = format!("sha256:{}", "5".repeat(64));
    let mut sets = image_sets(
        &format!("registry.example/executor@{digest}"),
        &format!("registry.example/runner@{digest}"),
    );
    sets.push(format!(
        "webhooks.namespaceSelector.matchLabels.{SELECTOR_LABEL}={ns}"
    ));
    sets
}

#[test]
fn the_chart_refuses_groups_that_would_exempt_everyone() {
    for group in [
        "system:authenticated",
        "system:unauthenticated",
        "system:serviceaccounts",
    ] {
        let mut sets = sets("guard");
        sets.push(format!(
            "applyPolicyGuard.exemptGroups={{system:masters,{group}}}"
        ));
        let err = try_render("guard", "guard", &sets).expect_err(group);
        assert!(
            err.contains(&format!("may not hold \"{group}\"")),
            "{group}: {err}"
        );
    }
    let mut off = sets("guard");
    off.push("applyPolicyGuard.enabled=false".to_owned());
    let docs = try_render("guard", "guard", &off).expect("renders");
    assert!(
        !docs.iter().any(|d| d["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .ends_with("apply-policy-guard")),
        "a disabled guard renders no policy"
    );
}

#[tokio::test]
async fn only_exempt_groups_turn_apply_to_always() {
    let admin = admin_client().await;
    install_crds(&admin).await;
    let ns = namespace(&admin, "guard").await;
    let label = json!({"metadata": {"labels": {SELECTOR_LABEL: ns}}});
    Api::<Namespace>::all(admin.clone())
        .patch(&ns, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label the namespace");
    grant_alice(&admin, &ns).await;
    let alice = impersonating(ALICE, &["system:authenticated", "team-orders"]).await;
    let docs: Vec<Value> = render(&ns, &ns, &sets(&ns))
        .into_iter()
        .filter(|d| {
            d["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .ends_with("apply-policy-guard")
        })
        .collect();
    assert_eq!(docs.len(), 2, "the guard policy and its binding");
    let guard = docs[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    set(&admin, &docs, &docs).await;

    let always = schema(&ns, "orders", "Always");
    assert!(
        eventually(|| async { create(&alice, &ns, &always).await != Verdict::Admitted }).await,
        "the guard never took effect"
    );
    let verdict = create(&alice, &ns, &always).await;
    assert!(verdict.refused_for(REFUSAL), "{verdict:?}");
    assert!(
        verdict.refused_for(ALICE),
        "the refusal names the requester: {verdict:?}"
    );
    let verdict = create(&alice, &ns, &migration(&ns, "Always")).await;
    assert!(verdict.refused_for(REFUSAL), "PtahMigration: {verdict:?}");
    assert_eq!(
        create(&alice, &ns, &schema(&ns, "orders", "OnApproval")).await,
        Verdict::Admitted
    );
    assert_eq!(
        create(&alice, &ns, &migration(&ns, "Never")).await,
        Verdict::Admitted
    );

    // A member of an exempt group turns it on; a spec writer may keep it and leave it, not return.
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), &ns, &resource("PtahSchema"));
    api.create(&PostParams::default(), &always)
        .await
        .expect("the admin turns on Always");
    assert_eq!(
        update(&alice, &ns, "orders", "Always", "5m").await,
        Verdict::Admitted,
        "keeping Always"
    );
    assert_eq!(
        update(&alice, &ns, "orders", "OnApproval", "5m").await,
        Verdict::Admitted,
        "leaving Always"
    );
    let verdict = update(&alice, &ns, "orders", "Always", "5m").await;
    assert!(verdict.refused_for(REFUSAL), "returning to Always: {verdict:?}");

    // BySeverity applies safe plans unapproved too: guarded into it, except from the looser Always.
    let verdict = create(&alice, &ns, &schema(&ns, "graded", "BySeverity")).await;
    assert!(
        verdict.refused_for("policy.apply: BySeverity applies plans"),
        "creating BySeverity: {verdict:?}"
    );
    let verdict = update(&alice, &ns, "orders", "BySeverity", "5m").await;
    assert!(
        verdict.refused_for(REFUSAL),
        "OnApproval to BySeverity: {verdict:?}"
    );
    assert_eq!(
        update(&admin, &ns, "orders", "Always", "5m").await,
        Verdict::Admitted,
        "the admin turns on Always again"
    );
    assert_eq!(
        update(&alice, &ns, "orders", "BySeverity", "5m").await,
        Verdict::Admitted,
        "Always to the stricter BySeverity"
    );
    assert_eq!(
        update(&alice, &ns, "orders", "BySeverity", "6m").await,
        Verdict::Admitted,
        "keeping BySeverity"
    );
    let verdict = update(&alice, &ns, "orders", "Always", "6m").await;
    assert!(
        verdict.refused_for(REFUSAL),
        "BySeverity to the looser Always: {verdict:?}"
    );

    // Each weakening must be caught by the case it breaks.
    let mut survivors = Vec::new();
    let message = docs[0]["spec"]["validations"][0]["messageExpression"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // The guard's one validation has a messageExpression and no message: "" matches it alone.
    let weakenings = [
        (Weakening::DropBinding, true),
        (Weakening::DropValidation(String::new()), true),
        (Weakening::DropMatchConditions, false),
    ];
    let on_approval = schema(&ns, "other", "OnApproval");
    // "orders" exists by now: the dry runs create another name.
    let always = schema(&ns, "fresh", "Always");
    for (how, always_admitted) in weakenings {
        set(&admin, &docs, &weakened(&docs, &guard, &how)).await;
        let caught = if always_admitted {
            eventually(|| async { create(&alice, &ns, &always).await == Verdict::Admitted }).await
        } else {
            eventually(|| async { create(&alice, &ns, &on_approval).await != Verdict::Admitted }).await
        };
        if !caught {
            survivors.push(format!("{how:?}"));
        }
        set(&admin, &docs, &docs).await;
        assert!(
            eventually(|| async {
                create(&alice, &ns, &always).await != Verdict::Admitted
                    && create(&alice, &ns, &on_approval).await == Verdict::Admitted
            })
            .await,
            "the restored guard never took effect"
        );
    }
    assert!(
        survivors.is_empty(),
        "weakenings no case caught: {survivors:?} ({message})"
    );

    remove(&admin, &docs).await;
    let _ = Api::<Namespace>::all(admin.clone())
        .delete(&ns, &DeleteParams::default())
        .await;
}
