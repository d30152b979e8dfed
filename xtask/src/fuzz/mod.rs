//! `cargo xtask fuzz`: build every cargo-fuzz target of `fuzz/` with the nightly toolchain, run
//! each for a fixed time from a scratch copy of its checked-in seed corpus, and fail on any crash,
//! on an empty target list and on a target that executed nothing.
//!
//! The scratch corpora and crash artifacts live in `target/fuzz/<target>/` (outside the checked-in
//! corpus, so a run never edits the repository); the fuzz workspace builds in `<cache>/fuzz/target`
//! beside the Kubernetes cache, so a fresh clone on the same machine (CI) reuses the sanitizer build.

mod stats;

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Instant,
};

use anyhow::{Context, bail};
use ptah_testenv::step::{cargo, describe, output, run as run_command, step, workspace_root};

use stats::{Outcome, Stats};

/// The toolchain cargo-fuzz needs (sanitizers and `-Zsanitizer` are nightly-only).
const TOOLCHAIN: &str = "nightly";
/// libFuzzer's limit for one input: a slower input is reported as a timeout, which fails the run.
const INPUT_TIMEOUT_SECONDS: u64 = 60;

/// Arguments of `cargo xtask fuzz`.
#[derive(clap::Args)]
pub struct Args {
    /// How long each target runs, in seconds.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    seconds: u64,
    /// Run only this target (repeatable); the default is every target of fuzz/Cargo.toml.
    #[arg(long = "target", value_name = "NAME")]
    targets: Vec<String>,
}

impl Args {
    /// What `cargo xtask test` runs: every target for 15 seconds. Seventeen targets at 20 s would
    /// push `.ci/run` past its 75 minutes; the longer campaigns run by hand (docs/development.md).
    pub fn ci() -> Self {
        Args {
            seconds: 15,
            targets: Vec::new(),
        }
    }
}

/// Builds, runs and reports every selected target; fails after the table when any failed.
pub fn run(args: Args) -> anyhow::Result<()> {
    let root = workspace_root();
    step("nightly toolchain present", ensure_nightly)?;
    step("cargo-fuzz present", ensure_cargo_fuzz)?;
    let all = step("cargo fuzz list", || list_targets(&root))?;
    let targets = select(&all, &args.targets)?;
    let build_dir = fuzz_target_dir()?;
    eprintln!(
        "the first build takes about 10 minutes on 2 idle cores (later ones about 1), in {}",
        build_dir.display()
    );
    // cargo-fuzz has no --locked: a stale lock would be rewritten by the build and leave the
    // tree dirty, which the e2e gate then refuses half an hour later.
    step("fuzz/Cargo.lock is current", || {
        output(cargo().current_dir(&root).args([
            "metadata",
            "--locked",
            "--format-version",
            "1",
            "--manifest-path",
            "fuzz/Cargo.toml",
        ]))
        .map(drop)
        .context(
            "fuzz/Cargo.lock does not match the workspace's dependencies: run `cargo update \
             --manifest-path fuzz/Cargo.toml --workspace` and commit the lock",
        )
    })?;
    step("cargo +nightly fuzz build (all targets)", || {
        run_command(
            nightly_cargo(&root)
                .args(["fuzz", "build", "--fuzz-dir", "fuzz"])
                .arg("--target-dir")
                .arg(&build_dir),
        )
    })?;
    let triple = host_triple()?;
    let binaries = build_dir.join(triple).join("release");
    let mut rows = Vec::new();
    for target in &targets {
        let name = format!("fuzz {target} for {} s", args.seconds);
        let stats = step(&name, || run_target(&root, &binaries, target, args.seconds))?;
        rows.push((target.clone(), stats));
    }
    eprintln!("\n{}", stats::table(&rows));
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, s)| s.outcome() != Outcome::Passed)
        .map(|(t, _)| t.as_str())
        .collect();
    for (target, stats) in &rows {
        for artifact in &stats.artifacts {
            eprintln!(
                "{target}: reproducer {}\n    replay: cargo +nightly fuzz run --fuzz-dir fuzz {target} {}",
                artifact.display(),
                artifact.display()
            );
        }
    }
    if !failed.is_empty() {
        bail!("fuzz targets failed: {}", failed.join(", "));
    }
    Ok(())
}

/// The selected targets: all of them, or the named ones (each must exist). Never empty.
fn select(all: &[String], wanted: &[String]) -> anyhow::Result<Vec<String>> {
    if all.is_empty() {
        bail!("fuzz/Cargo.toml declares no fuzz target");
    }
    if wanted.is_empty() {
        return Ok(all.to_vec());
    }
    for name in wanted {
        if !all.contains(name) {
            bail!("no fuzz target {name:?}; the targets are: {}", all.join(", "));
        }
    }
    Ok(wanted.to_vec())
}

