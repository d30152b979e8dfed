//! One section per benchmark, and the goals table, read from each benchmark's JSON.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Goal, Result, chart::Point};

/// The benchmarks, in the page's order.
pub(super) const ORDER: &[&str] = &[
    "manager",
    "converge",
    "migrations",
    "executor",
    "runner",
    "images",
    "plans",
    "split",
    "results",
    "stall",
];

/// The settled memory goal of the manager under the full load, MiB.
pub(super) const MANAGER_GOAL_MIB: f64 = 28.0;

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn yes(met: bool) -> String {
    if met { "yes".into() } else { "**no**".into() }
}

fn get<'a>(results: &'a [Result], name: &str) -> Option<&'a Value> {
    results.iter().find(|r| r.name == name)?.json.as_ref()
}

/// The points of the memory chart: the manager's curve, else nothing.
pub(super) fn chart_points(results: &[Result]) -> Option<Vec<Point>> {
    let curve = get(results, "manager")?["curve"].as_array()?;
    Some(
        curve
            .iter()
            .filter_map(|p| {
                Some(Point {
                    schemas: f(&p["schemas"])?,
                    settled: f(&p["settled_rss_mib"])?,
                    peak: f(&p["peak_rss_mib"])?,
                })
            })
            .collect(),
    )
}

/// The goals of the issue, each with this run's figure.
pub(super) fn goals(results: &[Result]) -> Vec<Goal> {
    let mut rows = Vec::new();
    let missing = |goal: &str, bench: &str| Goal {
        goal: goal.to_owned(),
        measured: format!("not measured: run `cargo xtask bench {bench}`"),
        baseline: String::new(),
        met: "not measured".into(),
    };
    match get(results, "manager")
        .map(|m| &m["main"])
        .filter(|m| !m.is_null())
    {
        Some(m) => {
            let settled = f(&m["settled_rss_mib"]).unwrap_or(f64::NAN);
            rows.push(Goal {
                goal: format!(
                    "manager settled RSS ≤ {MANAGER_GOAL_MIB} MB with {} PtahSchemas, {} PtahMigrations, {} ConfigMaps, {} plans",
                    m["load"]["schemas"], m["load"]["migrations"], m["load"]["configmaps"], m["load"]["plans"]
                ),
                measured: format!("{settled:.1} MiB (peak {} MiB)", m["peak_rss_mib"]),
                baseline: "225 MB before this work (issue #19, by hand)".into(),
                met: yes(settled * 1.048_576 <= MANAGER_GOAL_MIB),
            });
        }
        None => rows.push(missing(
            "manager settled RSS ≤ 28 MB under the full load",
            "manager",
        )),
    }
    rows.extend(super::sections_peers::goals(results));
    rows.push(super::stall::goal(get(results, "stall")));
    rows
}

/// The section of one benchmark.
pub(super) fn section(r: &Result, charted: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## {}\n", title(r.name));
    let _ = writeln!(
        s,
        "Measure again: `cargo xtask bench {}`{}{}.\n",
        command(r.name),
        if r.name == "manager" {
            " (API tier, a cluster of its own: `cargo xtask cluster up --tier api`)"
        } else {
            ""
        },
        r.written
            .as_ref()
            .map_or(String::new(), |w| format!("; measured {w}"))
    );
    let Some(json) = &r.json else {
        let _ = writeln!(
            s,
            "Not measured yet: neither `target/bench/{0}.json` nor `docs/performance/{0}.json` exists.",
            r.name
        );
        return s;
    };
    if let Some(build) = json["manager_build"].as_str().or(json["build"].as_str()) {
        let _ = writeln!(s, "Build measured: {build}.\n");
    }
    s.push_str(&match r.name {
        "manager" => manager(json, charted),
        other => super::sections_peers::section(other, json),
    });
    s
}

