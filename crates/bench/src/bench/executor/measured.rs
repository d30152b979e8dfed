//! What `bench executor` measured for one engine and size, and its report.

use serde_json::{Value, json};

use super::super::samples::{Samples, round};
use super::Engine;
use super::peers;

/// Everything measured for one engine and size.
pub(super) struct Measured {
    pub(super) engine: Engine,
    pub(super) size: usize,
    pub(super) tables: usize,
    pub(super) columns: usize,
    pub(super) indexes: usize,
    pub(super) create_mode: &'static str,
    pub(super) create_statements: usize,
    pub(super) create_secs: f64,
    pub(super) floor_rows: usize,
    pub(super) floor: Samples,
    pub(super) inspect: Samples,
    pub(super) inspect_plan: Samples,
    pub(super) plan_only: Samples,
    /// The server probes alone ([`comparable`]), part of `plan_only`.
    pub(super) probes: Samples,
    pub(super) connect: Samples,
    /// Per round: inspect / floor and (inspect + plan) / floor.
    pub(super) round_ratios: Vec<(f64, f64)>,
    /// A non-empty plan of the unchanged database, described.
    pub(super) problem: Option<String>,
    /// Peak resident set while measuring (after the schema was created), KiB.
    pub(super) peak_rss_kib: Option<u64>,
    /// The peers, each a process (`--no-peers`: none).
    pub(super) peers: Option<peers::Measured>,
}

impl Measured {
    pub(super) fn ratio_inspect(&self) -> f64 {
        self.inspect.median() / self.floor.median()
    }

    pub(super) fn ratio_inspect_plan(&self) -> f64 {
        self.inspect_plan.median() / self.floor.median()
    }

    /// The server probes' share of inspect + plan (medians).
    pub(super) fn probes_share(&self) -> f64 {
        self.probes.median() / self.inspect_plan.median()
    }

    pub(super) fn round_ratio_medians(&self) -> (f64, f64) {
        let a = Samples(self.round_ratios.iter().map(|r| r.0).collect());
        let b = Samples(self.round_ratios.iter().map(|r| r.1).collect());
        (a.median(), b.median())
    }

    pub(super) fn to_json(&self) -> Value {
        let (per_round_inspect, per_round_plan) = self.round_ratio_medians();
        json!({
            "engine": self.engine.label(),
            "size": self.size,
            "tables": self.tables,
            "columns": self.columns,
            "indexes": self.indexes,
            "create": {
                "mode": self.create_mode,
                "statements": self.create_statements,
                "seconds": round(self.create_secs),
            },
            "floor_rows": self.floor_rows,
            "seconds": {
                "floor": self.floor.to_json(),
                "inspect": self.inspect.to_json(),
                "inspect_plan": self.inspect_plan.to_json(),
                "plan_only": self.plan_only.to_json(),
                "probes": self.probes.to_json(),
                "connect": self.connect.to_json(),
            },
            "ratios": {
                "inspect_over_floor": round(self.ratio_inspect()),
                "inspect_plan_over_floor": round(self.ratio_inspect_plan()),
                "median_per_round_inspect_over_floor": round(per_round_inspect),
                "median_per_round_inspect_plan_over_floor": round(per_round_plan),
                "probes_share_of_inspect_plan": round(self.probes_share()),
                "targets": { "inspect_plan": 1.5 },
            },
            "peak_rss_kib_while_measuring": self.peak_rss_kib,
            "unchanged_plan_empty": self.problem.is_none(),
            "problem": self.problem,
            "peers": self.peers.as_ref().map(peers::Measured::to_json),
        })
    }
}
