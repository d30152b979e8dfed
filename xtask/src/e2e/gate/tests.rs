//! The gate over synthetic runs: a complete run passes, and each run missing one thing fails
//! with a failure that names it.

use jiff::civil::date;
use ptah_testenv::k8s::Matrix;

use super::{Evidence, evaluate};
use crate::e2e::{
    cell::{Cell, FORMAT_VERSION, Outcome, Phase, Run, Scope, Versions},
    suites::{self, Suite},
};

const MATRIX: &str = r#"{"lastVerified":"2026-11-29","minors":[
    {"minor":"1.35","version":"v1.35.4","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"v1_35","default":true},
    {"minor":"1.36","version":"v1.36.3","etcd":"e","kindNodeImage":"k","k8sOpenapiFeature":"v1_36"}],
    "components":{"helm":{"version":"v3.0.0"},"helm4":{"version":"v4.0.0"},"oras":{"version":"o"},"kind":{"version":"k"}}}"#;

const SUITES: &str = r#"{"suites":[
    {"name":"schema-lifecycle","phases":["schema-lifecycle"],"ci":"default","engines":["postgresql","mysql"]},
    {"name":"upgrades","phases":["install-old","upgrade"],"prepare":["install-old"],"ci":"matrix"}]}"#;

const HEAD: &str = "c0ffee";

struct Fixture {
    run: Run,
    cells: Vec<Cell>,
    suites: Vec<Suite>,
    matrix: Matrix,
    tests: Vec<String>,
}

fn phase(name: &str, prepare: bool) -> Phase {
    Phase {
        name: name.to_owned(),
        outcome: Outcome::Pass,
        tests: 1,
        prepare,
        duration_seconds: 1.0,
        command: "cargo nextest run".to_owned(),
        reason: None,
        scenarios: Vec::new(),
    }
}

/// A complete matrix run: every suite × minor × engine passed at HEAD.
fn complete() -> Fixture {
    let suites = suites::parse(SUITES).expect("suites");
    let matrix = Matrix::parse(MATRIX).expect("matrix");
    let run = Run {
        format_version: FORMAT_VERSION,
        run_id: "100-c0ffee".to_owned(),
        commit: HEAD.to_owned(),
        dirty: false,
        started_at: 100,
        scope: Scope::Matrix,
        provider: "local".to_owned(),
        minors: vec!["1.35".to_owned(), "1.36".to_owned()],
        suites: suites.iter().map(|s| s.name.clone()).collect(),
    };
    let mut cells = Vec::new();
    for suite in &suites {
        for minor in &run.minors {
            for engine in &suite.engines {
                cells.push(Cell {
                    format_version: FORMAT_VERSION,
                    run_id: run.run_id.clone(),
                    commit: HEAD.to_owned(),
                    suite: suite.name.clone(),
                    minor: minor.clone(),
                    provider: "local".to_owned(),
                    engine: engine.name().to_owned(),
                    started_at: 101,
                    duration_seconds: 2.0,
                    outcome: Outcome::Pass,
                    versions: Versions::default(),
                    phases: suite
                        .phases
                        .iter()
                        .map(|p| phase(p, suite.prepare.contains(p)))
                        .collect(),
                });
            }
        }
    }
    let tests = vec![
        "ptah-apitests::schema e2e_schema_lifecycle_postgresql".to_owned(),
        "ptah-apitests::upgrade e2e_upgrade_keeps_the_state".to_owned(),
    ];
    Fixture {
        run,
        cells,
        suites,
        matrix,
        tests,
    }
}

fn failures(f: &Fixture) -> Vec<String> {
    evaluate(&Evidence {
        run: &f.run,
        cells: &f.cells,
        suites: &f.suites,
        matrix: &f.matrix,
        head: HEAD,
        today: date(2026, 12, 1),
        e2e_tests: &f.tests,
    })
}

/// Exactly one failure, and it names `wanted`.
fn fails_naming(f: &Fixture, wanted: &[&str]) {
    let found = failures(f);
    assert_eq!(found.len(), 1, "{found:#?}");
    for w in wanted {
        assert!(found[0].contains(w), "{w:?} not in {:?}", found[0]);
    }
}

fn cell_mut<'a>(f: &'a mut Fixture, key: &str) -> &'a mut Cell {
    f.cells.iter_mut().find(|c| c.key() == key).expect("cell")
}

#[test]
fn a_complete_matrix_run_passes() {
    let f = complete();
    assert_eq!(f.cells.len(), 6);
    assert_eq!(failures(&f), Vec::<String>::new());
}

#[test]
fn a_missing_cell_is_named() {
    let mut f = complete();
    f.cells.retain(|c| c.key() != "schema-lifecycle-1.36-local-mysql");
    fails_naming(&f, &["schema-lifecycle-1.36-local-mysql", "missing"]);
}

#[test]
fn a_failed_a_skipped_and_a_testless_phase_are_each_named() {
    let mut f = complete();
    let cell = cell_mut(&mut f, "schema-lifecycle-1.35-local-postgresql");
    cell.phases[0].outcome = Outcome::Fail;
    cell.outcome = Outcome::Fail;
    fails_naming(&f, &["schema-lifecycle-1.35-local-postgresql", "failed"]);

    let mut f = complete();
    let cell = cell_mut(&mut f, "upgrades-1.36-local-any");
    cell.phases[1].outcome = Outcome::Skip;
    cell.phases[1].reason = Some("the local provider has no isolation-worker".to_owned());
    fails_naming(
        &f,
        &[
            "upgrades-1.36-local-any",
            "upgrade",
            "skipped",
            "isolation-worker",
        ],
    );

    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.35-local-any").phases[1].tests = 0;
    fails_naming(&f, &["upgrades-1.35-local-any", "zero tests"]);

    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.35-local-any").phases[1].outcome = Outcome::Missing;
    fails_naming(&f, &["upgrades-1.35-local-any", "no test implements it"]);
}

