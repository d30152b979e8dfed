//! The chart's PrometheusRule alerts on series this crate exports: every `ptah_*` metric name and
//! every label value an expression matches on appears in a manager's exposition. (That the rule
//! renders is tested by `crates/controllerstate/tests/chart.rs` with the real helm.)

use std::collections::BTreeSet;
use std::path::Path;

use ptah_telemetry::{Kind, Metrics, Operation, OperationResult, ReconcileOutcome};

/// The text of every `prometheusrule*.yaml` template of the chart.
fn templates() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../charts/ptah-operator/templates");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the chart's templates") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if name.starts_with("prometheusrule") && name.ends_with(".yaml") {
            out.push((name, std::fs::read_to_string(&path).expect("readable")));
        }
    }
    assert!(
        !out.is_empty(),
        "no prometheusrule template under {}",
        dir.display()
    );
    out
}

/// The `expr:` lines of a template.
fn expressions(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("expr:"))
        .map(str::trim)
        .collect()
}

/// Every `ptah_…` token of `expr`.
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("ptah_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        out.push(tail[..end].to_owned());
        rest = &tail[end..];
    }
    out
}

/// Every `label="v"` / `label=~"a|b"` matcher of `expr` on one of this crate's labels, as
/// `(label, value)` pairs.
fn matchers(expr: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for label in ["kind", "outcome", "operation", "result", "phase"] {
        for op in ["=~\"", "=\""] {
            let needle = format!("{label}{op}");
            let mut rest = expr;
            while let Some(at) = rest.find(&needle) {
                let before = rest[..at].chars().next_back();
                let tail = &rest[at + needle.len()..];
                let end = tail.find('"').expect("closed matcher");
                if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    for value in tail[..end].split('|') {
                        out.push((label.to_owned(), value.to_owned()));
                    }
                }
                rest = &tail[end..];
            }
        }
    }
    out
}

/// The exposition of a manager after every label value has been used once.
fn exposition() -> String {
    let metrics = Metrics::new();
    for &kind in Kind::ALL {
        for &outcome in ReconcileOutcome::ALL {
            metrics.reconciled(kind, outcome);
        }
        for &operation in Operation::of(kind) {
            for &result in OperationResult::ALL {
                metrics.operation_result(kind, operation, result);
            }
        }
    }
    metrics.encode().expect("encode")
}

/// The series names (before `{` or the value) of an exposition.
fn series_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_metric_an_alert_uses_is_exported() {
    let text = exposition();
    let names = series_names(&text);
    let mut used = BTreeSet::new();
    for (file, template) in templates() {
        let exprs = expressions(&template);
        assert!(!exprs.is_empty(), "{file} has no expr");
        for expr in exprs {
            let found = metric_names(expr);
            assert!(!found.is_empty(), "{file}: {expr} uses no ptah metric");
            for name in found {
                assert!(
                    names.contains(&name),
                    "{file}: {name} is not exported; exported: {names:?}"
                );
                used.insert(name);
            }
        }
    }
    for needed in [
        "ptah_operation_results_total",
        "ptah_leader",
        "ptah_oldest_unresolved_migration_run_timestamp_seconds",
    ] {
        assert!(used.contains(needed), "no alert uses {needed}");
    }
}

#[test]
fn every_label_value_an_alert_matches_is_exported() {
    let text = exposition();
    let mut checked = 0;
    for (file, template) in templates() {
        for expr in expressions(&template) {
            for (label, value) in matchers(expr) {
                let series = format!("{label}=\"{value}\"");
                assert!(
                    text.contains(&series),
                    "{file}: {series} is never exported ({expr})"
                );
                checked += 1;
            }
        }
    }
    // outcome="error", result="failed" and result=~"partial|unknown|refused".
    assert!(checked >= 5, "only {checked} matchers found");
}

#[test]
fn the_token_helpers_find_what_they_should() {
    let expr =
        r#"sum by (kind) (rate(ptah_a_total{kind="schema", result=~"x|y", namespace="n"}[5m])) / ptah_b"#;
    assert_eq!(metric_names(expr), ["ptah_a_total", "ptah_b"]);
    assert_eq!(
        matchers(expr),
        [
            ("kind".to_owned(), "schema".to_owned()),
            ("result".to_owned(), "x".to_owned()),
            ("result".to_owned(), "y".to_owned()),
        ]
    );
}
