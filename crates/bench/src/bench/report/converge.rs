//! The cold-convergence section: the run in a sentence, where the time went by operation kind
//! and phase, and the critical path of the PtahSchema that converged last.

use std::fmt::Write as _;

use serde_json::Value;

use crate::bench::converge::timeline::phase_names;

fn cell(v: &Value) -> String {
    match v.as_f64() {
        Some(x) => format!("{x:.2}"),
        None => "–".into(),
    }
}

/// The section for one `converge.json`.
pub(super) fn section(json: &Value) -> String {
    let mut s = String::new();
    let b = &json["breakdown"];
    let leader = json["manager"]["replicas"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["leader"] == Value::Bool(true)));
    let _ = writeln!(
        s,
        "{} PtahSchemas ({} on PostgreSQL, {} on MariaDB; {} tables each, `apply: {}`), each against a fresh database of its own, applied with one `kubectl apply` on the full local cluster (Kubernetes {}, {} cores). All were InSync after **{} s** (goal 56 s, reference 112 s); one resource took {} s at the median ({} to {}). {} Jobs ran, {} failed; a Job from creation to `Complete` took {} s at the median and {} s at p95. The leading manager peaked at {} MiB RSS and used {} CPU s.\n",
        json["schemas"],
        json["engines"]["postgresql"],
        json["engines"]["mariadb"],
        json["tables_per_schema"],
        json["apply_policy"].as_str().unwrap_or("?"),
        json["kubernetes"].as_str().unwrap_or("?"),
        json["cores"],
        cell(&json["converged_seconds"]),
        cell(&json["in_sync_seconds"]["median"]),
        cell(&json["in_sync_seconds"]["min"]),
        cell(&json["in_sync_seconds"]["max"]),
        json["jobs"]["count"],
        json["jobs"]["failed"],
        cell(&json["job_completion_seconds"]["median"]),
        cell(&json["job_completion_seconds"]["p95"]),
        leader.map_or("?".into(), |l| cell(&l["rss_max_mib"])),
        leader.map_or("?".into(), |l| cell(&l["cpu_seconds"])),
    );
    let phases: Vec<&str> = phase_names().collect();
    let _ = writeln!(
        s,
        "Medians by operation and phase, seconds (a phase an operation does not have is –; `result` runs from the main container's end to the settled claim):\n"
    );
    let _ = writeln!(s, "| operation | {} |", phases.join(" | "));
    let _ = writeln!(s, "| --- |{}", " --- |".repeat(phases.len()));
    for (kind, v) in b["by_kind"].as_object().into_iter().flatten() {
        let cells: Vec<String> = phases.iter().map(|p| cell(&v[*p]["median"])).collect();
        let _ = writeln!(s, "| {kind} | {} |", cells.join(" | "));
    }
    let c = &b["critical_path"];
    let _ = writeln!(
        s,
        "\nThe critical path: {}, InSync at {} s, one operation after the other.\n\n| operation | claimed s | settled s | took s |\n| --- | --- | --- | --- |",
        c["schema"].as_str().unwrap_or("?"),
        cell(&c["in_sync_at"])
    );
    for op in c["operations"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            op["kind"].as_str().unwrap_or("?"),
            cell(&op["claimed_at"]),
            cell(&op["settled_at"]),
            cell(&op["phases"]["total"])
        );
    }
    let _ = writeln!(s, "\nIts seconds by phase:\n\n| phase | seconds |\n| --- | --- |");
    for (phase, secs) in c["phase_sums"].as_object().into_iter().flatten() {
        let _ = writeln!(s, "| {phase} | {} |", cell(secs));
    }
    s
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_section_names_the_time_the_phases_and_the_critical_path() {
        let j = json!({
            "schemas": 2, "engines": {"postgresql": 2, "mariadb": 0}, "tables_per_schema": 5,
            "apply_policy": "Always", "kubernetes": "v1.35.4", "cores": 2,
            "converged_seconds": 30.5, "in_sync_seconds": {"median": 29.0, "min": 28.0, "max": 30.5},
            "jobs": {"count": 14, "failed": 0},
            "job_completion_seconds": {"median": 4.0, "p95": 5.0},
            "manager": {"replicas": [{"leader": true, "rss_max_mib": 25.9, "cpu_seconds": 4.5}]},
            "breakdown": {
                "by_kind": {"Resolve": {"sandbox": {"median": 3.25}, "total": {"median": 7.0}}},
                "critical_path": {"schema": "app-01", "in_sync_at": 30.5, "operations": [
                    {"kind": "Resolve", "claimed_at": 0.5, "settled_at": 7.5, "phases": {"total": 7.0}}],
                    "phase_sums": {"sandbox": 3.25}},
            },
        });
        let s = section(&j);
        assert!(s.contains("InSync after **30.50 s**"), "{s}");
        assert!(s.contains("peaked at 25.90 MiB"), "{s}");
        assert!(s.contains("| Resolve | – |"), "{s}");
        assert!(s.contains("| 3.25 |"), "{s}");
        assert!(s.contains("| Resolve | 0.50 | 7.50 | 7.00 |"), "{s}");
        assert!(s.contains("| sandbox | 3.25 |"), "{s}");
        assert_eq!(s.matches("| operation |").count(), 2, "{s}");
    }
}
