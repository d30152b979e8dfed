//! T3: the status guard and the spec guard on the real kube-apiserver
//! (`cargo xtask cluster up --tier api`).
//!
//! The status of a ptah kind is written by the manager's ServiceAccount, or by a member of
//! `statusGuard.breakGlassGroups`; anyone else is refused even with RBAC to write it. The manager
//! patches a PtahSchema or PtahMigration (its finalizer) but never changes its spec. Then each
//! policy is weakened (binding dropped, validation dropped, match widened) and the case that
//! catches each weakening must flip. The chart refuses break-glass groups that name everyone.

use std::collections::BTreeSet;

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
        Verdict, Weakening, eventually, image_sets, impersonating, policy, remove, render, set, try_render,
        weakened,
    },
    client::{admin_client, install_crds, namespace},
};
use serde_json::{Value, json};

const SELECTOR_LABEL: &str = "ptah-status-guard-test";
const ALICE: &str = "alice";
const BOB: &str = "bob";
/// The chart's default break-glass group.
const BREAK_GLASS: &str = "ptah-operator:break-glass";
const STATUS_REFUSAL: &str = "is written by the manager alone";
const SPEC_REFUSAL: &str = "the manager never changes the spec";

fn resource(kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk("operator.ptah.run", "v1alpha1", kind))
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

fn named<'a>(docs: &'a [Value], suffix: &str) -> Vec<&'a Value> {
    docs.iter()
        .filter(|d| {
            d["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .ends_with(suffix)
        })
        .collect()
}

#[test]
fn the_chart_refuses_break_glass_groups_that_name_everyone() {
    for group in [
        "system:authenticated",
        "system:unauthenticated",
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
    ] {
        let mut sets = sets("guard");
        sets.push(format!("statusGuard.breakGlassGroups={{{BREAK_GLASS},{group}}}"));
        let err = try_render("guard", "guard", &sets).expect_err(group);
        assert!(
            err.contains(&format!("may not hold \"{group}\"")),
            "{group}: {err}"
        );
    }
    let docs = render("guard", "guard", &sets("guard"));
    let guard = policy(&docs, "guard-ptah-operator-status-guard");
    let expression = guard["spec"]["validations"][0]["expression"]
        .as_str()
        .unwrap_or_default();
    assert!(
        expression.contains(&format!("[\"{BREAK_GLASS}\"]")),
        "the default break-glass group: {expression}"
    );
}

/// Every kind with a status subresource, as `<plural>/status`, is guarded; a kind added to
/// `crates/api` without the chart following fails here.
#[test]
fn the_status_guard_covers_every_kind_with_a_status() {
    let crds = ptah_api::crds().expect("CRDs");
    let with_status: BTreeSet<String> = crds
        .iter()
        .filter(|crd| {
            crd.spec
                .versions
                .iter()
                .any(|v| v.subresources.as_ref().is_some_and(|s| s.status.is_some()))
        })
        .map(|crd| format!("{}/status", crd.spec.names.plural))
        .collect();
    assert!(with_status.len() >= 2, "{with_status:?}");
    let docs = render("guard", "guard", &sets("guard"));
    let guard = policy(&docs, "guard-ptah-operator-status-guard");
    let rules = guard["spec"]["matchConstraints"]["resourceRules"]
        .as_array()
        .expect("resource rules");
    let guarded: BTreeSet<String> = rules
        .iter()
        .flat_map(|r| r["resources"].as_array().cloned().unwrap_or_default())
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    assert_eq!(guarded, with_status);
    assert!(
        rules
            .iter()
            .all(|r| r["apiGroups"] == json!(["operator.ptah.run"]) && r["operations"] == json!(["UPDATE"]))
    );
}

