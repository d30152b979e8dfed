//! One phase of one cell: the `e2e_<phase>_…` tests, narrowed to the cell's engine when the
//! suite splits by engine, run by nextest against the cluster in `PTAH_CLUSTER_DIR`. Its
//! scenario tests append their report to the file in `PTAH_E2E_SCENARIOS_FILE`
//! ([`ptah_testenv::scenario`]), which is read back into the phase's result.

use std::{path::Path, time::Instant};

use ptah_testenv::{
    scenario::{self, Record},
    step::{describe, workspace_root},
};

use super::{
    cell::{Outcome, Phase},
    suites::{Engine, Suite, phase_filter},
};

/// The nextest filter of `phase` for `engine`'s cell of `suite`.
pub fn filter(suite: &Suite, phase: &str, engine: Engine) -> String {
    let base = phase_filter(phase);
    match engine.filter() {
        Some(engine) if suite.engines.len() > 1 => format!("{base} & {engine}"),
        _ => base,
    }
}

/// Does the listed test `name` (`binary-id module::e2e_…`, or the bare path) fall under
/// [`filter`]? The same rule in Rust, so one listing per run counts every phase.
pub fn matches(suite: &Suite, phase: &str, engine: Engine, name: &str) -> bool {
    let path = name.split_whitespace().last().unwrap_or(name);
    let prefix = format!("e2e_{}_", phase.replace('-', "_"));
    // `(^|::)e2e_<phase>_`: at the start, or right after a `::`.
    let in_phase = path.starts_with(&prefix)
        || path
            .match_indices("::")
            .any(|(i, _)| path[i + 2..].starts_with(&prefix));
    let in_engine = suite.engines.len() < 2
        || match engine {
            Engine::Any => true,
            Engine::Postgresql => path.contains("postgresql"),
            Engine::Mysql => path.contains("mysql") || path.contains("mariadb"),
        };
    in_phase && in_engine
}

/// Runs the phase; `missing` when no test implements it for this cell. Its scenario tests
/// report into `report` (a file of the cell's run directory, emptied first).
pub fn run(
    suite: &Suite,
    phase: &str,
    engine: Engine,
    cluster_dir: &Path,
    report: &Path,
    listed: &[String],
) -> Phase {
    let started = Instant::now();
    let filter = filter(suite, phase, engine);
    let tests = listed.iter().filter(|t| matches(suite, phase, engine, t)).count();
    let mut cmd = match crate::tools::nextest() {
        Ok(cmd) => cmd,
        Err(err) => return failed_to_start(phase, suite, started, &format!("{err:#}")),
    };
    cmd.current_dir(workspace_root())
        .args([
            "run",
            "--workspace",
            "--profile",
            "ci",
            "--no-tests",
            "fail",
            "-E",
            &filter,
        ])
        .env("PTAH_CLUSTER_DIR", cluster_dir)
        .env(scenario::FILE_ENV, report);
    let command = describe(&cmd);
    let (outcome, reason, scenarios) = if tests == 0 {
        (
            Outcome::Missing,
            Some(format!("no test matches {filter}")),
            Vec::new(),
        )
    } else if let Err(err) = remove_stale(report) {
        (Outcome::Fail, Some(err), Vec::new())
    } else {
        let (outcome, reason) = match cmd.status() {
            Ok(status) if status.success() => (Outcome::Pass, None),
            Ok(status) => (Outcome::Fail, Some(format!("nextest exited with {status}"))),
            Err(err) => (Outcome::Fail, Some(format!("cannot start nextest: {err}"))),
        };
        with_report(outcome, reason, report)
    };
    Phase {
        name: phase.to_owned(),
        outcome,
        tests,
        prepare: suite.prepare.iter().any(|p| p == phase),
        duration_seconds: started.elapsed().as_secs_f64(),
        command,
        reason,
        scenarios,
    }
}

/// A report left by an earlier phase of the same name would be read as this one's.
fn remove_stale(report: &Path) -> Result<(), String> {
    match std::fs::remove_file(report) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(format!(
            "cannot remove the stale scenario report {}: {err}",
            report.display()
        )),
    }
}

/// The phase's verdict with its scenario report read from `report`: a report that cannot be read
/// fails the phase, saying which file and line.
fn with_report(
    outcome: Outcome,
    reason: Option<String>,
    report: &Path,
) -> (Outcome, Option<String>, Vec<Record>) {
    match scenario::read(report) {
        Ok(records) => (outcome, reason, records),
        Err(err) => {
            let reason = match reason {
                Some(reason) => format!("{reason}; {err}"),
                None => err.to_string(),
            };
            (Outcome::Fail, Some(reason), Vec::new())
        }
    }
}

