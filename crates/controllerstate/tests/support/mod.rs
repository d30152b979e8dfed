//! Shared by the chart tests (`rbac.rs`, `chart.rs`): the cached helm, rendering the chart with its
//! required values, and reading the rendered objects and RBAC rules.
//!
//! Each test file is its own crate and uses a different subset of these.
#![allow(dead_code)]

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;

pub const BUILD_HELM: &str = "cargo xtask k8s-bin --only helm";
pub const BUILD_HELM4: &str = "cargo xtask k8s-bin --only helm4";
pub const RELEASE: &str = "ptah";
pub const RELEASE_NAMESPACE: &str = "ptah-system";
/// The five image values the chart requires.
pub const IMAGE_VALUES: [&str; 5] = [
    "image.manager",
    "image.executor",
    "image.runner",
    "image.certRotator",
    "image.crdManager",
];

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn chart() -> PathBuf {
    workspace().join("charts/ptah-operator")
}

/// The cached Helm 3 at the pinned version (`cargo xtask k8s-bin --only helm`), found the way
/// every e2e fixture finds it.
pub fn helm() -> PathBuf {
    ptah_apitests::e2e::helm()
}

/// The cached Helm 4 at the pinned version (`cargo xtask k8s-bin --only helm4`).
pub fn helm4() -> PathBuf {
    ptah_apitests::e2e::helm4()
}

/// Both helm majors the chart supports: (label, program, the command that builds it).
pub fn helms() -> [(&'static str, PathBuf, &'static str); 2] {
    [("helm 3", helm(), BUILD_HELM), ("helm 4", helm4(), BUILD_HELM4)]
}

/// A digest-pinned image reference for `component`.
pub fn pinned(component: &str) -> String {
    format!("registry.local/{component}@sha256:{}", "a".repeat(64))
}

/// `--set` arguments for every required image, digest-pinned.
pub fn image_args() -> Vec<String> {
    let mut args = Vec::new();
    for (value, component) in IMAGE_VALUES.iter().zip([
        "ptah-manager",
        "ptah",
        "ptah-runner",
        "ptah-cert-rotator",
        "ptah-crd-manager",
    ]) {
        args.push("--set".to_owned());
        args.push(format!("{value}={}", pinned(component)));
    }
    args
}

/// Runs helm with `args`; Ok(stdout) on success, Err(stdout and stderr) on failure.
pub fn run_helm(args: &[String]) -> Result<String, String> {
    run_with(&helm(), BUILD_HELM, args)
}

/// Runs `program` (a helm that `build` builds) with `args`, as [`run_helm`].
pub fn run_with(program: &Path, build: &str, args: &[String]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}; build it with `{build}`", program.display()));
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)))
    }
}

/// `helm template` of the chart with the required images and `extra` (later `--set`s win).
pub fn render(extra: &[&str]) -> Result<String, String> {
    run_helm(&template_args(extra))
}

/// The arguments of `helm template` for [`render`].
pub fn template_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "template".into(),
        RELEASE.into(),
        chart().to_str().expect("utf-8 path").into(),
        "--namespace".into(),
        RELEASE_NAMESPACE.into(),
    ];
    args.extend(image_args());
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The arguments of `helm lint` of the chart with the required images and `extra`.
pub fn lint_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "lint".into(),
        chart().to_str().expect("utf-8 path").into(),
        "--namespace".into(),
        RELEASE_NAMESPACE.into(),
    ];
    args.extend(image_args());
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// Every rendered object, as JSON.
pub fn objects(text: &str) -> Vec<Value> {
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

/// The objects of one `app.kubernetes.io/component`.
pub fn component(docs: &[Value], name: &str) -> Vec<Value> {
    docs.iter()
        .filter(|d| d["metadata"]["labels"]["app.kubernetes.io/component"] == name)
        .cloned()
        .collect()
}

pub fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Every forbidden grant in `role`, described; empty when the role is clean.
pub fn forbidden_grants(role: &Value) -> Vec<String> {
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

pub fn roles(docs: &[Value]) -> Vec<&Value> {
    docs.iter()
        .filter(|d| matches!(d["kind"].as_str(), Some("Role" | "ClusterRole")))
        .collect()
}

pub fn one<'d>(docs: &'d [Value], kind: &str) -> &'d Value {
    let found: Vec<&Value> = docs.iter().filter(|d| d["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "one {kind}");
    found[0]
}

/// The one object of `kind` named `name`.
pub fn named<'d>(docs: &'d [Value], kind: &str, name: &str) -> &'d Value {
    let found: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "one {kind} {name}");
    found[0]
}

/// The verbs `role` grants on `group`/`resource`, with the resourceNames they are limited to.
pub fn grants(role: &Value, group: &str, resource: &str) -> Vec<(String, Vec<String>)> {
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

pub fn verbs(role: &Value, group: &str, resource: &str) -> Vec<String> {
    grants(role, group, resource)
        .into_iter()
        .map(|(v, _)| v)
        .collect()
}
