//! Golden files: the exact Job of each operation, byte for byte. `UPDATE_GOLDEN=1` rewrites them;
//! by default a difference fails the test, so a change to the Job shape is always reviewed.

mod common;

use std::path::PathBuf;

use common::{ALL_OPS, intent};

fn golden_path(op: ptah_dataplane::Operation) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{}.json", op.as_str()))
}

#[test]
fn every_operation_matches_its_golden_file() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for op in ALL_OPS {
        let job = ptah_workload::build(&intent(op)).expect("the golden intent builds");
        let mut text = serde_json::to_string_pretty(&job).expect("json");
        text.push('\n');
        let path = golden_path(op);
        if update {
            // An update run is never green, so UPDATE_GOLDEN=1 in CI cannot pass a changed Job.
            if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
                continue;
            }
            std::fs::write(&path, &text).expect("write golden file");
            failures.push(format!(
                "{} rewritten: review the diff, then rerun without UPDATE_GOLDEN",
                path.display()
            ));
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == text => {}
            Ok(_) => failures.push(format!(
                "{} differs (UPDATE_GOLDEN=1 rewrites it)",
                path.display()
            )),
            Err(e) => failures.push(format!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
