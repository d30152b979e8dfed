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
        bail!(
            "`{line}` failed with {status}{}",
            crate::disk::low_space_note(&workspace_root().join("target"))
        );
    }
    Ok(())
}

/// Runs a command and returns its stdout; fails with the command line and stderr on a non-zero exit.
pub fn output(cmd: &mut Command) -> anyhow::Result<String> {
    let line = describe(cmd);
    let out = cmd.output().with_context(|| format!("cannot start `{line}`"))?;
    if !out.status.success() {
        bail!(
            "`{line}` failed with {}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            crate::disk::low_space_note(&workspace_root().join("target"))
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

/// What `cargo run` sets for the program it runs. A nested cargo would pass them on to build
/// scripts that watch them (ring's does: `CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`), so a build
/// from xtask, one from ptah-testenv and one from a shell would each invalidate the others'.
const CARGO_RUN_VARIABLES: &[&str] = &[
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "OUT_DIR",
];

/// The cargo that runs this task (`CARGO` under `cargo run`, else `cargo` on the `PATH`), with
/// the environment a person's shell would give it.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_") || CARGO_RUN_VARIABLES.contains(&name.as_ref()) {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_cargo_does_not_inherit_what_cargo_run_set() {
        let cmd = cargo();
        let removed: Vec<String> = cmd
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        // Under `cargo test` these are set for this very process.
        for name in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME", "CARGO_PKG_VERSION_MAJOR"] {
            assert!(
                removed.iter().any(|r| r == name),
                "{name} not removed: {removed:?}"
            );
        }
        assert!(
            !removed
                .iter()
                .any(|r| r == "CARGO_HOME" || r == "CARGO_TARGET_DIR")
        );
    }
}
