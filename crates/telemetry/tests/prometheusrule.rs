//! The chart's PrometheusRule alerts on series this crate exports: every metric name and every
//! label value an expression matches on appears in a manager's exposition. (That the rule renders
//! is tested by `crates/controllerstate/tests/chart.rs` with the real helm.)

mod support;

use std::collections::BTreeSet;

use support::{exposition, metric_names, problems, rule_expressions, rule_templates, without_templates};

#[test]
fn every_metric_and_label_value_an_alert_uses_is_exported() {
    let text = exposition();
    let mut exprs = Vec::new();
    let templates = rule_templates();
    for (file, template) in &templates {
        let found = rule_expressions(template);
        assert!(!found.is_empty(), "{file} has no expr");
        exprs.extend(found.into_iter().map(|e| (file.clone(), e)));
    }
    let problems = problems(exprs.iter().map(|(f, e)| (f.clone(), *e)), &text);
    assert!(problems.is_empty(), "{problems:#?}");
    // outcome="error", result="failed" and result=~"partial|unknown|refused".
    let matched: usize = exprs
        .iter()
        .map(|(_, e)| support::matchers(&without_templates(e)).len())
        .sum();
    assert!(matched >= 5, "only {matched} matchers found");
    let used: BTreeSet<String> = exprs
        .iter()
        .flat_map(|(_, e)| metric_names(&without_templates(e)))
        .collect();
    for needed in [
        "ptah_reconciliations_total",
        "ptah_operation_results_total",
        "ptah_leader",
        "ptah_oldest_unresolved_migration_run_timestamp_seconds",
    ] {
        assert!(used.contains(needed), "no alert uses {needed}");
    }
}

#[test]
fn the_promql_reader_finds_metrics_and_matchers_and_nothing_else() {
    let expr = r#"sum by (kind) (rate(ptah_a_total{kind="schema", result=~"x|y", namespace="n"}[5m])) / on (kind) group_left ptah_b > bool 0.5 offset 1h"#;
    assert_eq!(metric_names(expr), ["ptah_a_total", "ptah_b"]);
    assert_eq!(
        support::matchers(expr),
        [
            ("kind".to_owned(), "schema".to_owned()),
            ("result".to_owned(), "x".to_owned()),
            ("result".to_owned(), "y".to_owned()),
        ]
    );
    let templated =
        r#"(time() - min by (namespace) (up{namespace="{{ $ns }}"} > 0)) > {{ mul .minutes 60 }}"#;
    assert_eq!(metric_names(&without_templates(templated)), ["up"]);
    assert_eq!(
        metric_names("max without (pod) (ptah_c) or sum(ptah_d)"),
        ["ptah_c", "ptah_d"]
    );
    assert_eq!(
        metric_names(r#"histogram_quantile(0.99, sum by (le) (rate(x_bucket{a="}"}[$__rate_interval])))"#),
        ["x_bucket"]
    );
}
