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
        bail!("`{line}` failed with {status}{}", low_disk_note());
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
            low_disk_note()
        );
    }
    String::from_utf8(out.stdout).with_context(|| format!("`{line}` printed non-UTF-8 output"))
}

/// Below this much free space a failed command names the disk: a build that runs out of it fails
/// with an error far above the summary that CI shows.
const LOW_DISK_BYTES: u64 = 4 << 30;

/// `" (only N MiB free on the file system of <target dir>: …)"` when the workspace's target
/// directory is short of space, else nothing.
fn low_disk_note() -> String {
    let target = workspace_root().join("target");
    match free_bytes(&target) {
        Some(free) if free < LOW_DISK_BYTES => format!(
            " (only {} MiB free on the file system of {}: a full disk may be the cause)",
            free >> 20,
            target.display()
        ),
        _ => String::new(),
    }
}

/// Free bytes for an unprivileged writer on the file system holding `path`, if it can be read.
fn free_bytes(path: &std::path::Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(path).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
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
    fn the_free_space_of_the_workspace_file_system_is_read() {
        let free = free_bytes(&workspace_root()).expect("statvfs of the workspace root");
        assert!(free > 0, "no free byte on the workspace's file system");
        assert_eq!(free_bytes(std::path::Path::new("/no/such/directory")), None);
    }

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
