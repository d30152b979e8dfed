//! The sections and goals of the benchmarks beside the manager: cold convergence, migrations
//! against their peers, the executor, the runner, the images, plans and splitting.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Goal, Result};

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn yes(met: bool) -> String {
    if met { "yes".into() } else { "**no**".into() }
}

fn get<'a>(results: &'a [Result], name: &str) -> Option<&'a Value> {
    results.iter().find(|r| r.name == name)?.json.as_ref()
}

fn missing(goal: &str, bench: &str) -> Goal {
    Goal {
        goal: goal.to_owned(),
        measured: format!("not measured: run `cargo xtask bench {bench}`"),
        baseline: String::new(),
        met: "not measured".into(),
    }
}

/// The goals of every benchmark but the manager.
pub(super) fn goals(results: &[Result]) -> Vec<Goal> {
    let mut rows = Vec::new();
    match get(results, "converge").and_then(|c| f(&c["converged_seconds"]).map(|s| (c, s))) {
        Some((c, secs)) => {
            let leader = c["manager"]["replicas"]
                .as_array()
                .and_then(|r| r.iter().find(|r| r["leader"] == Value::Bool(true)))
                .map_or(Value::Null, |r| r["rss_max_mib"].clone());
            rows.push(Goal {
                goal: format!("{} PtahSchemas from cold to InSync ≤ 56 s", c["schemas"]),
                measured: format!("{secs:.1} s (leading manager's RSS at most {leader} MiB)"),
                baseline: "reference: 112 s (1 min 52 s)".into(),
                met: yes(secs <= 56.0),
            });
        }
        None => rows.push(missing("20 PtahSchemas from cold to InSync ≤ 56 s", "converge")),
    }
    match get(results, "migrations").and_then(|m| m["results"].as_array()) {
        Some(engines) => {
            for e in engines {
                let speedup = f(&e["apply"]["fastest_peer_over_ptah"]).unwrap_or(f64::NAN);
                rows.push(Goal {
                    goal: format!(
                        "{} {}: ptah `migrations up` ≥ 2× the fastest peer",
                        get(results, "migrations").map_or(Value::Null, |m| m["migrations"].clone()),
                        e["engine"].as_str().unwrap_or("?")
                    ),
                    measured: format!("fastest peer / ptah = {speedup:.2}×"),
                    baseline: format!(
                        "{} in the same rounds",
                        e["apply"]["fastest_peer"].as_str().unwrap_or("?")
                    ),
                    met: yes(speedup >= 2.0),
                });
            }
        }
        None => rows.push(missing(
            "ptah `migrations up` ≥ 2× the fastest peer",
            "migrations",
        )),
    }
    match get(results, "runner").and_then(|r| f(&r["overhead_ms"])) {
        Some(ms) => rows.push(Goal {
            goal: "runner overhead, process start to frame, ≤ 20 ms".into(),
            measured: format!("{ms:.1} ms"),
            baseline: "the same `ptah` run directly".into(),
            met: yes(ms <= 20.0),
        }),
        None => rows.push(missing("runner overhead ≤ 20 ms", "runner")),
    }
    match get(results, "images").and_then(|i| i["results"].as_array()) {
        Some(images) => {
            for i in images {
                let mb = f(&i["pushed_bytes"]).unwrap_or(f64::NAN) / 1e6;
                let before = f(&i["dev_pushed_before_bytes"]).unwrap_or(f64::NAN) / 1e6;
                rows.push(Goal {
                    goal: format!("{} image ≤ 20 MB as pushed", i["image"].as_str().unwrap_or("?")),
                    measured: format!("{mb:.1} MB"),
                    baseline: format!("{before:.1} MB: its dev image, layer uncompressed"),
                    met: yes(mb <= 20.0),
                });
            }
        }
        None => rows.push(missing("images ≤ 20 MB as pushed", "images")),
    }
    rows
}

/// The section of benchmark `name` from its JSON.
pub(super) fn section(name: &str, json: &Value) -> String {
    match name {
        "converge" => super::converge::section(json),
        "executor" => executor(json),
        "migrations" => migrations(json),
        "stall" => super::stall::section(json),
        _ => generic(json),
    }
}

fn executor(json: &Value) -> String {
    let mut s = String::from(
        "Inspect, and inspect + plan, of a generated schema against the bare catalog queries (the floor), interleaved round by round.\n\n| engine | tables | floor s | inspect s | inspect+plan s | inspect / floor | inspect+plan / floor |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in json["results"].as_array().into_iter().flatten() {
        let sec = &r["seconds"];
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.2}× | {:.2}× |",
            r["engine"].as_str().unwrap_or("?"),
            r["tables"],
            sec["floor"]["median"],
            sec["inspect"]["median"],
            sec["inspect_plan"]["median"],
            f(&r["ratios"]["inspect_over_floor"]).unwrap_or(f64::NAN),
            f(&r["ratios"]["inspect_plan_over_floor"]).unwrap_or(f64::NAN)
        );
    }
    s
}

fn migrations(json: &Value) -> String {
    let mut s = format!(
        "{} migrations applied to fresh databases by each tool as a process, interleaved, medians of the rounds. The floor is the same statements sent one by one over one connection, with no history, lock or process start: no tool can beat it.\n\n| engine | tool | apply s | apply / floor | status s |\n| --- | --- | --- | --- | --- |\n",
        json["migrations"]
    );
    for e in json["results"].as_array().into_iter().flatten() {
        for (tool, t) in e["tools"].as_object().into_iter().flatten() {
            let _ = writeln!(
                s,
                "| {} | {tool} | {} | {:.2}× | {} |",
                e["engine"].as_str().unwrap_or("?"),
                t["apply_seconds"]["median"],
                f(&t["apply_over_floor"]).unwrap_or(f64::NAN),
                t["status_seconds"]["median"]
            );
        }
        let _ = writeln!(
            s,
            "| {} | fastest peer / ptah | {:.2}× ({}) | | {:.2}× |",
            e["engine"].as_str().unwrap_or("?"),
            f(&e["apply"]["fastest_peer_over_ptah"]).unwrap_or(f64::NAN),
            e["apply"]["fastest_peer"].as_str().unwrap_or("?"),
            f(&e["status"]["fastest_peer_over_ptah"]).unwrap_or(f64::NAN)
        );
    }
    s
}

/// Every scalar of the JSON, one row each, for a benchmark without its own layout.
fn generic(json: &Value) -> String {
    let mut s = String::from("| figure | value |\n| --- | --- |\n");
    let mut rows = Vec::new();
    flatten("", json, &mut rows);
    for (k, v) in rows {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    s
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "samples" || k == "benchmark" || k == "build" {
                    continue;
                }
                flatten(
                    &if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    },
                    v,
                    out,
                );
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object()) => {
            out.push((prefix.to_owned(), v.to_string()));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), item, out);
            }
        }
        other => out.push((prefix.to_owned(), other.to_string())),
    }
}
