//! The manager's RBAC in the Helm chart, rendered by the real helm (`cargo xtask k8s-bin --only helm`).
//!
//! Every Role and ClusterRole the chart renders is checked rule by rule: nothing grants Secrets,
//! `pods/exec`, `pods/attach`, escalation verbs or a wildcard. A missing helm fails the test with the
//! command that builds it: a gap here is never green.

mod support;

use ptah_controllerstate::STATE_CONFIGMAP;
use serde_json::{Value, json};
use support::{RELEASE_NAMESPACE, component, forbidden_grants, grants, named, one, render, roles, verbs};

/// The manager's Role in the coordination namespace.
const COORDINATION_ROLE: &str = "ptah-ptah-operator-manager-coordination";

/// The manager's objects (component `manager`) of a render: the cert rotator's Secret grant and
/// the people's roles are checked in `chart.rs`.
fn objects(text: &str) -> Vec<Value> {
    component(&support::objects(text), "manager")
}

#[test]
fn no_rendered_role_grants_secrets_exec_attach_or_wildcards() {
    let docs = objects(&render(&[]).expect("chart renders"));
    let roles = roles(&docs);
    assert_eq!(
        roles.len(),
        3,
        "one ClusterRole, the coordination Role and the result delivery's Role"
    );
    let found: Vec<String> = roles.iter().flat_map(|r| forbidden_grants(r)).collect();
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn the_check_is_not_vacuous() {
    let bad = json!({
        "metadata": {"name": "bad"},
        "rules": [
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["pods/exec", "pods/attach"], "verbs": ["create"]},
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"], "verbs": ["escalate"]},
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},
        ]
    });
    assert_eq!(forbidden_grants(&bad).len(), 9, "{:#?}", forbidden_grants(&bad));
}

#[test]
fn the_manager_gets_what_its_reconcilers_need_and_no_more() {
    let docs = objects(&render(&[]).expect("chart renders"));
    let cluster = one(&docs, "ClusterRole");
    let ptah = "operator.ptah.run";
    assert_eq!(
        verbs(cluster, ptah, "ptahschemas"),
        ["get", "list", "patch", "update", "watch"]
    );
    assert_eq!(
        verbs(cluster, ptah, "ptahschemas/status"),
        ["get", "patch", "update"]
    );
    assert_eq!(verbs(cluster, ptah, "ptahschemas/finalizers"), ["update"]);
    assert_eq!(
        verbs(cluster, ptah, "ptahschemaplans"),
        ["create", "get", "list", "watch"]
    );
    assert_eq!(verbs(cluster, ptah, "ptahschemaplans/status"), ["get", "patch"]);
    assert_eq!(verbs(cluster, ptah, "ptahschemaplanchunks"), ["create", "get"]);
    assert_eq!(
        verbs(cluster, ptah, "ptahschemaapprovals"),
        ["get", "list", "watch"]
    );
    assert_eq!(
        verbs(cluster, ptah, "ptahschemaapprovals/status"),
        ["get", "patch"]
    );
    // The migration family: the same shape, with plans that hold no chunks and two decision kinds.
    assert_eq!(
        verbs(cluster, ptah, "ptahmigrations"),
        ["get", "list", "patch", "update", "watch"]
    );
    assert_eq!(
        verbs(cluster, ptah, "ptahmigrations/status"),
        ["get", "patch", "update"]
    );
    assert_eq!(verbs(cluster, ptah, "ptahmigrations/finalizers"), ["update"]);
    assert_eq!(
        verbs(cluster, ptah, "ptahmigrationplans"),
        ["create", "get", "list", "watch"]
    );
    for decision in ["ptahmigrationapprovals", "ptahmigrationrunacknowledgments"] {
        assert_eq!(
            verbs(cluster, ptah, decision),
            ["get", "list", "watch"],
            "{decision}"
        );
        assert_eq!(
            verbs(cluster, ptah, &format!("{decision}/status")),
            ["get", "patch"],
            "{decision}"
        );
    }
    assert_eq!(verbs(cluster, ptah, "ptahrealms"), ["get", "list", "watch"]);
    assert_eq!(
        verbs(cluster, "batch", "jobs"),
        ["create", "delete", "get", "list", "patch", "watch"]
    );
    assert_eq!(verbs(cluster, "", "pods"), ["get", "list", "watch"]);
    assert_eq!(verbs(cluster, "", "pods/log"), ["get"]);
    assert_eq!(verbs(cluster, "", "events"), ["create", "patch"]);
    assert_eq!(verbs(cluster, "events.k8s.io", "events"), ["create", "patch"]);
    // No cluster-wide ConfigMap update, and Leases only in the coordination namespace.
    assert_eq!(
        verbs(cluster, "", "configmaps"),
        ["create", "get", "list", "watch"]
    );
    assert!(verbs(cluster, "coordination.k8s.io", "leases").is_empty());

    // Durable result delivery (the default): the manager reads its own Service, that one only.
    let results = named(&docs, "Role", "ptah-ptah-operator-manager-results");
    assert_eq!(results["metadata"]["namespace"], RELEASE_NAMESPACE);
    assert_eq!(
        results["rules"],
        json!([{"apiGroups": [""], "resources": ["services"], "resourceNames": ["ptah-operator-webhook"], "verbs": ["get"]}])
    );
    let role = named(&docs, "Role", COORDINATION_ROLE);
    assert_eq!(
        role["metadata"]["namespace"], RELEASE_NAMESPACE,
        "coordination defaults to the release namespace"
    );
    assert_eq!(
        verbs(role, "coordination.k8s.io", "leases"),
        ["create", "get", "list", "patch", "update", "watch"]
    );
    assert_eq!(
        grants(role, "", "configmaps"),
        [("update".to_owned(), vec![STATE_CONFIGMAP.to_owned()])],
        "the chart's state ConfigMap name must match crates/controllerstate"
    );
}