/// Lets alice, bob and the manager write PtahSchemas, PtahMigrations and their status in `ns`:
/// what refuses them below is the policy, never RBAC.
async fn grant_writers(admin: &Client, ns: &str, manager_sa: &str) {
    let params = PostParams::default();
    let role = Role {
        metadata: kube::api::ObjectMeta {
            name: Some("writers".to_owned()),
            ..Default::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["operator.ptah.run".to_owned()]),
            resources: Some(
                [
                    "ptahschemas",
                    "ptahschemas/status",
                    "ptahmigrations",
                    "ptahmigrations/status",
                ]
                .map(str::to_owned)
                .to_vec(),
            ),
            verbs: ["get", "patch", "update"].map(str::to_owned).to_vec(),
            ..PolicyRule::default()
        }]),
    };
    Api::<Role>::namespaced(admin.clone(), ns)
        .create(&params, &role)
        .await
        .expect("create role");
    let user = |name: &str| Subject {
        kind: "User".to_owned(),
        name: name.to_owned(),
        api_group: Some("rbac.authorization.k8s.io".to_owned()),
        ..Subject::default()
    };
    let binding = RoleBinding {
        metadata: kube::api::ObjectMeta {
            name: Some("writers".to_owned()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: "writers".to_owned(),
        },
        subjects: Some(vec![
            user(ALICE),
            user(BOB),
            Subject {
                kind: "ServiceAccount".to_owned(),
                name: manager_sa.to_owned(),
                namespace: Some(ns.to_owned()),
                ..Subject::default()
            },
        ]),
    };
    Api::<RoleBinding>::namespaced(admin.clone(), ns)
        .create(&params, &binding)
        .await
        .expect("create role binding");
}

async fn create_owners(admin: &Client, ns: &str) {
    let target = json!({
        "engine": "PostgreSQL",
        "coordinationKey": "orders-primary",
        "urlFrom": {"name": "orders-db", "key": "url"},
    });
    let source = json!({
        "ociRef": "oci://registry.example.com/shop/orders:v1",
        "verificationPolicyFrom": {"name": "policy", "key": "policy.yaml"},
    });
    for (kind, name, spec) in [
        (
            "PtahSchema",
            "orders",
            json!({"target": target, "desired": source}),
        ),
        (
            "PtahMigration",
            "billing",
            json!({"target": target, "artifact": source}),
        ),
    ] {
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "operator.ptah.run/v1alpha1", "kind": kind,
            "metadata": {"name": name, "namespace": ns}, "spec": spec,
        }))
        .expect("object");
        Api::<DynamicObject>::namespaced_with(admin.clone(), ns, &resource(kind))
            .create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("create {kind} {name}: {e}"));
    }
}

fn dry_run() -> PatchParams {
    PatchParams {
        dry_run: true,
        ..PatchParams::default()
    }
}

/// Writes the status of `kind` `name` as `client` (a dry run through admission).
async fn write_status(client: &Client, ns: &str, kind: &str, name: &str) -> Verdict {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource(kind));
    let patch = json!({"status": {"observedGeneration": 1}});
    Verdict::of(api.patch_status(name, &dry_run(), &Patch::Merge(&patch)).await)
}

/// Patches the PtahSchema `orders` as `client` (a dry run through admission).
async fn patch_schema(client: &Client, ns: &str, patch: Value) -> Verdict {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource("PtahSchema"));
    Verdict::of(api.patch("orders", &dry_run(), &Patch::Merge(&patch)).await)
}

fn spec_change() -> Value {
    json!({"spec": {"interval": "7m"}})
}

fn finalizer() -> Value {
    json!({"metadata": {"finalizers": ["operator.ptah.run/finalizer"]}})
}

