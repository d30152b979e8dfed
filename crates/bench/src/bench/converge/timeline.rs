//! Where the time went: each operation cut into phases from the first sightings of its claim,
//! Job, Pod and containers, medians by operation kind and phase, and the critical path (the
//! PtahSchema that converged last, operation by operation).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::watch::Snapshot;
use crate::bench::samples::Samples;

/// The phases of one operation: name, from, to (milestones of its Job's record).
const PHASES: [(&str, &str, &str); 10] = [
    // The manager: claim, realm Lease, admission snapshot, dispatch mark, create.
    ("dispatch", "claimed", "created"),
    // The Job controller creates the Pod.
    ("job→pod", "created", "pod:created"),
    ("schedule", "pod:created", "pod:PodScheduled"),
    // Sandbox, network, volumes and the first image lookup, up to the first container.
    ("sandbox", "pod:PodScheduled", "pod:first:running"),
    // Only when the runner comes from an image of its own.
    (
        "install-runner",
        "pod:init:install-runner:running",
        "pod:init:install-runner:done",
    ),
    // Observe and Plan only: the artifact pulled into the Pod.
    (
        "fetch-schema",
        "pod:init:fetch-schema:running",
        "pod:init:fetch-schema:done",
    ),
    // From the last init container to the main container running.
    ("main start", "pod:Initialized", "pod:main:running"),
    ("main run", "pod:main:running", "pod:main:done"),
    // The kubelet reports the main container's end, the manager reads the result and settles the
    // claim; the Job controller's `Complete` is not waited for (`job_completion` has it).
    ("result", "pod:main:done", "released"),
    // Whole operation, claim to settled.
    ("total", "claimed", "released"),
];

/// The phase names in order, `total` last, as the breakdown's keys hold them.
pub(crate) fn phase_names() -> impl Iterator<Item = &'static str> {
    PHASES.into_iter().map(|(name, _, _)| name)
}

