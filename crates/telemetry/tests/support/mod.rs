//! Shared by the tests that hold the chart's alert rules and the Grafana dashboard to the metrics
//! this crate exports: the manager's exposition, and a PromQL reader just deep enough to find the
//! metric names and label matchers of an expression.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use ptah_telemetry::{Kind, Metrics, Operation, OperationResult, ReconcileOutcome};

/// The labels this crate's metrics carry (the scrape adds `namespace`, `pod`, …).
pub const LABELS: [&str; 5] = ["kind", "outcome", "operation", "result", "phase"];

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The exposition of a manager after every label value has been used once.
pub fn exposition() -> String {
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
pub fn series_names(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split(['{', ' ']).next())
        .map(str::to_owned)
        .collect()
}

/// The metric families (`# TYPE <name> <type>`) of an exposition.
pub fn families(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect()
}

/// Whether `series` (a name from a query) belongs to `family`: a counter is queried with its
/// `_total` suffix, a histogram through `_bucket`, `_sum` and `_count`.
pub fn of_family(series: &str, family: &str) -> bool {
    series
        .strip_prefix(family)
        .is_some_and(|rest| ["", "_total", "_bucket", "_sum", "_count"].contains(&rest))
}

/// The text of every `prometheusrule*.yaml` template of the chart.
pub fn rule_templates() -> Vec<(String, String)> {
    let dir = workspace().join("charts/ptah-operator/templates");
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
pub fn rule_expressions(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("expr:"))
        .map(str::trim)
        .collect()
}

/// `expr` without Helm's `{{ … }}` actions; each leaves a space, so no two tokens merge.
pub fn without_templates(expr: &str) -> String {
    let mut out = String::new();
    let mut rest = expr;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        out.push(' ');
        let end = rest[at..].find("}}").expect("closed template action");
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

/// PromQL words that are neither metrics nor followed by an argument list of metrics.
const KEYWORDS: [&str; 8] = ["bool", "offset", "and", "or", "unless", "inf", "nan", "atan2"];
/// Words whose parenthesised list names labels, not series.
const LABEL_LISTS: [&str; 6] = ["by", "without", "on", "ignoring", "group_left", "group_right"];

/// Every metric name a PromQL expression selects: what is left after string literals, label
/// matchers (`{…}`), ranges (`[…]`), numbers, function names, keywords and label lists.
pub fn metric_names(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_to = |from: usize, close: char| -> usize {
        let mut j = from + 1;
        while j < chars.len() && chars[j] != close {
            if chars[j] == '"' {
                j += 1;
                while j < chars.len() && chars[j] != '"' {
                    j += if chars[j] == '\\' { 2 } else { 1 };
                }
            }
            j += 1;
        }
        j + 1
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_to(i, c);
        } else if c == '{' {
            i = skip_to(i, '}');
        } else if c == '[' {
            i = skip_to(i, ']');
        } else if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut next = i;
            while next < chars.len() && chars[next].is_whitespace() {
                next += 1;
            }
            // `sum by (…) (…)`: the aggregation's clause comes before its argument list.
            let clause: String = chars[next..]
                .iter()
                .take_while(|c| c.is_ascii_alphabetic() || **c == '_')
                .collect();
            let called = chars.get(next) == Some(&'(') || clause == "by" || clause == "without";
            if LABEL_LISTS.contains(&word.as_str()) {
                if called {
                    i = skip_to(next, ')');
                }
            } else if !called && !KEYWORDS.contains(&word.as_str()) {
                out.push(word);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Every `label="v"` / `label=~"a|b"` matcher of `expr` on one of this crate's labels with a
/// literal value, as `(label, value)` pairs; a dashboard variable (`$x`) is no literal.
pub fn matchers(expr: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for label in LABELS {
        for op in ["=~\"", "=\""] {
            let needle = format!("{label}{op}");
            let mut rest = expr;
            while let Some(at) = rest.find(&needle) {
                let before = rest[..at].chars().next_back();
                let tail = &rest[at + needle.len()..];
                let end = tail.find('"').expect("closed matcher");
                if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    for value in tail[..end].split('|').filter(|v| !v.starts_with('$')) {
                        out.push((label.to_owned(), value.to_owned()));
                    }
                }
                rest = &tail[end..];
            }
        }
    }
    out
}

/// What is wrong with the queries `exprs` (named by `where_`) against `exposition`: unknown
/// metrics, label values never exported, queries of no metric at all.
pub fn problems<'a>(exprs: impl IntoIterator<Item = (String, &'a str)>, exposition: &str) -> Vec<String> {
    let names = series_names(exposition);
    let mut out = Vec::new();
    for (where_, expr) in exprs {
        let expr = without_templates(expr);
        let found = metric_names(&expr);
        if found.is_empty() {
            out.push(format!("{where_}: {expr} selects no metric"));
        }
        for name in found {
            if !names.contains(&name) {
                out.push(format!("{where_}: {name} is not exported by the manager"));
            }
        }
        for (label, value) in matchers(&expr) {
            let series = format!("{label}=\"{value}\"");
            if !exposition.contains(&series) {
                out.push(format!("{where_}: {series} is never exported"));
            }
        }
    }
    out
}
