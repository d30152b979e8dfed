//! The measured samples per engine and tool, the printed table and the JSON report.

use std::path::Path;

use anyhow::Context;
use serde_json::{Value, json};

use super::{Args, Tool, corpus::Corpus, db::Engine, peers::Ran};
use crate::bench::samples::{Samples, round};

/// The speed-up over the fastest peer the issue asks of ptah.
const GOAL: f64 = 2.0;

/// One tool's samples on one engine.
struct PerTool {
    tool: Tool,
    apply: Samples,
    status: Samples,
    /// Flyway only: the same runs timed inside the JVM.
    apply_in_jvm: Samples,
    status_in_jvm: Samples,
}

/// Everything measured on one engine.
pub(super) struct Measured {
    engine: Engine,
    tools: Vec<PerTool>,
    /// Per round: the fastest peer's apply time over ptah's.
    round_speedups: Samples,
}

impl Measured {
    /// Empty samples for `tools` on `engine`.
    pub(super) fn new(engine: Engine, tools: &[Tool]) -> Measured {
        Measured {
            engine,
            tools: tools
                .iter()
                .map(|&tool| PerTool {
                    tool,
                    apply: Samples::default(),
                    status: Samples::default(),
                    apply_in_jvm: Samples::default(),
                    status_in_jvm: Samples::default(),
                })
                .collect(),
            round_speedups: Samples::default(),
        }
    }

    /// Records one timed run of `tool`.
    pub(super) fn push(&mut self, tool: Tool, apply: &Ran, status: Option<&Ran>) {
        if let Some(t) = self.tools.iter_mut().find(|t| t.tool == tool) {
            t.apply.0.push(apply.seconds);
            if let Some(a) = apply.inner_seconds {
                t.apply_in_jvm.0.push(a);
            }
            if let Some(status) = status {
                t.status.0.push(status.seconds);
                if let Some(s) = status.inner_seconds {
                    t.status_in_jvm.0.push(s);
                }
            }
        }
    }

    /// Closes a round: the speed-up of ptah within it, from its last samples.
    pub(super) fn end_round(&mut self) {
        let last = |t: &PerTool| t.apply.0.last().copied();
        let ptah = self.get(Tool::Ptah).and_then(last);
        let peer = self
            .tools
            .iter()
            .filter(|t| t.tool.is_peer())
            .filter_map(last)
            .min_by(f64::total_cmp);
        if let (Some(ptah), Some(peer)) = (ptah, peer) {
            self.round_speedups.0.push(peer / ptah);
        }
    }

    fn get(&self, tool: Tool) -> Option<&PerTool> {
        self.tools.iter().find(|t| t.tool == tool)
    }