#[tokio::test]
async fn only_the_manager_writes_status_and_it_never_changes_a_spec() {
    let admin = admin_client().await;
    install_crds(&admin).await;
    let ns = namespace(&admin, "status-guard").await;
    let label = json!({"metadata": {"labels": {SELECTOR_LABEL: ns}}});
    Api::<Namespace>::all(admin.clone())
        .patch(&ns, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label the namespace");
    let manager_sa = format!("{ns}-ptah-operator-manager");
    grant_writers(&admin, &ns, &manager_sa).await;
    create_owners(&admin, &ns).await;
    let alice = impersonating(ALICE, &["system:authenticated", "team-orders"]).await;
    let bob = impersonating(BOB, &["system:authenticated", BREAK_GLASS]).await;
    let manager = impersonating(
        &format!("system:serviceaccount:{ns}:{manager_sa}"),
        &[
            "system:serviceaccounts",
            &format!("system:serviceaccounts:{ns}"),
            "system:authenticated",
        ],
    )
    .await;
    let rendered = render(&ns, &ns, &sets(&ns));
    let mut docs: Vec<Value> = named(&rendered, "-status-guard").into_iter().cloned().collect();
    docs.extend(named(&rendered, "-spec-guard").into_iter().cloned());
    assert_eq!(docs.len(), 4, "the two guards and their bindings");
    let status_guard = format!("{ns}-ptah-operator-status-guard");
    let spec_guard = format!("{ns}-ptah-operator-spec-guard");
    set(&admin, &docs, &docs).await;

    assert!(
        eventually(|| async { write_status(&alice, &ns, "PtahSchema", "orders").await != Verdict::Admitted })
            .await,
        "the status guard never took effect"
    );
    for (kind, name) in [("PtahSchema", "orders"), ("PtahMigration", "billing")] {
        let verdict = write_status(&alice, &ns, kind, name).await;
        assert!(verdict.refused_for(STATUS_REFUSAL), "{kind}: {verdict:?}");
        assert!(
            verdict.refused_for(ALICE) && verdict.refused_for(BREAK_GLASS),
            "the refusal names the requester and the groups: {verdict:?}"
        );
        assert_eq!(
            write_status(&manager, &ns, kind, name).await,
            Verdict::Admitted,
            "{kind} as the manager"
        );
        assert_eq!(
            write_status(&bob, &ns, kind, name).await,
            Verdict::Admitted,
            "{kind} as a break-glass member"
        );
    }
    assert!(
        eventually(|| async { patch_schema(&manager, &ns, spec_change()).await != Verdict::Admitted }).await,
        "the spec guard never took effect"
    );
    let verdict = patch_schema(&manager, &ns, spec_change()).await;
    assert!(verdict.refused_for(SPEC_REFUSAL), "{verdict:?}");
    assert_eq!(
        patch_schema(&manager, &ns, finalizer()).await,
        Verdict::Admitted,
        "the manager's finalizer"
    );
    assert_eq!(
        patch_schema(&alice, &ns, spec_change()).await,
        Verdict::Admitted,
        "an author's spec change"
    );

    // Each weakening must be caught by the case it breaks.
    let mut survivors = Vec::new();
    // The status guard's one validation has a messageExpression and no message: "" matches it.
    let weakenings = [
        (&status_guard, Weakening::DropBinding),
        (&status_guard, Weakening::DropValidation(String::new())),
        (&status_guard, Weakening::DropMatchConditions),
        (&spec_guard, Weakening::DropBinding),
        (&spec_guard, Weakening::DropValidation("never changes".to_owned())),
        (&spec_guard, Weakening::DropMatchConditions),
    ];
    for (name, how) in weakenings {
        set(&admin, &docs, &weakened(&docs, name, &how)).await;
        let caught = match (name == &status_guard, &how) {
            // Matching everyone, the guard refuses the manager too; matching nobody, alice passes.
            (true, Weakening::DropMatchConditions) => {
                eventually(|| async {
                    write_status(&manager, &ns, "PtahSchema", "orders").await != Verdict::Admitted
                })
                .await
            }
            (true, _) => {
                eventually(|| async {
                    write_status(&alice, &ns, "PtahSchema", "orders").await == Verdict::Admitted
                })
                .await
            }
            (false, Weakening::DropMatchConditions) => {
                eventually(|| async { patch_schema(&alice, &ns, spec_change()).await != Verdict::Admitted })
                    .await
            }
            (false, _) => {
                eventually(|| async { patch_schema(&manager, &ns, spec_change()).await == Verdict::Admitted })
                    .await
            }
        };
        if !caught {
            survivors.push(format!("{name}: {how:?}"));
        }
        set(&admin, &docs, &docs).await;
        assert!(
            eventually(|| async {
                write_status(&alice, &ns, "PtahSchema", "orders").await != Verdict::Admitted
                    && write_status(&manager, &ns, "PtahSchema", "orders").await == Verdict::Admitted
                    && patch_schema(&manager, &ns, spec_change()).await != Verdict::Admitted
                    && patch_schema(&alice, &ns, spec_change()).await == Verdict::Admitted
            })
            .await,
            "the restored guards never took effect"
        );
    }
    assert!(survivors.is_empty(), "weakenings no case caught: {survivors:?}");

    remove(&admin, &docs).await;
    let _ = Api::<Namespace>::all(admin.clone())
        .delete(&ns, &DeleteParams::default())
        .await;
}