fn title(name: &str) -> &'static str {
    match name {
        "manager" => "The manager at scale",
        "converge" => "Cold convergence of 20 PtahSchemas",
        "migrations" => "Migrations side by side with golang-migrate and Flyway",
        "executor" => "Executor: inspect and plan against the catalog floor",
        "runner" => "Runner overhead",
        "images" => "Image sizes",
        "plans" => "Plan publication and reload",
        "results" => "Durable result delivery against the log frame",
        "stall" => "Write stalls of lock-safe changes (PostgreSQL)",
        _ => "Migration file splitting",
    }
}

fn command(name: &str) -> &str {
    match name {
        "manager" => "manager --scales 100,300,1000,3000",
        other => other,
    }
}

fn manager(json: &Value, charted: bool) -> String {
    let mut s = String::new();
    let m = &json["main"];
    if !m.is_null() {
        let l = &m["load"];
        let _ = writeln!(
            s,
            "A release `manager` on the {} tier (Kubernetes {}), watching every namespace, under {} PtahSchemas and {} PtahMigrations over {} namespaces, {} unrelated ConfigMaps of {} bytes and {} published plans of {} bytes. A quota forbids Pods in those namespaces, so every resource holds a Job that never runs: the manager's own cost is what is measured.\n",
            json["tier"].as_str().unwrap_or("?"),
            json["kubernetes"].as_str().unwrap_or("?"),
            l["schemas"],
            l["migrations"],
            l["namespaces"],
            l["configmaps"],
            l["configmap_bytes"],
            l["plans"],
            l["plan_bytes"]
        );
        let _ = writeln!(s, "| figure | value |\n| --- | --- |");
        let rows = [
            (
                "every Job created, seconds after the start",
                m["seconds_to_dispatch_all"].to_string(),
            ),
            (
                "CPU seconds until then",
                m["cpu_seconds_to_dispatch_all"].to_string(),
            ),
            ("peak RSS, MiB", m["peak_rss_mib"].to_string()),
            (
                &format!(
                    "settled RSS, MiB (median of the last {} s idle)",
                    f(&m["idle_seconds"]).unwrap_or(0.0) / 2.0
                ),
                m["settled_rss_mib"].to_string(),
            ),
            (
                "spec change → next persisted claim, p50 / p99 s",
                format!(
                    "{:.3} / {:.3} ({} changes)",
                    f(&m["claim_latency_seconds"]["p50"]).unwrap_or(f64::NAN),
                    f(&m["claim_latency_seconds"]["p99"]).unwrap_or(f64::NAN),
                    m["claim_latency_seconds"]["samples"]
                ),
            ),
            (
                "API requests per reconcile, start to every Job",
                m["requests_to_dispatch_all"]["requests_per_reconcile"].to_string(),
            ),
            (
                "API requests per reconcile, the spec changes",
                m["requests_for_changes"]["requests_per_reconcile"].to_string(),
            ),
            (
                &format!("API requests while idle for {} s (by verb)", m["idle_seconds"]),
                format!(
                    "{} {}",
                    m["requests_while_idle"]["requests"], m["requests_while_idle"]["requests_by_verb"]
                ),
            ),
        ];
        for (k, v) in rows {
            let _ = writeln!(s, "| {k} | {v} |");
        }
        let _ = writeln!(
            s,
            "\nRequests by verb from the start until every Job existed: `{}`.",
            m["requests_to_dispatch_all"]["requests_by_verb"]
        );
    }
    if let Some(curve) = json["curve"].as_array().filter(|c| !c.is_empty()) {
        let _ = writeln!(
            s,
            "\nMemory against the number of PtahSchemas (nothing else in the cluster; a fresh manager each):\n"
        );
        let _ = writeln!(
            s,
            "| PtahSchemas | settled RSS MiB | peak RSS MiB | every Job after s | CPU s | note |\n| --- | --- | --- | --- | --- | --- |"
        );
        for p in curve {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                p["schemas"],
                p["settled_rss_mib"],
                p["peak_rss_mib"],
                p["seconds_to_dispatch_all"],
                p["cpu_seconds_total"],
                p["note"].as_str().unwrap_or("")
            );
        }
        if charted {
            let _ = writeln!(
                s,
                "\n![manager RSS against PtahSchemas](performance-manager-rss.svg)"
            );
        }
    }
    s
}