    /// The peer with the lowest median of `which`, and that median.
    fn fastest_peer(&self, which: fn(&PerTool) -> &Samples) -> Option<(Tool, f64)> {
        self.tools
            .iter()
            .filter(|t| t.tool.is_peer())
            .map(|t| (t.tool, which(t).median()))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The fastest peer's median over ptah's: how many times faster ptah is.
    fn speedup(&self, which: fn(&PerTool) -> &Samples) -> Option<(Tool, f64)> {
        let ptah = which(self.get(Tool::Ptah)?).median();
        self.fastest_peer(which).map(|(tool, peer)| (tool, peer / ptah))
    }

    /// `t`'s median apply time over the floor's, when the floor was measured.
    fn over_floor(&self, t: &PerTool) -> Option<f64> {
        let floor = self.get(Tool::Floor)?.apply.median();
        Some(t.apply.median() / floor)
    }

    fn to_json(&self) -> Value {
        let tools: serde_json::Map<String, Value> = self
            .tools
            .iter()
            .map(|t| {
                let mut v = json!({
                    "apply_seconds": t.apply.to_json(),
                    "status_seconds": t.status.to_json(),
                });
                if let Some(x) = self.over_floor(t) {
                    v["apply_over_floor"] = json!(round(x));
                }
                if !t.apply_in_jvm.0.is_empty() {
                    v["apply_seconds_inside_jvm"] = t.apply_in_jvm.to_json();
                    v["status_seconds_inside_jvm"] = t.status_in_jvm.to_json();
                }
                (t.tool.label().to_owned(), v)
            })
            .collect();
        let ratio = |s: Option<(Tool, f64)>| {
            s.map(|(tool, x)| json!({ "fastest_peer": tool.label(), "fastest_peer_over_ptah": round(x) }))
        };
        let flyway_inner = self
            .get(Tool::Flyway)
            .zip(self.get(Tool::Ptah))
            .map(|(f, p)| round(f.apply_in_jvm.median() / p.apply.median()));
        json!({
            "engine": self.engine.label(),
            "tools": tools,
            "apply": ratio(self.speedup(|t| &t.apply)),
            "apply_median_per_round_fastest_peer_over_ptah": round(self.round_speedups.median()),
            "status": ratio(self.speedup(|t| &t.status)),
            "flyway_inside_jvm_apply_over_ptah": flyway_inner,
            "goal_fastest_peer_over_ptah": GOAL,
            // No tool beats the floor: the fastest peer over the floor bounds what ptah can reach.
            "fastest_peer_over_floor": self
                .fastest_peer(|t| &t.apply)
                .zip(self.get(Tool::Floor))
                .map(|((_, peer), floor)| round(peer / floor.apply.median())),
        })
    }
}

fn cell(s: &Samples) -> String {
    if s.0.is_empty() {
        return "–".to_owned();
    }
    format!("{:.2} ({:.2}–{:.2})", s.median(), s.min(), s.max())
}

/// Prints one Markdown table per engine and the ratios under it.
pub(super) fn print_table(results: &[Measured], build: &str, migrations: usize) {
    println!(
        "\nmigrations bench ({build} build): {migrations} migrations applied to a fresh database per \
         run; seconds, median (min–max) of the timed rounds, interleaved; every tool a process\n"
    );
    for m in results {
        println!("{}\n", m.engine.label());
        println!(
            "| tool | apply s | apply / floor | status s | apply inside the JVM s | status inside the JVM s |"
        );
        println!("| --- | --- | --- | --- | --- | --- |");
        for t in &m.tools {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                t.tool.label(),
                cell(&t.apply),
                m.over_floor(t)
                    .map_or_else(|| "–".to_owned(), |x| format!("{x:.2}×")),
                cell(&t.status),
                cell(&t.apply_in_jvm),
                cell(&t.status_in_jvm)
            );
        }
        if let Some((peer, x)) = m.speedup(|t| &t.apply) {
            println!(
                "\napply: ptah is {x:.2}× as fast as the fastest peer ({}) on medians, {:.2}× as the \
                 median of per-round ratios (goal ≥ {GOAL:.1}×: {})",
                peer.label(),
                m.round_speedups.median(),
                if x >= GOAL { "met" } else { "NOT met" }
            );
        }
        if let (Some((peer, best)), Some(floor)) = (m.fastest_peer(|t| &t.apply), m.get(Tool::Floor)) {
            println!(
                "floor: the bare statements take {:.2} s, so no tool can be more than {:.2}× as fast \
                 as {} here",
                floor.apply.median(),
                best / floor.apply.median(),
                peer.label()
            );
        }
        if let Some((peer, x)) = m.speedup(|t| &t.status) {
            println!(
                "status: ptah is {x:.2}× as fast as the fastest peer ({}) (ptah status, golang-migrate \
                 version, flyway info: not the same work)",
                peer.label()
            );
        }
        println!();
    }
    println!(
        "\"inside the JVM\": Flyway timed from its main() to the end, JVM start-up excluded (class \
         loading and JIT of Flyway included); the ratios use whole-process times for all tools. \
         \"floor\": the corpus's statements one by one over one connection of this process, no \
         history, no lock, no process start."
    );
}

/// Writes the JSON report to `path`.
pub(super) fn write_json(
    path: &Path,
    results: &[Measured],
    build: &str,
    args: &Args,
    corpus: &Corpus,
) -> anyhow::Result<()> {
    let report = json!({
        "benchmark": "migrations",
        "build": build,
        "seed": args.seed,
        "warmup_rounds": args.warmup,
        "rounds": args.rounds,
        "migrations": corpus.migrations.len(),
        "statements": corpus.statements(),
        "end_state": {
            "tables": corpus.expect.tables,
            "columns": corpus.expect.columns,
            "rows": corpus.expect.rows,
            "qty_sum": corpus.expect.qty_sum,
        },
        "tools": {
            "floor": "not a tool: the corpus's statements one by one (autocommit) over one connection of the bench process; no history, no lock, no process start",
            "ptah": "ptah migrations up --verify-sum --expect-sequence @FILE (this workspace's binary); status: ptah migrations status --format json --exit-code",
            "golang-migrate": "github.com/golang-migrate/migrate/v4/cmd/migrate v4.20.1, -tags 'postgres mysql'; status: migrate version",
            "flyway": "org.flywaydb:flyway-core 13.12.2 (+ flyway-database-postgresql, flyway-mysql; org.postgresql:postgresql 42.7.14, org.mariadb.jdbc:mariadb-java-client 3.5.7) through Flyway.configure()…migrate() in a fresh JVM per run; status: info()",
        },
        "timing": "wall clock from spawn to exit of the tool's process; database creation, checks and drops excluded; every run on a fresh database, plaintext on loopback",
        "results": results.iter().map(Measured::to_json).collect::<Vec<_>>(),
    });
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}