fn span(s: &Snapshot, job: &str, from: &str, to: &str) -> Option<f64> {
    let key = format!("job/{job}");
    let (a, b) = (s.at(&key, from)?, s.at(&key, to)?);
    (b >= a).then_some(b - a)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn summary(samples: &Samples) -> Value {
    json!({"median": round(samples.median()), "max": round(samples.max()), "n": samples.0.len()})
}

/// The breakdown of the run: per operation kind and phase, per phase over every kind, the gaps
/// between one operation and the next, and the critical path.
pub(super) fn breakdown(s: &Snapshot, schemas: &[String]) -> Value {
    let mut by_kind: BTreeMap<String, BTreeMap<&str, Samples>> = BTreeMap::new();
    let mut by_phase: BTreeMap<&str, Samples> = BTreeMap::new();
    let mut gaps = Samples::default();
    let mut first_claim = Samples::default();
    let mut last_gap = Samples::default();
    for c in &s.claims {
        let phases = by_kind.entry(c.kind.clone()).or_default();
        for (name, from, to) in PHASES {
            if let Some(d) = span(s, &c.job, from, to) {
                phases.entry(name).or_default().0.push(d);
                if name != "total" {
                    by_phase.entry(name).or_default().0.push(d);
                }
            }
        }
    }
    for schema in schemas {
        let ops: Vec<_> = s.claims.iter().filter(|c| &c.schema == schema).collect();
        if let Some(first) = ops
            .first()
            .and_then(|c| s.at(&format!("job/{}", c.job), "claimed"))
        {
            first_claim.0.push(first);
        }
        for pair in ops.windows(2) {
            let released = s.at(&format!("job/{}", pair[0].job), "released");
            let next = s.at(&format!("job/{}", pair[1].job), "claimed");
            if let (Some(a), Some(b)) = (released, next) {
                gaps.0.push(b - a);
            }
        }
        let done = s.at(&format!("schema/{schema}"), "insync");
        let last = ops
            .last()
            .and_then(|c| s.at(&format!("job/{}", c.job), "released"));
        if let (Some(a), Some(b)) = (last, done) {
            last_gap.0.push((b - a).max(0.0));
        }
    }
    let kinds: serde_json::Map<String, Value> = by_kind
        .iter()
        .map(|(k, phases)| {
            let p: serde_json::Map<String, Value> = phases
                .iter()
                .map(|(n, v)| ((*n).to_owned(), summary(v)))
                .collect();
            (k.clone(), Value::Object(p))
        })
        .collect();
    let phases: serde_json::Map<String, Value> = by_phase
        .iter()
        .map(|(n, v)| {
            (
                (*n).to_owned(),
                json!({"median": round(v.median()), "sum": round(v.0.iter().sum()), "n": v.0.len()}),
            )
        })
        .collect();
    json!({
        "by_kind": kinds,
        "by_phase": phases,
        "apply_to_first_claim": summary(&first_claim),
        "settled_to_next_claim": summary(&gaps),
        "last_settled_to_in_sync": summary(&last_gap),
        "critical_path": critical_path(s, schemas),
    })
}

/// The PtahSchema that converged last, each of its operations with its phases, and the sum of
/// each phase along it.
fn critical_path(s: &Snapshot, schemas: &[String]) -> Value {
    let Some((schema, done)) = schemas
        .iter()
        .filter_map(|n| s.at(&format!("schema/{n}"), "insync").map(|t| (n, t)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    else {
        return Value::Null;
    };
    let mut ops = Vec::new();
    let mut sums: BTreeMap<&str, f64> = BTreeMap::new();
    let mut previous_end = 0.0;
    for c in s.claims.iter().filter(|c| &c.schema == schema) {
        let key = format!("job/{}", c.job);
        let claimed = s.at(&key, "claimed").unwrap_or(previous_end);
        *sums.entry("between operations").or_default() += (claimed - previous_end).max(0.0);
        let mut phases = serde_json::Map::new();
        for (name, from, to) in PHASES {
            if let Some(d) = span(s, &c.job, from, to) {
                phases.insert(name.to_owned(), json!(round(d)));
                if name != "total" {
                    *sums.entry(name).or_default() += d;
                }
            }
        }
        previous_end = s.at(&key, "released").unwrap_or(claimed);
        ops.push(json!({
            "kind": c.kind, "job": c.job,
            "claimed_at": round(claimed), "settled_at": round(previous_end),
            "phases": phases,
        }));
    }
    *sums.entry("between operations").or_default() += (done - previous_end).max(0.0);
    json!({
        "schema": schema,
        "in_sync_at": round(done),
        "operations": ops,
        "phase_sums": sums.into_iter().map(|(k, v)| (k.to_owned(), json!(round(v)))).collect::<serde_json::Map<_, _>>(),
    })
}

/// Job start to finish (the reference's "Job completion") over every Job seen.
pub(super) fn job_completion(s: &Snapshot) -> Value {
    let mut samples = Samples::default();
    for c in &s.claims {
        if let Some(d) = span(s, &c.job, "created", "finished") {
            samples.0.push(d);
        }
    }
    let mut sorted = samples.0.clone();
    sorted.sort_by(f64::total_cmp);
    // Nearest rank.
    let rank = ((sorted.len() as f64) * 0.95).ceil() as usize;
    let p95 = sorted.get(rank.saturating_sub(1)).copied().unwrap_or(f64::NAN);
    json!({"median": round(samples.median()), "p95": round(p95), "max": round(samples.max()), "n": samples.0.len()})
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::bench::converge::watch::Claimed;

    fn marks(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    /// One schema, two operations: Resolve then Apply, converged at 20 s.
    fn snapshot() -> Snapshot {
        let mut m = HashMap::new();
        m.insert(
            "job/r".to_owned(),
            marks(&[
                ("claimed", 1.0),
                ("created", 1.5),
                ("pod:created", 1.6),
                ("pod:PodScheduled", 1.7),
                ("pod:first:running", 2.5),
                ("pod:init:install-runner:running", 2.5),
                ("pod:init:install-runner:done", 3.0),
                ("pod:Initialized", 3.2),
                ("pod:main:running", 3.5),
                ("pod:main:done", 5.5),
                ("finished", 6.0),
                ("released", 6.5),
            ]),
        );
        m.insert(
            "job/a".to_owned(),
            marks(&[("claimed", 7.0), ("created", 7.25), ("released", 18.0)]),
        );
        m.insert("schema/s".to_owned(), marks(&[("insync", 20.0)]));
        let claim = |job: &str, kind: &str| Claimed {
            schema: "s".to_owned(),
            job: job.to_owned(),
            kind: kind.to_owned(),
        };
        Snapshot {
            marks: m,
            claims: vec![claim("r", "Resolve"), claim("a", "Apply")],
        }
    }

    #[test]
    fn each_operation_is_cut_into_its_phases() {
        let b = breakdown(&snapshot(), &["s".to_owned()]);
        let r = &b["by_kind"]["Resolve"];
        assert_eq!(r["dispatch"]["median"], json!(0.5));
        assert_eq!(r["sandbox"]["median"], json!(0.8));
        assert_eq!(r["main run"]["median"], json!(2.0));
        assert_eq!(r["result"]["median"], json!(1.0));
        assert_eq!(r["total"]["median"], json!(5.5));
        assert!(r.get("fetch-schema").is_none(), "no fetch container: no phase");
        assert_eq!(b["apply_to_first_claim"]["median"], json!(1.0));
        assert_eq!(b["settled_to_next_claim"]["median"], json!(0.5));
        assert_eq!(b["last_settled_to_in_sync"]["median"], json!(2.0));
    }

    #[test]
    fn the_critical_path_accounts_for_every_second_until_in_sync() {
        let c = &breakdown(&snapshot(), &["s".to_owned()])["critical_path"];
        assert_eq!(c["schema"], json!("s"));
        assert_eq!(c["operations"].as_array().map(Vec::len), Some(2));
        // 1 s before the first claim, 0.5 s between the two, 2 s after the last.
        assert_eq!(c["phase_sums"]["between operations"], json!(3.5));
    }
}
