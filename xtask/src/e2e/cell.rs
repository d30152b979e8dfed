//! The result files of one e2e run: a run manifest and one file per cell
//! (suite × minor × provider × engine), under `target/e2e/runs/<run id>/`.
//!
//! `run.json`: `{formatVersion, runId, commit, dirty, startedAt (unix s), scope, provider, minors,
//! suites}`. A cell `<suite>-<minor>-<provider>-<engine>.json`: `{formatVersion, runId, commit,
//! suite, minor, provider, engine, startedAt, durationSeconds, outcome, versions, phases: [{name,
//! outcome: pass|fail|skip|missing, tests, prepare, durationSeconds, command, reason, scenarios}]}`,
//! where `scenarios` (absent when none) holds the phase's per-scenario report records
//! ([`ptah_testenv::scenario::Record`], read from `<cell key>.<phase>.scenarios.jsonl` beside the
//! cell, which the tests append to through `PTAH_E2E_SCENARIOS_FILE`).
//! `target/e2e/latest-run` names the last run; `cargo xtask gate` reads it.

use std::{
    fs,
    path::{Path, PathBuf},
};

use anyhow::Context;
use ptah_testenv::scenario::Record;
use serde::{Deserialize, Serialize};

/// Format version of the run manifest and the cells.
pub const FORMAT_VERSION: u32 = 2;

/// What a run set out to cover; the gate holds it to that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every suite on every minor of the matrix.
    Matrix,
    /// The default CI path: the `ci: default` suites on the default minor.
    Ci,
    /// Suites picked by hand; proof of nothing the gate accepts.
    Picked,
}

/// How a phase or a cell ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every test passed.
    Pass,
    /// A test failed, or the phase could not run.
    Fail,
    /// Not run, with a reason (a need the provider cannot meet).
    Skip,
    /// No test implements the phase.
    Missing,
}

/// The exact versions a cell ran against.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Versions {
    /// kube-apiserver's `gitVersion`.
    pub api_server: String,
    /// The kubelet of each node (`nodeInfo.kubeletVersion`), deduplicated.
    pub kubelet: String,
    /// The container runtime of each node (`nodeInfo.containerRuntimeVersion`), deduplicated.
    pub container_runtime: String,
    /// The PostgreSQL server.
    pub postgresql: String,
    /// The MySQL-family server (MariaDB on the local provider).
    pub mysql: String,
}

/// One phase of a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Phase {
    /// The phase's name.
    pub name: String,
    /// How it ended.
    pub outcome: Outcome,
    /// How many tests implement it for this cell.
    pub tests: usize,
    /// Run only to prepare another phase.
    pub prepare: bool,
    /// Seconds it took.
    pub duration_seconds: f64,
    /// The command that ran it.
    pub command: String,
    /// Why it was skipped or could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The per-scenario report its tests wrote (none in files from before the report existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<Record>,
}

/// One cell's result file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cell {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The run it belongs to.
    pub run_id: String,
    /// The commit it ran.
    pub commit: String,
    /// The suite.
    pub suite: String,
    /// The Kubernetes minor.
    pub minor: String,
    /// `local` or `kind`.
    pub provider: String,
    /// The database family (`any` for an engine-independent suite).
    pub engine: String,
    /// Unix seconds.
    pub started_at: u64,
    /// Seconds it took.
    pub duration_seconds: f64,
    /// `pass` only when every phase passed.
    pub outcome: Outcome,
    /// What it ran against.
    pub versions: Versions,
    /// Its phases, in run order.
    pub phases: Vec<Phase>,
}

impl Cell {
    /// The cell's key, also its file stem.
    pub fn key(&self) -> String {
        key(&self.suite, &self.minor, &self.provider, &self.engine)
    }

    /// `pass` only when there are phases and every one passed.
    pub fn outcome_of(phases: &[Phase]) -> Outcome {
        if !phases.is_empty() && phases.iter().all(|p| p.outcome == Outcome::Pass) {
            Outcome::Pass
        } else {
            Outcome::Fail
        }
    }
}

/// `<suite>-<minor>-<provider>-<engine>`.
pub fn key(suite: &str, minor: &str, provider: &str, engine: &str) -> String {
    format!("{suite}-{minor}-{provider}-{engine}")
}

/// The file a phase's scenario tests append their report to: `<cell key>.<phase>.scenarios.jsonl`
/// in the run's directory (not `.json`, so [`load_run`] does not take it for a cell).
pub fn scenarios_file(run_dir: &Path, cell_key: &str, phase: &str) -> PathBuf {
    run_dir.join(format!("{cell_key}.{phase}.scenarios.jsonl"))
}

