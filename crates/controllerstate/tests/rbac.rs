//! The manager's RBAC in the Helm chart, rendered by the real helm (`cargo xtask k8s-bin --only helm`).
//!
//! Every Role and ClusterRole the chart renders is checked rule by rule: nothing grants Secrets,
//! `pods/exec`, `pods/attach`, escalation verbs or a wildcard. A missing helm fails the test with the
//! command that builds it: a gap here is never green.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use ptah_controllerstate::STATE_CONFIGMAP;
use serde_json::{Value, json};

const BUILD_HELM: &str = "cargo xtask k8s-bin --only helm";
const RELEASE_NAMESPACE: &str = "ptah-system";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The cache `cargo xtask k8s-bin` writes to (xtask/src/k8s/mod.rs `cache_root`).
fn cache_root() -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var("PTAH_K8S_CACHE") {
        return dir;
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .expect("HOME is set")
        .join("ptah-operator")
        .join("k8s")
}

/// The newest cached `helm-<version>/helm`.
fn helm() -> PathBuf {
    let root = cache_root();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("helm-"))
        .map(|e| e.path().join("helm"))
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!(
            "no helm under {}/helm-*/; build it with `{BUILD_HELM}`",
            root.display()
        )
    })
}

fn pinned() -> String {
    format!("registry.local/ptah@sha256:{}", "a".repeat(64))
}

/// `helm template` of the chart; Ok(stdout) or Err(stderr).
fn render(extra: &[&str]) -> Result<String, String> {
    let chart = workspace().join("charts/ptah-operator");
    let executor = format!("image.executor={}", pinned());
    let mut args = vec![
        "template",
        "ptah",
        chart.to_str().expect("utf-8 path"),
        "--namespace",
        RELEASE_NAMESPACE,
        "--set",
        "image.manager=registry.local/ptah-manager:0.1.0",
        "--set",
        "image.runner=registry.local/ptah-runner:0.1.0",
        "--set",
        &executor,
    ];
    args.extend_from_slice(extra);
    let out = Command::new(helm())
        .args(&args)
        .output()
        .unwrap_or_else(|e| panic!("run helm: {e}; build it with `{BUILD_HELM}`"));
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).expect("utf-8"))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Every rendered object, as JSON.
fn objects(text: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    let mut current = String::new();
    for line in text.lines().chain(std::iter::once("---")) {
        if line == "---" {
            let doc: Value = serde_saphyr::from_str(&current)
                .unwrap_or_else(|e| panic!("rendered YAML does not parse: {e}\n{current}"));
            if !doc.is_null() {
                docs.push(doc);
            }
            current.clear();
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    docs
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Every forbidden grant in `role`, described; empty when the role is clean.
fn forbidden_grants(role: &Value) -> Vec<String> {
    let name = role["metadata"]["name"].as_str().unwrap_or("?");
    let mut found = Vec::new();
    for (i, rule) in role["rules"].as_array().into_iter().flatten().enumerate() {
        let mut flag = |what: String| found.push(format!("{name} rule {i}: {what}"));
        for resource in strings(&rule["resources"]) {
            if resource.contains('*') {
                flag(format!("wildcard resource {resource:?}"));
            }
            let base = resource.split('/').next().unwrap_or(resource);
            if base == "secrets" {
                flag(format!("Secret access {resource:?}"));
            }
            if [
                "pods/exec",
                "pods/attach",
                "pods/portforward",
                "nodes/proxy",
                "services/proxy",
            ]
            .contains(&resource)
            {
                flag(format!("{resource} reaches into workloads"));
            }
        }
        for verb in strings(&rule["verbs"]) {
            if verb.contains('*') {
                flag("wildcard verb".into());
            }
            if ["escalate", "bind", "impersonate"].contains(&verb) {
                flag(format!("privilege verb {verb}"));
            }
        }
        if strings(&rule["apiGroups"]).iter().any(|g| g.contains('*')) {
            flag("wildcard apiGroup".into());
        }
        if rule.get("nonResourceURLs").is_some() {
            flag("nonResourceURLs".into());
        }
        if rule.get("resources").is_none() {
            flag("rule without resources".into());
        }
    }
    found
}

fn roles(docs: &[Value]) -> Vec<&Value> {
    docs.iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("Role" | "ClusterRole")))
        .collect()
}

fn one<'d>(docs: &'d [Value], kind: &str) -> &'d Value {
    let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "one {kind}");
    found[0]
}

/// The verbs `role` grants on `group`/`resource`, with the resourceNames they are limited to.
fn grants(role: &Value, group: &str, resource: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for rule in role["rules"].as_array().into_iter().flatten() {
        if strings(&rule["apiGroups"]).contains(&group) && strings(&rule["resources"]).contains(&resource) {
            let names: Vec<String> = strings(&rule["resourceNames"])
                .into_iter()
                .map(str::to_owned)
                .collect();
            for verb in strings(&rule["verbs"]) {
                out.push((verb.to_owned(), names.clone()));
            }
        }
    }
    out.sort();
    out
}

fn verbs(role: &Value, group: &str, resource: &str) -> Vec<String> {
    grants(role, group, resource)
        .into_iter()
        .map(|(v, _)| v)
        .collect()
}

#[test]
fn no_rendered_role_grants_secrets_exec_attach_or_wildcards() {
    let docs = objects(&render(&[]).expect("chart renders"));
    let roles = roles(&docs);
    assert_eq!(roles.len(), 2, "one ClusterRole and one Role");
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

    let role = one(&docs, "Role");
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
    let docs = objects(&render(&["--set", "coordinationNamespace=ptah-coordination"]).expect("renders"));
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
