//! `cargo xtask e2e --suite NAME [--provider local|kind] [--kubernetes 1.36]`: runs one suite of
//! `support/e2e-suites.json` against a cluster and writes a machine-readable result file.
//!
//! A phase `cert-rotation` is the set of tests whose name starts with `e2e_cert_rotation_` in any
//! workspace crate (run with nextest; the default nextest filter leaves `e2e_` tests out of the
//! ordinary test run). A phase with no such test is recorded as `missing`: a gap is never green.
//!
//! Result file `target/e2e/results/<suite>-<minor>-<provider>.json` (format 1):
//! `{formatVersion, suite, minor, kubernetesVersion, provider, startedAt (unix s), durationSeconds,
//! outcome, phases: [{name, outcome: pass|fail|skip|missing, durationSeconds, command}]}`; the
//! suite's outcome is `pass` only when every phase passed. A later `cargo xtask gate` reads these.

pub mod relay;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
    time::{Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::{
    k8s::{Matrix, Minor},
    step::{cargo, describe, step, workspace_root},
};

/// Format version of the result files.
pub const FORMAT_VERSION: u32 = 1;

/// Where the cluster comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Provider {
    /// `cargo xtask cluster up` on this machine (components built from Go modules).
    Local,
    /// One kind cluster per minor (`kind create cluster --image <kindNodeImage>`), for machines
    /// with Docker. It cannot run here (no Docker engine).
    Kind,
}

impl Provider {
    fn name(self) -> &'static str {
        match self {
            Provider::Local => "local",
            Provider::Kind => "kind",
        }
    }
}

/// Arguments of `cargo xtask e2e`.
#[derive(clap::Args)]
pub struct Args {
    /// The suite's name in support/e2e-suites.json.
    #[arg(long)]
    suite: String,
    /// Where the cluster comes from.
    #[arg(long, value_enum, default_value_t = Provider::Local)]
    provider: Provider,
    /// The Kubernetes minor from matrix/kubernetes.json; default: its default minor.
    #[arg(long)]
    kubernetes: Option<String>,
}

/// Runs `cargo xtask e2e`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    let matrix = Matrix::load(&root)?;
    let minor = matrix.select(args.kubernetes.as_deref())?.clone();
    let suites = load_suites(&root.join("support").join("e2e-suites.json"))?;
    let Some(phases) = suites
        .iter()
        .find(|(name, _)| *name == args.suite)
        .map(|(_, p)| p.clone())
    else {
        let known: Vec<&str> = suites.iter().map(|(n, _)| n.as_str()).collect();
        bail!(
            "no suite {:?} in support/e2e-suites.json (known: {})",
            args.suite,
            known.join(", ")
        );
    };
    let started_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let started = Instant::now();
    let cluster_dir = step(
        &format!("{} cluster for Kubernetes {}", args.provider.name(), minor.minor),
        || provide(args.provider, &minor, &matrix, &root),
    )?;
    let mut results = Vec::new();
    for phase in &phases {
        let result = step(&format!("phase {phase}"), || Ok(run_phase(phase, &cluster_dir)))?;
        results.push(result);
    }
    let report = report(
        &args.suite,
        &minor,
        args.provider,
        started_at,
        started.elapsed().as_secs_f64(),
        results,
    );
    let dir = root.join("target").join("e2e").join("results");
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(format!(
        "{}-{}-{}.json",
        args.suite,
        minor.minor,
        args.provider.name()
    ));
    fs::write(&path, serde_json::to_string_pretty(&report)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("e2e {}: {} ({})", args.suite, report["outcome"], path.display());
    if report["outcome"] != "pass" {
        bail!("suite {} did not pass: see {}", args.suite, path.display());
    }
    Ok(())
}

/// `(suite, phases)` from the suites file.
fn load_suites(path: &Path) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let text = fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    parse_suites(&text).with_context(|| format!("in {}", path.display()))
}

fn parse_suites(text: &str) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let json: Value = serde_json::from_str(text).context("not JSON")?;
    let suites = json["suites"].as_array().context("no `suites` array")?;
    suites
        .iter()
        .map(|suite| {
            let name = suite["name"]
                .as_str()
                .context("a suite without a name")?
                .to_owned();
            let phases = suite["phases"]
                .as_array()
                .with_context(|| format!("suite {name} has no phases"))?
                .iter()
                .map(|p| p.as_str().map(str::to_owned).context("a phase is not a string"))
                .collect::<anyhow::Result<Vec<_>>>()?;
            Ok((name, phases))
        })
        .collect()
}

