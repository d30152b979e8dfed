//! What a suite leaves behind: every Helm release of the chart is uninstalled before and after
//! each suite, whatever its outcome (the chart's webhook configurations and ClusterRoles are
//! cluster-scoped, so one stale release makes the next `helm install` fail).

use std::{path::Path, process::Command};

use ptah_testenv::{
    k8s::{Binaries, Component, Matrix, Minor},
    step::{describe, output},
};
use serde_json::Value;

/// The chart's name in `helm list`.
const CHART: &str = "ptah-operator";

fn helm(cluster_dir: &Path, minor: &Minor, matrix: &Matrix) -> anyhow::Result<Command> {
    let helm = Binaries::new(minor, matrix)?.path(Component::Helm);
    let mut cmd = Command::new(helm);
    cmd.env("KUBECONFIG", cluster_dir.join("admin.kubeconfig"));
    Ok(cmd)
}

/// `(namespace, name)` of every release whose chart is this operator's.
pub fn ours(list: &str) -> anyhow::Result<Vec<(String, String)>> {
    let releases: Value = serde_json::from_str(list)?;
    Ok(releases
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            r["chart"]
                .as_str()
                .and_then(|c| c.strip_prefix(CHART))
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()))
        })
        .filter_map(|r| {
            Some((
                r["namespace"].as_str()?.to_owned(),
                r["name"].as_str()?.to_owned(),
            ))
        })
        .collect())
}

/// Uninstalls every release of the chart; a failure to clean up is printed, never fatal (the
/// next suite's cleanup tries again, and a release that still blocks it fails that suite).
pub fn releases(cluster_dir: &Path, minor: &Minor, matrix: &Matrix, suite: &str, when: &str) {
    let result = (|| -> anyhow::Result<Vec<String>> {
        let list = output(helm(cluster_dir, minor, matrix)?.args([
            "list",
            "--all-namespaces",
            "--all",
            "-o",
            "json",
        ]))?;
        let mut removed = Vec::new();
        for (namespace, name) in ours(&list)? {
            let mut cmd = helm(cluster_dir, minor, matrix)?;
            cmd.args([
                "uninstall",
                &name,
                "--namespace",
                &namespace,
                "--wait",
                "--timeout",
                "120s",
            ]);
            output(&mut cmd).map_err(|e| anyhow::anyhow!("{}: {e:#}", describe(&cmd)))?;
            removed.push(format!("{namespace}/{name}"));
        }
        Ok(removed)
    })();
    match result {
        Ok(removed) if removed.is_empty() => {}
        Ok(removed) => eprintln!("    cleanup {when} {suite}: uninstalled {}", removed.join(", ")),
        Err(err) => eprintln!("    cleanup {when} {suite}: FAILED: {err:#}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_charts_releases_are_uninstalled() {
        let list = r#"[
            {"name":"ptah","namespace":"ptah-system","chart":"ptah-operator-0.1.0"},
            {"name":"other","namespace":"x","chart":"ptah-operator-extras-1.0.0"},
            {"name":"db","namespace":"y","chart":"postgresql-15.0.0"}]"#;
        let found = ours(list).expect("list");
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0], ("ptah-system".to_owned(), "ptah".to_owned()));
        assert!(ours("not json").is_err());
    }
}