#[test]
fn bindings_name_the_manager_service_account_and_follow_the_coordination_namespace() {
    let docs = objects(
        &render(&[
            "--set",
            "coordinationNamespace=ptah-coordination",
            "--set",
            "resultDelivery.enabled=false",
        ])
        .expect("renders"),
    );
    let sa = one(&docs, "ServiceAccount");
    let sa_name = sa["metadata"]["name"].as_str().expect("sa name");
    for kind in ["ClusterRoleBinding", "RoleBinding"] {
        let binding = one(&docs, kind);
        assert_eq!(
            binding["subjects"],
            json!([{"kind": "ServiceAccount", "name": sa_name, "namespace": RELEASE_NAMESPACE}]),
            "{kind}"
        );
    }
    assert_eq!(one(&docs, "Role")["metadata"]["namespace"], "ptah-coordination");
    assert_eq!(
        one(&docs, "RoleBinding")["metadata"]["namespace"],
        "ptah-coordination"
    );
    assert_eq!(
        one(&docs, "RoleBinding")["roleRef"]["name"],
        one(&docs, "Role")["metadata"]["name"]
    );
}

#[test]
fn the_chart_refuses_unpinned_executors_missing_images_and_shared_namespaces() {
    let err = render(&["--set", "image.executor=registry.local/ptah:0.9.0"]).expect_err("tag");
    assert!(err.contains("must be pinned by digest"), "{err}");
    let err = render(&["--set", "image.manager="]).expect_err("no manager image");
    assert!(err.contains("image.manager is required"), "{err}");
    let err = render(&["--set", "coordinationNamespace=kube-system"]).expect_err("kube-*");
    assert!(err.contains("shared infrastructure"), "{err}");
}

#[test]
fn listed_namespaces_alone_let_the_manager_create_jobs_and_read_logs() {
    let docs = objects(&render(&["--set", "rbac.namespaces={team-a,team-b}"]).expect("renders"));
    let cluster = one(&docs, "ClusterRole");
    assert_eq!(verbs(cluster, "batch", "jobs"), ["get", "list", "watch"]);
    assert_eq!(verbs(cluster, "", "pods"), ["get", "list", "watch"]);
    assert!(
        verbs(cluster, "", "pods/log").is_empty(),
        "no cluster-wide log reading"
    );
    let operations: Vec<&Value> = docs
        .iter()
        .filter(|d| {
            d["kind"] == "Role"
                && d["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("-manager-operations"))
        })
        .collect();
    let namespaces: Vec<&str> = operations
        .iter()
        .filter_map(|r| r["metadata"]["namespace"].as_str())
        .collect();
    assert_eq!(namespaces, ["team-a", "team-b"]);
    for role in &operations {
        assert_eq!(verbs(role, "batch", "jobs"), ["create", "delete", "patch"]);
        assert_eq!(verbs(role, "", "pods/log"), ["get"]);
        let ns = role["metadata"]["namespace"].clone();
        let binding = docs
            .iter()
            .find(|d| {
                d["kind"] == "RoleBinding"
                    && d["metadata"]["namespace"] == ns
                    && d["roleRef"]["name"] == role["metadata"]["name"]
            })
            .expect("a binding beside each role");
        assert_eq!(
            binding["subjects"][0]["name"],
            one(&docs, "ServiceAccount")["metadata"]["name"]
        );
    }
    let err = render(&["--set", "rbac.namespaces={Not_A_Namespace}"]).expect_err("invalid name");
    assert!(err.contains("/rbac/namespaces/0"), "{err}");
}
