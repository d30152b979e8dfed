//! Tasks that belong to another crate's binary: `cargo run -p <package> -- <task> <args…>`,
//! replacing this process so the exit status and signals are the task's own.

use std::os::unix::process::CommandExt;

use anyhow::Context;
use ptah_testenv::step::{cargo, describe, workspace_root};

/// The development environment's package.
pub const TESTENV: &str = "ptah-testenv";
/// The benchmarks' and demo's package.
pub const BENCH: &str = "ptah-bench";

/// Everything after the task's name, passed through untouched (`--help` included).
#[derive(clap::Args, Default)]
#[command(disable_help_flag = true)]
pub struct Forwarded {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

impl Forwarded {
    /// The first forwarded argument (a subcommand's name).
    pub fn first(&self) -> Option<&str> {
        self.args.first().map(String::as_str)
    }

    /// Whether the arguments ask for help, which needs no environment.
    pub fn asks_for_help(&self) -> bool {
        self.args.iter().any(|a| a == "--help" || a == "-h")
    }
}

/// How the forwarded task's binary is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// The dev profile: quickest to build, for tasks whose speed is not the point.
    Dev,
    /// The release profile: what ships, so what a benchmark must measure.
    Release,
}

/// The command that runs `task` of `package` with `args`.
pub fn command(package: &str, task: &str, args: &[String], profile: Profile) -> std::process::Command {
    let mut cmd = cargo();
    // Not `--quiet`: a cold build of the task's package takes minutes and should show progress.
    cmd.arg("run");
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    cmd.args(["--package", package, "--", task])
        .args(args)
        .current_dir(workspace_root());
    cmd
}

/// Replaces this process with `cargo run [--release] -p package -- task args…`.
pub fn exec(package: &str, task: &str, forwarded: Forwarded, profile: Profile) -> anyhow::Result<()> {
    let mut cmd = command(package, task, &forwarded.args, profile);
    let err = cmd.exec();
    Err(err).with_context(|| format!("cannot start `{}`", describe(&cmd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_task_keeps_its_arguments_in_order() {
        let cmd = command(
            TESTENV,
            "cluster",
            &["up".into(), "--tier".into(), "api".into()],
            Profile::Dev,
        );
        assert!(
            describe(&cmd).ends_with("run --package ptah-testenv -- cluster up --tier api"),
            "{}",
            describe(&cmd)
        );
        let bench = command(BENCH, "bench", &["executor".into()], Profile::Release);
        assert!(
            describe(&bench).ends_with("run --release --package ptah-bench -- bench executor"),
            "{}",
            describe(&bench)
        );
    }
}