/// A run manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// `<unix seconds>-<short commit>`.
    pub run_id: String,
    /// `git rev-parse HEAD` when the run started.
    pub commit: String,
    /// Did the working tree differ from the commit?
    pub dirty: bool,
    /// Unix seconds.
    pub started_at: u64,
    /// What it set out to cover.
    pub scope: Scope,
    /// `local` or `kind`.
    pub provider: String,
    /// The minors it ran, in order.
    pub minors: Vec<String>,
    /// The suites it ran, in order.
    pub suites: Vec<String>,
}

/// Where runs are kept.
pub fn runs_dir(root: &Path) -> PathBuf {
    root.join("target").join("e2e").join("runs")
}

fn latest_file(root: &Path) -> PathBuf {
    root.join("target").join("e2e").join("latest-run")
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)? + "\n";
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Creates the run's directory, writes its manifest and marks it the latest run.
pub fn start_run(root: &Path, run: &Run) -> anyhow::Result<PathBuf> {
    let dir = runs_dir(root).join(&run.run_id);
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_json(&dir.join("run.json"), run)?;
    mark_latest(root, &run.run_id)?;
    Ok(dir)
}

/// Makes `run_id` the run `cargo xtask gate` reads.
pub fn mark_latest(root: &Path, run_id: &str) -> anyhow::Result<()> {
    fs::write(latest_file(root), format!("{run_id}\n")).context("cannot record the latest run")
}

/// Writes one cell into its run's directory.
pub fn write_cell(run_dir: &Path, cell: &Cell) -> anyhow::Result<PathBuf> {
    let path = run_dir.join(format!("{}.json", cell.key()));
    write_json(&path, cell)?;
    Ok(path)
}

/// The id of the latest run, if any.
pub fn latest_run(root: &Path) -> anyhow::Result<String> {
    let path = latest_file(root);
    let text = fs::read_to_string(&path).with_context(|| {
        format!(
            "no e2e run recorded ({} is missing): run `cargo xtask e2e --matrix`",
            path.display()
        )
    })?;
    Ok(text.trim().to_owned())
}

/// A run's manifest and every cell file in its directory (unreadable files are errors).
pub fn load_run(root: &Path, run_id: &str) -> anyhow::Result<(Run, Vec<Cell>)> {
    let dir = runs_dir(root).join(run_id);
    let manifest = dir.join("run.json");
    let text =
        fs::read_to_string(&manifest).with_context(|| format!("cannot read {}", manifest.display()))?;
    let run: Run = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a run manifest", manifest.display()))?;
    let mut cells = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "run.json") || path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let cell: Cell = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a cell result", path.display()))?;
        cells.push(cell);
    }
    Ok((run, cells))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase as written before the scenario report existed.
    const OLD_PHASE: &str = r#"{"name":"dataplane","outcome":"pass","tests":2,"prepare":false,
        "durationSeconds":3.5,"command":"cargo nextest run"}"#;

    #[test]
    fn a_phase_without_scenarios_still_loads_and_none_are_written() {
        let phase: Phase = serde_json::from_str(OLD_PHASE).expect("old phase");
        assert!(phase.scenarios.is_empty());
        let written = serde_json::to_value(&phase).expect("json");
        assert!(written.get("scenarios").is_none(), "{written}");
    }

    #[test]
    fn the_scenarios_round_trip_through_the_cell_file() {
        let mut phase: Phase = serde_json::from_str(OLD_PHASE).expect("old phase");
        let line = r#"{"scenario":"e2e_dataplane_x","engine":"postgresql","apply_jobs":{"p":1},"database":"ok","leak_scan":"leaked: Event e","seconds":2.0}"#;
        phase.scenarios.push(serde_json::from_str(line).expect("record"));
        let text = serde_json::to_string(&phase).expect("json");
        assert!(
            text.contains(r#""scenarios":[{"scenario":"e2e_dataplane_x""#),
            "{text}"
        );
        let back: Phase = serde_json::from_str(&text).expect("back");
        assert_eq!(back, phase);
    }

    #[test]
    fn the_report_file_is_not_taken_for_a_cell() {
        let path = scenarios_file(Path::new("/r"), "data-plane-1.35-local-any", "dataplane");
        assert_eq!(
            path,
            Path::new("/r/data-plane-1.35-local-any.dataplane.scenarios.jsonl")
        );
        assert!(path.extension().is_some_and(|e| e != "json"));
    }
}