/// Starts (or keeps) the cluster and returns the directory whose `cluster.json` tests read.
fn provide(provider: Provider, minor: &Minor, matrix: &Matrix, root: &Path) -> anyhow::Result<PathBuf> {
    match provider {
        Provider::Local => {
            crate::step::run(
                cargo()
                    .args([
                        "xtask",
                        "cluster",
                        "up",
                        "--tier",
                        "full",
                        "--kubernetes",
                        &minor.minor,
                    ])
                    .current_dir(root),
            )?;
            // Suites run the locally built images; the registry may have been recreated since
            // they were last pushed, so build (incrementally) and push them every time.
            crate::step::run(cargo().args(["xtask", "images"]).current_dir(root))?;
            Ok(root.join("target").join("cluster"))
        }
        Provider::Kind => {
            let dir = root
                .join("target")
                .join("e2e")
                .join(format!("kind-{}", minor.minor));
            fs::create_dir_all(&dir)?;
            let kubeconfig = dir.join("admin.kubeconfig");
            let mut create = kind_create(minor, &kubeconfig);
            eprintln!(
                "    kind {} (sigs.k8s.io/kind): {}",
                matrix.kind,
                describe(&create)
            );
            crate::step::run(&mut create).context(
                "kind needs a Docker engine, which these machines do not have; use --provider local",
            )?;
            // kind has one (admin) identity; tests acting as a person need a user kubeconfig,
            // which the kind path does not create yet, so it names the admin one and says so.
            let state = json!({
                "tier": "full", "version": minor.version, "server": "",
                "adminKubeconfig": kubeconfig, "userKubeconfig": kubeconfig,
                "userName": "kind-admin (no unprivileged user on kind yet)",
            });
            fs::write(dir.join("cluster.json"), serde_json::to_string_pretty(&state)?)?;
            Ok(dir)
        }
    }
}

/// `kind create cluster` for one minor with its node image from the matrix.
fn kind_create(minor: &Minor, kubeconfig: &Path) -> Command {
    let mut cmd = Command::new("kind");
    cmd.args(["create", "cluster", "--name"])
        .arg(format!("ptah-{}", minor.minor.replace('.', "-")))
        .arg("--image")
        .arg(&minor.kind_node_image)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--wait", "120s"]);
    cmd
}

/// The nextest filter of a phase: tests named `e2e_<phase with underscores>_…`.
fn phase_filter(phase: &str) -> String {
    format!("test(/(^|::)e2e_{}_/)", phase.replace('-', "_"))
}

/// Runs one phase; `missing` when no test implements it.
fn run_phase(phase: &str, cluster_dir: &Path) -> Value {
    let started = Instant::now();
    let filter = phase_filter(phase);
    let mut list = cargo();
    list.args([
        "nextest",
        "list",
        "--workspace",
        "--ignore-default-filter",
        "-E",
        &filter,
        "--message-format",
        "oneline",
    ]);
    let count = list
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count()
        })
        .unwrap_or(0);
    let mut cmd = cargo();
    cmd.args([
        "nextest",
        "run",
        "--workspace",
        "--profile",
        "ci",
        "--ignore-default-filter",
        "-E",
        &filter,
    ])
    .env("PTAH_CLUSTER_DIR", cluster_dir);
    let command = describe(&cmd);
    let outcome = if count == 0 {
        "missing"
    } else {
        match cmd.status() {
            Ok(status) if status.success() => "pass",
            _ => "fail",
        }
    };
    json!({
        "name": phase,
        "outcome": outcome,
        "tests": count,
        "durationSeconds": started.elapsed().as_secs_f64(),
        "command": command,
    })
}

fn report(
    suite: &str,
    minor: &Minor,
    provider: Provider,
    started_at: u64,
    seconds: f64,
    phases: Vec<Value>,
) -> Value {
    let outcome = if !phases.is_empty() && phases.iter().all(|p| p["outcome"] == "pass") {
        "pass"
    } else {
        "fail"
    };
    json!({
        "formatVersion": FORMAT_VERSION,
        "suite": suite,
        "minor": minor.minor,
        "kubernetesVersion": minor.version,
        "provider": provider.name(),
        "startedAt": started_at,
        "durationSeconds": seconds,
        "outcome": outcome,
        "phases": phases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minor() -> Minor {
        Minor {
            minor: "1.35".to_owned(),
            version: "v1.35.4".to_owned(),
            etcd: "v3.6.16".to_owned(),
            kind_node_image: "kindest/node:v1.35.4".to_owned(),
            default: true,
        }
    }

    #[test]
    fn the_repository_suites_parse_with_phases() {
        let suites = load_suites(&workspace_root().join("support").join("e2e-suites.json")).expect("suites");
        assert!(!suites.is_empty());
        assert!(suites.iter().all(|(_, phases)| !phases.is_empty()));
        assert!(parse_suites(r#"{"suites":[{"name":"x"}]}"#).is_err());
    }

    #[test]
    fn a_suite_passes_only_when_every_phase_passed() {
        let pass = json!({"name": "a", "outcome": "pass"});
        let missing = json!({"name": "b", "outcome": "missing"});
        let all = report("s", &minor(), Provider::Local, 0, 1.0, vec![pass.clone()]);
        assert_eq!(all["outcome"], "pass");
        assert_eq!(all["formatVersion"], FORMAT_VERSION);
        assert_eq!(all["provider"], "local");
        let gap = report("s", &minor(), Provider::Kind, 0, 1.0, vec![pass, missing]);
        assert_eq!(gap["outcome"], "fail");
        assert_eq!(
            report("s", &minor(), Provider::Local, 0, 1.0, vec![])["outcome"],
            "fail"
        );
    }

    #[test]
    fn phases_map_to_e2e_test_names_and_kind_uses_the_matrix_image() {
        assert_eq!(phase_filter("cert-rotation"), "test(/(^|::)e2e_cert_rotation_/)");
        let cmd = kind_create(&minor(), Path::new("/k"));
        let line = describe(&cmd);
        assert!(line.contains("--image kindest/node:v1.35.4"), "{line}");
        assert!(line.contains("--name ptah-1-35"), "{line}");
    }
}
