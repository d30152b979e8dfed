//! Shared helpers: the workspace root, timed steps and checked commands.

use std::{
    path::PathBuf,
    process::Command,
    time::{Duration, Instant},
};

use anyhow::{Context, bail};

/// The workspace root (two levels above `crates/testenv/`).
pub fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.ancestors().nth(2).map(PathBuf::from).unwrap_or(manifest)
}

/// Runs `f` as a named step, printing its name and how long it took.
pub fn step<T>(name: &str, f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    eprintln!("==> {name}");
    let started = Instant::now();
    let result = f();
    let took = format_duration(started.elapsed());
    match &result {
        Ok(_) => eprintln!("    {name}: ok in {took}"),
        Err(err) => eprintln!("    {name}: FAILED after {took}: {err:#}"),
    }
    result
}

fn format_duration(d: Duration) -> String {
    format!("{:.2}s", d.as_secs_f64())
}

/// Runs a command to completion and fails with the command line when it exits non-zero.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let line = describe(cmd);
    let status = cmd.status().with_context(|| format!("cannot start `{line}`"))?;
    if !status.success() {
        bail!("`{line}` failed with {status}");
    }
    Ok(())
}

/// Runs a command and returns its stdout; fails with the command line and stderr on a non-zero exit.
pub fn output(cmd: &mut Command) -> anyhow::Result<String> {
    let line = describe(cmd);
    let out = cmd.output().with_context(|| format!("cannot start `{line}`"))?;
    if !out.status.success() {
        bail!(
            "`{line}` failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).with_context(|| format!("`{line}` printed non-UTF-8 output"))
}

/// A printable form of a command line.
pub fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    parts.join(" ")
}

/// The cargo that runs this task (`CARGO` under `cargo run`, else `cargo` on the `PATH`).
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}
