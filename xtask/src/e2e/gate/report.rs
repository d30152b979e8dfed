//! The per-scenario report of a cell as the gate prints it, and the failures it holds of its own.
//!
//! The table is Markdown (one row per scenario, in the order the phases ran them), so it reads on
//! a terminal and pastes into a note as it is.

use std::fmt::Write as _;

use ptah_testenv::scenario::Record;

use crate::e2e::cell::Cell;

/// The table's header row.
const HEADER: [&str; 6] = [
    "scenario",
    "engine",
    "Apply Jobs per plan",
    "database",
    "leak scan",
    "seconds",
];

/// Every scenario record of the cell, in phase order.
fn records(cell: &Cell) -> impl Iterator<Item = &Record> {
    cell.phases.iter().flat_map(|p| p.scenarios.iter())
}

/// `plan=n, …` (in plan-name order), or `none` when the scenario counted no plan.
fn apply_jobs(record: &Record) -> String {
    if record.apply_jobs.is_empty() {
        return "none".to_owned();
    }
    record
        .apply_jobs
        .iter()
        .map(|(plan, jobs)| format!("{plan}={jobs}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table cell's text: one line, with `|` escaped.
fn escape(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// The cell's scenario table under a heading naming the cell; `None` when it has no scenarios.
pub fn table(cell: &Cell) -> Option<String> {
    let rows: Vec<[String; 6]> = records(cell)
        .map(|r| {
            [
                escape(&r.scenario),
                r.engine.to_string(),
                escape(&apply_jobs(r)),
                escape(&r.database.to_string()),
                escape(&r.leak_scan.to_string()),
                format!("{:.1}", r.seconds),
            ]
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &rows {
        for (width, text) in widths.iter_mut().zip(row) {
            *width = (*width).max(text.chars().count());
        }
    }
    let line = |texts: &[String]| {
        let padded: Vec<String> = texts
            .iter()
            .zip(widths)
            .enumerate()
            // The seconds column is right-aligned; the others left.
            .map(|(i, (t, w))| match i {
                5 => format!("{t:>w$}"),
                _ => format!("{t:<w$}"),
            })
            .collect();
        format!("| {} |", padded.join(" | "))
    };
    let mut out = format!("{} ({} scenarios):\n", cell.key(), rows.len());
    let _ = writeln!(out, "{}", line(&HEADER.map(str::to_owned)));
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let _ = writeln!(out, "|-{}-|", rule.join("-|-"));
    for row in &rows {
        let _ = writeln!(out, "{}", line(row));
    }
    Some(out)
}

/// Every scenario of the cell that says its database failed or a password leaked, whatever
/// nextest said of its phase.
pub fn failures(cell: &Cell) -> Vec<String> {
    let key = cell.key();
    let mut failures = Vec::new();
    for r in records(cell) {
        for why in r.failures() {
            failures.push(format!("{key}: scenario {} ({}) {why}", r.scenario, r.engine));
        }
    }
    failures
}

#[cfg(test)]
mod tests {
    use ptah_testenv::scenario::{Database, Engine, LeakScan};

    use super::*;
    use crate::e2e::cell::{FORMAT_VERSION, Outcome, Phase, Versions};

    fn record(scenario: &str, engine: Engine, jobs: &[(&str, u32)], seconds: f64) -> Record {
        Record {
            scenario: scenario.to_owned(),
            engine,
            apply_jobs: jobs.iter().map(|(p, n)| ((*p).to_owned(), *n)).collect(),
            database: Database::Ok,
            leak_scan: LeakScan::Clean,
            seconds,
        }
    }

    fn cell(scenarios: Vec<Record>) -> Cell {
        Cell {
            format_version: FORMAT_VERSION,
            run_id: "1-c0ffee".to_owned(),
            commit: "c0ffee".to_owned(),
            suite: "data-plane".to_owned(),
            minor: "1.35".to_owned(),
            provider: "local".to_owned(),
            engine: "any".to_owned(),
            started_at: 1,
            duration_seconds: 1.0,
            outcome: Outcome::Pass,
            versions: Versions::default(),
            phases: vec![Phase {
                name: "dataplane".to_owned(),
                outcome: Outcome::Pass,
                tests: scenarios.len(),
                prepare: false,
                duration_seconds: 1.0,
                command: String::new(),
                reason: None,
                scenarios,
            }],
        }
    }

    #[test]
    fn the_table_has_a_row_per_scenario_with_every_column() {
        let mut leaked = record("e2e_dataplane_job_deletion", Engine::Mysql, &[], 3.04);
        leaked.leak_scan = LeakScan::Leaked("Event x|y".to_owned());
        let table = table(&cell(vec![
            record(
                "e2e_dataplane_registry_outage",
                Engine::Postgresql,
                &[("users-1", 0), ("orders-2", 1)],
                12.0,
            ),
            leaked,
        ]))
        .expect("table");
        let expected = "\
data-plane-1.35-local-any (2 scenarios):
| scenario                      | engine     | Apply Jobs per plan   | database | leak scan          | seconds |
|-------------------------------|------------|-----------------------|----------|--------------------|---------|
| e2e_dataplane_registry_outage | postgresql | orders-2=1, users-1=0 | ok       | clean              |    12.0 |
| e2e_dataplane_job_deletion    | mysql      | none                  | ok       | leaked: Event x\\|y |     3.0 |
";
        assert_eq!(table, expected, "\n{table}");
    }

    #[test]
    fn a_cell_without_scenarios_has_no_table_and_no_failures() {
        assert_eq!(table(&cell(Vec::new())), None);
        assert_eq!(failures(&cell(Vec::new())), Vec::<String>::new());
    }

    #[test]
    fn a_failed_database_and_a_leak_are_each_named() {
        let mut failed = record("e2e_dataplane_reset", Engine::Postgresql, &[("p", 1)], 1.0);
        failed.database = Database::Failed("revision table has 2 rows".to_owned());
        failed.leak_scan = LeakScan::Leaked("Pod log a".to_owned());
        let found = failures(&cell(vec![
            record("e2e_dataplane_ok", Engine::Mysql, &[], 1.0),
            failed,
        ]));
        assert_eq!(
            found,
            vec![
                "data-plane-1.35-local-any: scenario e2e_dataplane_reset (postgresql) database failed: revision table has 2 rows",
                "data-plane-1.35-local-any: scenario e2e_dataplane_reset (postgresql) leaked: Pod log a",
            ]
        );
    }
}
