//! The chart against the versions it is made for: its `kubeVersion` is the window of
//! `matrix/kubernetes.json` and helm refuses a Kubernetes outside it; Helm 3 and Helm 4, each at
//! the version the matrix pins (`cargo xtask k8s-bin --only helm,helm4`), render the same objects
//! and both lint the chart. A missing helm fails with the command that builds it.

mod support;

use std::collections::BTreeMap;

use ptah_apitests::e2e::require_built;
use ptah_testenv::k8s::{Component, Matrix};
use serde_json::Value;
use support::{chart, helms, lint_args, objects, run_with, template_args, workspace};

const CHART_YAML: &str = "charts/ptah-operator/Chart.yaml";

fn matrix() -> Matrix {
    Matrix::load(&workspace()).unwrap_or_else(|e| panic!("{e:#}"))
}

/// `1.35` → `(1, 35)`.
fn numbers(minor: &str) -> (u32, u32) {
    let (major, minor) = minor.split_once('.').expect("<major>.<minor>");
    (major.parse().expect("major"), minor.parse().expect("minor"))
}

#[test]
fn the_chart_kube_version_is_the_window_of_the_matrix() {
    let matrix = matrix();
    let expected = matrix.chart_kube_version().unwrap_or_else(|e| panic!("{e:#}"));
    let text = std::fs::read_to_string(chart().join("Chart.yaml")).expect("Chart.yaml");
    let metadata: Value = serde_saphyr::from_str(&text).expect("Chart.yaml parses");
    let found = metadata["kubeVersion"].as_str();
    let minors: Vec<&str> = matrix.minors.iter().map(|m| m.minor.as_str()).collect();
    assert_eq!(
        found,
        Some(expected.as_str()),
        "{CHART_YAML} has kubeVersion {found:?}, but matrix/kubernetes.json lists the minors {}: \
         write `kubeVersion: \"{expected}\"` there",
        minors.join(", ")
    );
}

#[test]
fn each_helm_refuses_a_kubernetes_outside_the_window_and_accepts_every_matrix_release() {
    let matrix = matrix();
    let oldest = matrix
        .minors
        .iter()
        .map(|m| numbers(&m.minor))
        .min()
        .expect("minors");
    let newest = matrix
        .minors
        .iter()
        .map(|m| numbers(&m.minor))
        .max()
        .expect("minors");
    let below = format!("{}.{}.0", oldest.0, oldest.1 - 1);
    let above = format!("{}.{}.0", newest.0, newest.1 + 1);
    let first = format!("{}.{}.0", oldest.0, oldest.1);
    let mut accepted = vec![first];
    for row in &matrix.minors {
        accepted.push(row.version.clone());
        // A vendor build of a supported release (k3s, as kind's and k3d's nodes report it).
        accepted.push(format!("{}+k3s1", row.version));
    }
    for (label, program, build) in helms() {
        for refused in [&below, &above] {
            let Err(err) = run_with(&program, build, &template_args(&["--kube-version", refused])) else {
                panic!("{label} renders the chart for Kubernetes {refused}");
            };
            assert!(
                err.contains("chart requires kubeVersion") && err.contains(refused),
                "{label}, Kubernetes {refused}: {err}"
            );
        }
        for version in &accepted {
            run_with(&program, build, &template_args(&["--kube-version", version]))
                .unwrap_or_else(|e| panic!("{label} refuses Kubernetes {version}: {e}"));
        }
    }
}

/// Rendered objects by (apiVersion, kind, namespace, name), each key once.
fn by_identity(label: &str, docs: Vec<Value>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for doc in docs {
        let key = format!(
            "{} {} {}/{}",
            doc["apiVersion"].as_str().unwrap_or("?"),
            doc["kind"].as_str().unwrap_or("?"),
            doc["metadata"]["namespace"].as_str().unwrap_or(""),
            doc["metadata"]["name"].as_str().unwrap_or("?"),
        );
        if let Some(previous) = out.insert(key.clone(), doc) {
            panic!("{label} renders {key} twice; the first: {previous}");
        }
    }
    out
}

#[test]
fn helm3_and_helm4_render_the_same_objects() {
    let mut renders = Vec::new();
    for (label, program, build) in helms() {
        let text = run_with(&program, build, &template_args(&[])).unwrap_or_else(|e| {
            panic!(
                "{label} template: {e}\n(without --kube-version helm checks kubeVersion against \
                 the Kubernetes its client-go goes with; `{build}` stamps it)"
            )
        });
        // Compared as parsed objects: what the two majors may print differently is only text
        // that carries no object (the `# Source:` comments, blank lines between documents, which
        // Helm 4 adds) and the order of documents (compared as a set, keyed by identity).
        renders.push((label, by_identity(label, objects(&text))));
    }
    let [(label3, helm3), (label4, helm4)] = <[_; 2]>::try_from(renders).expect("two renders");
    assert!(!helm3.is_empty(), "{label3} rendered no object");
    let only3: Vec<&String> = helm3.keys().filter(|k| !helm4.contains_key(*k)).collect();
    let only4: Vec<&String> = helm4.keys().filter(|k| !helm3.contains_key(*k)).collect();
    assert!(
        only3.is_empty() && only4.is_empty(),
        "only {label3} renders {only3:?}; only {label4} renders {only4:?}"
    );
    for (key, object) in &helm3 {
        assert_eq!(
            object, &helm4[key],
            "{key} differs between {label3} (left) and {label4}"
        );
    }
}

#[test]
fn helm3_and_helm4_both_lint_the_chart_strictly() {
    for (label, program, build) in helms() {
        let out = run_with(&program, build, &lint_args(&["--strict"]))
            .unwrap_or_else(|e| panic!("{label} lint --strict: {e}"));
        assert!(
            out.contains("1 chart(s) linted, 0 chart(s) failed"),
            "{label}: {out}"
        );
        assert!(
            !out.contains("[ERROR]") && !out.contains("[WARNING]"),
            "{label}: {out}"
        );
    }
}

#[test]
fn a_missing_helm_fails_with_the_command_that_builds_it() {
    let nowhere = workspace().join("target/no-such-dir/helm");
    for (component, command) in [
        (Component::Helm, "`cargo xtask k8s-bin --only helm`"),
        (Component::Helm4, "`cargo xtask k8s-bin --only helm4`"),
    ] {
        let payload = std::panic::catch_unwind(|| require_built(component, nowhere.clone()))
            .expect_err("a missing program panics");
        let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains(command), "{message}");
        assert!(message.contains(&nowhere.display().to_string()), "{message}");
    }
}