/// A phase not run, with the reason.
pub fn skipped(suite: &Suite, phase: &str, reason: &str) -> Phase {
    Phase {
        name: phase.to_owned(),
        outcome: Outcome::Skip,
        tests: 0,
        prepare: suite.prepare.iter().any(|p| p == phase),
        duration_seconds: 0.0,
        command: String::new(),
        reason: Some(reason.to_owned()),
        scenarios: Vec::new(),
    }
}

/// The phase, failed before nextest could start (it could not be installed).
fn failed_to_start(phase: &str, suite: &Suite, started: Instant, why: &str) -> Phase {
    Phase {
        name: phase.to_owned(),
        outcome: Outcome::Fail,
        tests: 0,
        prepare: suite.prepare.iter().any(|p| p == phase),
        duration_seconds: started.elapsed().as_secs_f64(),
        command: "cargo nextest run".to_owned(),
        reason: Some(format!("cannot install cargo-nextest: {why}")),
        scenarios: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2e::suites::parse;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ptah-xtask-phase-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn the_report_the_writer_appends_is_stored_with_the_phase() {
        let dir = scratch("report");
        let report = dir.join("data-plane-1.35-local-any.dataplane.scenarios.jsonl");
        // No file: no scenario ran, and the verdict stands.
        assert_eq!(
            with_report(Outcome::Pass, None, &report),
            (Outcome::Pass, None, Vec::new())
        );
        // A line exactly as the contract documents it, then one from the tests' writer.
        let documented = r#"{"scenario": "e2e_dataplane_job_deletion", "engine": "mysql", "apply_jobs": {"users-7f": 1}, "database": "failed: users missing", "leak_scan": "clean", "seconds": 41.25}"#;
        std::fs::write(&report, format!("{documented}\n")).expect("write");
        let written: Record = serde_json::from_str(documented).expect("documented line");
        let second = Record {
            scenario: "e2e_dataplane_registry_outage".to_owned(),
            ..written.clone()
        };
        second.append_to(&report).expect("append");
        let (outcome, reason, scenarios) = with_report(Outcome::Pass, None, &report);
        assert_eq!((outcome, reason), (Outcome::Pass, None));
        assert_eq!(scenarios, vec![written, second]);
        assert_eq!(scenarios[0].apply_jobs.get("users-7f"), Some(&1));
        // The next run of the phase starts from an empty report.
        remove_stale(&report).expect("remove");
        assert!(!report.exists());
        remove_stale(&report).expect("nothing to remove");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_malformed_report_fails_the_phase_naming_the_file_and_line() {
        let dir = scratch("malformed");
        let report = dir.join("cell.dataplane.scenarios.jsonl");
        std::fs::write(&report, "{\"scenario\": \"x\"}\n").expect("write");
        let (outcome, reason, scenarios) = with_report(Outcome::Pass, None, &report);
        assert_eq!(outcome, Outcome::Fail);
        assert!(scenarios.is_empty());
        let reason = reason.expect("reason");
        assert!(
            reason.contains(&format!("{}:1: not a scenario record", report.display())),
            "{reason}"
        );
        // A phase that failed already keeps its reason too.
        let (_, reason, _) = with_report(Outcome::Fail, Some("nextest exited with 100".to_owned()), &report);
        let reason = reason.expect("reason");
        assert!(
            reason.starts_with("nextest exited with 100; ") && reason.contains(":1:"),
            "{reason}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_suite_split_by_engine_narrows_each_cell_to_its_engine() {
        let suites = parse(
            r#"{"suites":[{"name":"s","phases":["schema-lifecycle"],"ci":"default","engines":["postgresql","mysql"]},
                {"name":"m","phases":["migrations-mysql","alerting"],"ci":"default","engines":["mysql"]}]}"#,
        )
        .expect("suites");
        assert_eq!(
            filter(&suites[0], "schema-lifecycle", Engine::Mysql),
            "test(/(^|::)e2e_schema_lifecycle_/) & test(/mysql|mariadb/)"
        );
        // One engine: every test of the phase belongs to the cell, named for the engine or not.
        assert_eq!(
            filter(&suites[1], "alerting", Engine::Mysql),
            "test(/(^|::)e2e_alerting_/)"
        );
    }
}
