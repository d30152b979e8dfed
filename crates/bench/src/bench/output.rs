//! What every benchmark shares about its output: the profile it was built with and its JSON file.

use std::path::{Path, PathBuf};

use anyhow::Context;
use ptah_testenv::step::workspace_root;
use serde_json::Value;

/// The profile this bench binary was built with, as every report names it.
pub(super) fn build() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Where benchmark `name` writes its JSON: `output` if given, else `target/bench/<name>.json`.
pub(super) fn path(output: Option<PathBuf>, name: &str) -> PathBuf {
    output.unwrap_or_else(|| workspace_root().join(format!("target/bench/{name}.json")))
}

/// Writes `report` to `path` (its directory created), pretty and newline-terminated.
pub(super) fn write(path: &Path, report: &Value) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, serde_json::to_string_pretty(report)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))
}