/// `cargo fuzz list`: the targets of fuzz/Cargo.toml, in declaration order.
fn list_targets(root: &Path) -> anyhow::Result<Vec<String>> {
    let out = output(nightly_cargo(root).args(["fuzz", "list", "--fuzz-dir", "fuzz"]))?;
    Ok(out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Runs one target from a fresh copy of its seed corpus and reads libFuzzer's final statistics.
fn run_target(root: &Path, binaries: &Path, target: &str, seconds: u64) -> anyhow::Result<Stats> {
    let seeds = root.join("fuzz/corpus").join(target);
    let seed_count = count_files(&seeds);
    if seed_count == 0 {
        bail!("fuzz/corpus/{target} holds no seed; every target needs a checked-in corpus");
    }
    let scratch = root.join("target/fuzz").join(target);
    if scratch.exists() {
        fs::remove_dir_all(&scratch).with_context(|| format!("cannot clear {}", scratch.display()))?;
    }
    let corpus = scratch.join("corpus");
    let artifacts = scratch.join("artifacts");
    for dir in [&corpus, &artifacts] {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    copy_files(&seeds, &corpus)?;
    let log_path = scratch.join("libfuzzer.log");
    let log = fs::File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
    let mut cmd = Command::new(binaries.join(target));
    cmd.current_dir(root)
        .arg(&corpus)
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg("-print_final_stats=1")
        .stdout(Stdio::null())
        .stderr(log);
    let started = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("cannot start `{}`", describe(&cmd)))?;
    let text = fs::read_to_string(&log_path).unwrap_or_default();
    let mut stats = stats::parse(&text);
    stats.exit_ok = status.success();
    stats.corpus_files = count_files(&corpus);
    stats.seed_files = seed_count;
    stats.artifacts = list_files(&artifacts);
    stats.seconds = started.elapsed().as_secs_f64();
    if stats.outcome() != Outcome::Passed {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        eprintln!("    libFuzzer's last lines ({}):", log_path.display());
        for line in tail.into_iter().rev() {
            eprintln!("      {line}");
        }
    }
    Ok(stats)
}

/// Installs cargo-fuzz when `cargo fuzz` does not answer.
fn ensure_cargo_fuzz() -> anyhow::Result<()> {
    let present = Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!(
        "    cargo-fuzz is missing: installing it with `cargo install cargo-fuzz --locked` \
         (about a minute on these machines, longer on a busy one)"
    );
    run_command(cargo().args(["install", "cargo-fuzz", "--locked"]))
}

/// cargo-fuzz needs a nightly toolchain; say how to get one rather than fail inside cargo.
fn ensure_nightly() -> anyhow::Result<()> {
    let present = Command::new("rustup")
        .args(["run", TOOLCHAIN, "rustc", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("the {TOOLCHAIN} toolchain is missing; installing it (minimal profile, a minute or two)");
    let installed = Command::new("rustup")
        .args(["toolchain", "install", TOOLCHAIN, "--profile", "minimal"])
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        bail!(
            "the {TOOLCHAIN} toolchain is missing and could not be installed: rustup toolchain install {TOOLCHAIN}"
        );
    }
    Ok(())
}

/// Where the fuzz workspace builds: `<cache>/fuzz/target`, beside the Kubernetes binary cache.
fn fuzz_target_dir() -> anyhow::Result<PathBuf> {
    Ok(ptah_testenv::k8s::cache_root()?
        .parent()
        .context("the cache root has no parent")?
        .join("fuzz")
        .join("target"))
}

/// The host triple, where cargo-fuzz puts the targets (`<target dir>/<triple>/release/`).
fn host_triple() -> anyhow::Result<String> {
    let out = output(Command::new("rustup").args(["run", TOOLCHAIN, "rustc", "-vV"]))?;
    out.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV printed no host line")
}

/// `cargo +nightly` in the workspace root, without what the outer `cargo run` set: the stable
/// toolchain's choice (`RUSTUP_TOOLCHAIN`, `CARGO`) and a shared `CARGO_TARGET_DIR` (the fuzz
/// workspace builds with sanitizers in a target directory of its own, apart from the stable build).
fn nightly_cargo(root: &Path) -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", TOOLCHAIN, "cargo"]).current_dir(root);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let drop = name.starts_with("CARGO_PKG_")
            || matches!(
                name.as_ref(),
                "CARGO"
                    | "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_DIR"
                    | "CARGO_BUILD_TARGET_DIR"
                    | "RUSTUP_TOOLCHAIN"
                    | "RUSTC"
                    | "RUSTDOC"
                    | "OUT_DIR"
            );
        if drop {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd
}

fn list_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn count_files(dir: &Path) -> usize {
    list_files(dir).len()
}

fn copy_files(from: &Path, to: &Path) -> anyhow::Result<()> {
    for file in list_files(from) {
        let name = file.file_name().context("a corpus file has a name")?;
        fs::copy(&file, to.join(name)).with_context(|| format!("cannot copy {}", file.display()))?;
    }
    Ok(())
}
