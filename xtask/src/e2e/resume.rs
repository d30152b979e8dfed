//! `cargo xtask e2e --resume <run id>`: continues a run that was cut off (a session's end, a
//! killed driver) at the same commit, running only the cells it has no result file for.
//!
//! The whole matrix takes longer than one working session here, so a matrix run is allowed to
//! span several invocations. It stays one run: one manifest, one commit, one clean tree, and the
//! gate holds it to the scope the manifest names. A cell that was recorded, failed or not, is
//! never run again: resuming fills gaps and cannot turn a failure green.

use std::{collections::BTreeSet, path::Path};

use anyhow::{Context, bail};
use ptah_testenv::k8s::Matrix;

use super::{
    cell::{self, Run},
    plan::Plan,
    suites::Suite,
};

/// A run being continued.
pub struct Resumed {
    /// Its manifest, unchanged.
    pub run: Run,
    /// The minors and suites of its manifest.
    pub plan: Plan,
    /// The keys of the cells it already has a result for.
    pub recorded: BTreeSet<String>,
}

/// Loads run `run_id` to continue it at `commit`; refuses another commit, a dirty tree or a run
/// of another provider, and marks it the latest run again.
pub fn resume(
    root: &Path,
    run_id: &str,
    provider: &str,
    matrix: &Matrix,
    all: &[Suite],
    commit: &str,
    dirty: bool,
) -> anyhow::Result<Resumed> {
    let (run, cells) = cell::load_run(root, run_id).with_context(|| format!("cannot resume run {run_id}"))?;
    if run.commit != commit {
        bail!(
            "run {run_id} ran commit {}, and HEAD is {commit}: a run covers one commit, so start a new one",
            run.commit
        );
    }
    if dirty || run.dirty {
        bail!("run {run_id} cannot be resumed from a working tree that differs from its commit");
    }
    if run.provider != provider {
        bail!(
            "run {run_id} ran on the {} provider, not {provider}",
            run.provider
        );
    }
    let minors = run
        .minors
        .iter()
        .map(|m| matrix.select(Some(m)).cloned())
        .collect::<anyhow::Result<Vec<_>>>()?;
    let suites = run
        .suites
        .iter()
        .map(|name| {
            all.iter()
                .find(|s| &s.name == name)
                .cloned()
                .with_context(|| format!("run {run_id} names suite {name:?}, which no longer exists"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let recorded = cells.iter().map(cell::Cell::key).collect();
    cell::mark_latest(root, run_id)?;
    Ok(Resumed {
        plan: Plan {
            scope: run.scope,
            minors,
            suites,
        },
        run,
        recorded,
    })
}

#[cfg(test)]
mod tests {
    use ptah_testenv::step::workspace_root;

    use super::*;
    use crate::e2e::{
        cell::{FORMAT_VERSION, Scope},
        suites,
    };

    fn run(commit: &str, dirty: bool) -> Run {
        Run {
            format_version: FORMAT_VERSION,
            run_id: "7-abc".to_owned(),
            commit: commit.to_owned(),
            dirty,
            started_at: 7,
            scope: Scope::Matrix,
            provider: "local".to_owned(),
            minors: vec!["1.36".to_owned()],
            suites: vec!["certificates".to_owned()],
        }
    }

    #[test]
    fn a_run_resumes_at_its_own_commit_with_the_cells_it_has() {
        let root = workspace_root();
        let matrix = Matrix::load(&root).expect("matrix");
        let all = suites::load(&root).expect("suites");
        let scratch = tempfile::tempdir().expect("tempdir");
        let dir = cell::start_run(scratch.path(), &run("abc", false)).expect("start");
        let suite = all.iter().find(|s| s.name == "certificates").expect("suite");
        let engine = suite.engines[0].name();
        let key = cell::key("certificates", "1.36", "local", engine);
        let text = format!(
            r#"{{"formatVersion":2,"runId":"7-abc","commit":"abc","suite":"certificates","minor":"1.36","provider":"local","engine":"{engine}","startedAt":8,"durationSeconds":1.0,"outcome":"fail","versions":{{"apiServer":"","kubelet":"","containerRuntime":"","postgresql":"","mysql":""}},"phases":[]}}"#
        );
        std::fs::write(dir.join(format!("{key}.json")), text).expect("cell");
        let resumed = resume(scratch.path(), "7-abc", "local", &matrix, &all, "abc", false).expect("resumed");
        assert_eq!(resumed.plan.scope, Scope::Matrix);
        assert_eq!(resumed.plan.minors[0].minor, "1.36");
        assert_eq!(resumed.plan.suites[0].name, "certificates");
        assert!(resumed.recorded.contains(&key), "{:?}", resumed.recorded);
        assert_eq!(cell::latest_run(scratch.path()).expect("latest"), "7-abc");
    }

    #[test]
    fn another_commit_a_dirty_tree_or_another_provider_is_refused() {
        let root = workspace_root();
        let matrix = Matrix::load(&root).expect("matrix");
        let all = suites::load(&root).expect("suites");
        let scratch = tempfile::tempdir().expect("tempdir");
        cell::start_run(scratch.path(), &run("abc", false)).expect("start");
        let refused = |commit: &str, dirty: bool, provider: &str| {
            let result = resume(scratch.path(), "7-abc", provider, &matrix, &all, commit, dirty);
            format!("{:#}", result.err().expect("refused"))
        };
        assert!(refused("def", false, "local").contains("a run covers one commit"));
        assert!(refused("abc", true, "local").contains("differs from its commit"));
        assert!(refused("abc", false, "kind").contains("not kind"));
        assert!(refused_missing(&matrix, &all).contains("cannot resume run 9-none"));
    }

    fn refused_missing(matrix: &Matrix, all: &[Suite]) -> String {
        let scratch = tempfile::tempdir().expect("tempdir");
        let result = resume(scratch.path(), "9-none", "local", matrix, all, "abc", false);
        format!("{:#}", result.err().expect("refused"))
    }
}
