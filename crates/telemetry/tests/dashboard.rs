//! `docs/integrations/grafana/ptah-operator.json` queries only what the manager exports: every
//! metric and label value of every panel and variable is in a manager's exposition, and every
//! family the manager exports has a panel. The exported set comes from [`Metrics`] itself.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::{exposition, families, metric_names, of_family, problems, workspace};

fn dashboard() -> Value {
    let path = workspace().join("docs/integrations/grafana/ptah-operator.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every panel, rows' nested panels included.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for panel in dashboard["panels"].as_array().into_iter().flatten() {
        out.push(panel);
        out.extend(panel["panels"].as_array().into_iter().flatten());
    }
    out
}

/// Every PromQL query of the dashboard, named by where it is: panel targets, and the metric of
/// each `label_values(<metric>, <label>)` variable.
fn queries(dashboard: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for panel in panels(dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap_or_default();
            out.push((format!("panel {:?}", panel["title"]), expr.to_owned()));
        }
    }
    for variable in dashboard["templating"]["list"].as_array().into_iter().flatten() {
        if variable["type"] != "query" {
            continue;
        }
        let query = variable["query"]["query"]
            .as_str()
            .or(variable["query"].as_str())
            .unwrap_or_default();
        let metric = query
            .strip_prefix("label_values(")
            .and_then(|q| q.split(',').next())
            .unwrap_or(query);
        out.push((
            format!("variable {:?}", variable["name"]),
            metric.trim().to_owned(),
        ));
    }
    out
}

fn check(dashboard: &Value) -> Vec<String> {
    problems(
        queries(dashboard).iter().map(|(w, e)| (w.clone(), e.as_str())),
        &exposition(),
    )
}

#[test]
fn every_metric_and_label_value_the_dashboard_queries_is_exported() {
    let d = dashboard();
    let queries = queries(&d);
    assert!(queries.len() >= 10, "only {} queries", queries.len());
    let problems = check(&d);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_exported_family_has_a_panel() {
    let d = dashboard();
    let queried: BTreeSet<String> = queries(&d)
        .iter()
        .flat_map(|(_, e)| metric_names(&support::without_templates(e)))
        .collect();
    let text = exposition();
    let families = families(&text);
    assert!(families.len() >= 10, "{families:?}");
    for family in &families {
        assert!(
            queried.iter().any(|q| of_family(q, family)),
            "no panel shows {family}"
        );
    }
}

#[test]
fn panels_are_unique_and_use_the_selected_data_source() {
    let d = dashboard();
    let mut ids = BTreeSet::new();
    for panel in panels(&d) {
        let id = panel["id"].as_u64().expect("a numeric id");
        assert!(ids.insert(id), "panel id {id} repeats");
        if panel["type"] == "row" {
            continue;
        }
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{}", panel["title"]);
        assert!(
            panel["description"].as_str().is_some_and(|s| !s.is_empty()),
            "{}",
            panel["title"]
        );
        assert!(
            panel["targets"].as_array().is_some_and(|t| !t.is_empty()),
            "{} queries nothing",
            panel["title"]
        );
    }
    let variables: Vec<&str> = d["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(variables, ["datasource", "namespace"]);
}

#[test]
fn an_unknown_metric_or_label_value_in_a_panel_is_reported() {
    let mut d = dashboard();
    let bogus = json!({"id": 999, "type": "timeseries", "title": "bogus", "targets": [
        {"expr": "sum(rate(ptah_bogus_total{namespace=\"$namespace\"}[5m])) + up"},
        {"expr": "sum(ptah_resources{phase=\"sleeping\"})"},
    ]});
    d["panels"].as_array_mut().expect("panels").push(bogus);
    let problems = check(&d);
    for needle in [
        "ptah_bogus_total is not exported",
        "up is not exported",
        "phase=\"sleeping\" is never exported",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(needle)),
            "{needle} not reported: {problems:#?}"
        );
    }
    assert_eq!(problems.len(), 3, "{problems:#?}");
}