#[test]
fn a_preparation_alone_is_not_coverage() {
    let mut f = complete();
    // The cell recorded only the phase that prepares the upgrade.
    cell_mut(&mut f, "upgrades-1.36-local-any").phases.truncate(1);
    fails_naming(&f, &["upgrades-1.36-local-any", "phase upgrade not recorded"]);

    let mut f = complete();
    let cell = cell_mut(&mut f, "upgrades-1.36-local-any");
    cell.phases[0].outcome = Outcome::Fail;
    fails_naming(&f, &["install-old (preparation) failed"]);
}

#[test]
fn stale_cells_are_named() {
    let mut f = complete();
    cell_mut(&mut f, "schema-lifecycle-1.35-local-mysql").commit = "deadbeef".to_owned();
    fails_naming(&f, &["schema-lifecycle-1.35-local-mysql", "stale", "deadbeef"]);

    let mut f = complete();
    cell_mut(&mut f, "schema-lifecycle-1.35-local-mysql").run_id = "50-c0ffee".to_owned();
    fails_naming(&f, &["schema-lifecycle-1.35-local-mysql", "stale", "50-c0ffee"]);

    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.35-local-any").started_at = 99;
    fails_naming(&f, &["upgrades-1.35-local-any", "started before"]);

    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.35-local-any").format_version = 1;
    fails_naming(&f, &["upgrades-1.35-local-any", "format 1"]);
}

#[test]
fn a_run_of_another_commit_or_a_dirty_tree_is_refused() {
    let mut f = complete();
    f.run.dirty = true;
    fails_naming(&f, &["working tree", "differed"]);

    let mut f = complete();
    f.run.commit = "0ld".to_owned();
    for cell in &mut f.cells {
        cell.commit = "0ld".to_owned();
    }
    fails_naming(&f, &["ran commit 0ld", "HEAD is c0ffee"]);
}

#[test]
fn an_old_last_verified_fails_and_says_how_to_refresh_it() {
    let mut f = complete();
    f.matrix.last_verified = "2026-10-26".to_owned();
    // 36 days before 2026-12-01.
    fails_naming(
        &f,
        &[
            "lastVerified is 2026-10-26",
            "36 days",
            "cargo xtask e2e --matrix",
        ],
    );

    let mut f = complete();
    f.matrix.last_verified = "2026-10-27".to_owned();
    assert_eq!(failures(&f), Vec::<String>::new(), "35 days is within the limit");

    let mut f = complete();
    f.matrix.last_verified = "yesterday".to_owned();
    fails_naming(&f, &["not a YYYY-MM-DD date"]);
}

#[test]
fn an_e2e_test_outside_every_suite_is_named() {
    let mut f = complete();
    f.tests
        .push("ptah-apitests::misc e2e_orphan_does_things".to_owned());
    fails_naming(&f, &["e2e_orphan_does_things", "implements no phase"]);
}

#[test]
fn the_ci_scope_owes_only_the_default_suites_on_the_default_minor() {
    let mut f = complete();
    f.run.scope = Scope::Ci;
    f.cells
        .retain(|c| c.suite == "schema-lifecycle" && c.minor == "1.35");
    // lastVerified is the matrix's business, not the CI path's.
    f.matrix.last_verified = "2020-01-01".to_owned();
    assert_eq!(failures(&f), Vec::<String>::new());
    f.cells.retain(|c| c.engine != "mysql");
    fails_naming(&f, &["schema-lifecycle-1.35-local-mysql", "missing"]);
}

#[test]
fn a_run_of_hand_picked_suites_is_no_proof() {
    let mut f = complete();
    f.run.scope = Scope::Picked;
    let found = failures(&f);
    assert!(found.iter().any(|m| m.contains("picked by hand")), "{found:#?}");
    // Its own cells are still judged: the minors and suites it set out to run.
    f.run.minors = vec!["1.36".to_owned()];
    f.run.suites = vec!["upgrades".to_owned()];
    f.cells.retain(|c| c.key() != "upgrades-1.36-local-any");
    let found = failures(&f);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[1].contains("upgrades-1.36-local-any: missing"),
        "{found:#?}"
    );
}

#[test]
fn a_scenario_whose_database_failed_or_leaked_fails_its_cell_though_nextest_passed() {
    use ptah_testenv::scenario::{Database, Engine, LeakScan, Record};
    let record = Record {
        scenario: "e2e_upgrade_keeps_the_state".to_owned(),
        engine: Engine::Postgresql,
        apply_jobs: [("users-1".to_owned(), 1)].into_iter().collect(),
        database: Database::Ok,
        leak_scan: LeakScan::Clean,
        seconds: 4.0,
    };
    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.35-local-any").phases[1]
        .scenarios
        .push(record.clone());
    assert_eq!(failures(&f), Vec::<String>::new(), "a clean scenario passes");

    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.35-local-any").phases[1]
        .scenarios
        .push(Record {
            database: Database::Failed("the revision table has 2 rows".to_owned()),
            ..record.clone()
        });
    fails_naming(
        &f,
        &[
            "upgrades-1.35-local-any",
            "scenario e2e_upgrade_keeps_the_state (postgresql)",
            "database failed: the revision table has 2 rows",
        ],
    );

    let mut f = complete();
    cell_mut(&mut f, "upgrades-1.36-local-any").phases[1]
        .scenarios
        .push(Record {
            leak_scan: LeakScan::Leaked("Pod log ptah-apply-1".to_owned()),
            ..record
        });
    fails_naming(&f, &["upgrades-1.36-local-any", "leaked: Pod log ptah-apply-1"]);
}
