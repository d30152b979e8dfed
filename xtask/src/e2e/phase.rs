//! One phase of one cell: the `e2e_<phase>_…` tests, narrowed to the cell's engine when the
//! suite splits by engine, run by nextest against the cluster in `PTAH_CLUSTER_DIR`.

use std::{path::Path, time::Instant};

use ptah_testenv::step::{describe, workspace_root};

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

/// Runs the phase; `missing` when no test implements it for this cell.
pub fn run(suite: &Suite, phase: &str, engine: Engine, cluster_dir: &Path, listed: &[String]) -> Phase {
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
        .env("PTAH_CLUSTER_DIR", cluster_dir);
    let command = describe(&cmd);
    let (outcome, reason) = if tests == 0 {
        (Outcome::Missing, Some(format!("no test matches {filter}")))
    } else {
        match cmd.status() {
            Ok(status) if status.success() => (Outcome::Pass, None),
            Ok(status) => (Outcome::Fail, Some(format!("nextest exited with {status}"))),
            Err(err) => (Outcome::Fail, Some(format!("cannot start nextest: {err}"))),
        }
    };
    Phase {
        name: phase.to_owned(),
        outcome,
        tests,
        prepare: suite.prepare.iter().any(|p| p == phase),
        duration_seconds: started.elapsed().as_secs_f64(),
        command,
        reason,
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::e2e::suites::parse;

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
