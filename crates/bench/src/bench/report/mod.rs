//! `cargo xtask bench --report`: docs/performance.md from the JSON every benchmark leaves in
//! target/bench/ (or, for a benchmark not run again, the copy an earlier report kept in
//! docs/performance/), each figure next to its baseline from the same run, the machine, and the command
//! that measures it again; plus the SVG chart of the manager's memory against its load.

mod chart;
mod converge;
mod sections;
mod sections_peers;
mod stall;

use std::{fmt::Write as _, path::Path, process::Command};

use anyhow::Context;
use ptah_testenv::step::workspace_root;
use serde_json::Value;

/// The page, relative to the workspace.
const PAGE: &str = "docs/performance.md";
/// The chart, next to the page.
const CHART: &str = "docs/performance-manager-rss.svg";
/// The results the page was written from, kept with it.
const KEPT: &str = "docs/performance";

/// One row of the goals table.
pub(super) struct Goal {
    /// The goal, in words.
    pub(super) goal: String,
    /// What this run measured.
    pub(super) measured: String,
    /// Its baseline.
    pub(super) baseline: String,
    /// `yes`, `no` or `not measured`.
    pub(super) met: String,
}

/// One benchmark's JSON, if it was run.
pub(super) struct Result {
    /// Its name (the file stem and the subcommand).
    pub(super) name: &'static str,
    /// What it wrote, if anything.
    pub(super) json: Option<Value>,
    /// When it was written (UTC, to the minute).
    pub(super) written: Option<String>,
}

/// The key under which a kept result records when its benchmark wrote it.
const MEASURED_AT: &str = "measured_at";

/// This run's result from `fresh` if the benchmark left one there, else the one kept in `kept`
/// by an earlier `--report`; a fresh one is copied into `kept`, stamped with the time it was
/// written, so the page can be rebuilt from what is committed after a partial rerun.
fn read(fresh: &Path, kept: &Path, name: &'static str) -> anyhow::Result<Result> {
    let path = fresh.join(format!("{name}.json"));
    let parse = |p: &Path| {
        std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    let kept_path = kept.join(format!("{name}.json"));
    if let Some(mut json) = parse(&path) {
        let written = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| jiff::Timestamp::try_from(t).ok())
            .map(|t| t.strftime("%Y-%m-%d %H:%M UTC").to_string());
        json[MEASURED_AT] = written.clone().map_or(Value::Null, Value::String);
        std::fs::create_dir_all(kept)?;
        let mut bytes = serde_json::to_vec_pretty(&json)?;
        bytes.push(b'\n');
        std::fs::write(&kept_path, bytes).with_context(|| format!("cannot write {}", kept_path.display()))?;
        return Ok(Result {
            name,
            json: Some(json),
            written,
        });
    }
    let json = parse(&kept_path);
    let written = json
        .as_ref()
        .and_then(|j| j[MEASURED_AT].as_str())
        .map(str::to_owned);
    Ok(Result { name, json, written })
}

/// Writes docs/performance.md and its chart from target/bench/*.json.
pub fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    let fresh = root.join("target/bench");
    let kept = root.join(KEPT);
    let results = sections::ORDER
        .iter()
        .map(|n| read(&fresh, &kept, n))
        .collect::<anyhow::Result<Vec<Result>>>()?;
    let chart = sections::chart_points(&results);
    let charted = match chart {
        Some(points) if !points.is_empty() => {
            chart::draw(&root.join(CHART), &points, sections::MANAGER_GOAL_MIB)?;
            true
        }
        _ => false,
    };
    let mut page = String::new();
    writeln!(page, "# Performance\n")?;
    writeln!(
        page,
        "Written by `cargo xtask bench --report` from the results the benchmarks left in \
         `target/bench/`, kept in `docs/performance/` (a benchmark not run again keeps its \
         earlier result, with the time it was measured). This machine's absolute times move 2–3× between runs, so each figure \
         stands next to a baseline measured in the same run, and the ratio is what to compare. \
         Each section names the command that measures it again; none of these figures is a \
         test, and nothing here fails a build.\n"
    )?;
    writeln!(page, "{}\n", machine())?;
    writeln!(page, "## Goals\n")?;
    writeln!(page, "| goal | measured | baseline in the same run | met |")?;
    writeln!(page, "| --- | --- | --- | --- |")?;
    for row in sections::goals(&results) {
        writeln!(
            page,
            "| {} | {} | {} | {} |",
            row.goal, row.measured, row.baseline, row.met
        )?;
    }
    writeln!(page)?;
    for r in &results {
        page.push_str(&sections::section(r, charted));
        page.push('\n');
    }
    let path = root.join(PAGE);
    std::fs::write(&path, page.trim_end().to_owned() + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "wrote {}{}",
        path.display(),
        if charted {
            format!(" and {CHART}")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// The machine, as `/proc` and `uname` describe it.
fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split(':').nth(1)))
        .map_or("unknown CPU".to_owned(), |m| m.trim().to_owned());
    let cores = cpuinfo.lines().filter(|l| l.starts_with("processor")).count();
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0 / 1024.0);
    let kernel = Command::new("uname")
        .arg("-r")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(String::new, |s| s.trim().to_owned());
    format!("Machine: {model}, {cores} cores, {mem_gib:.0} GiB, Linux {kernel}.")
}
