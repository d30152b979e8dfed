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
#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Forwarded {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// The command that runs `task` of `package` with `args`.
pub fn command(package: &str, task: &str, args: &[String]) -> std::process::Command {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--package", package, "--", task])
        .args(args)
        .current_dir(workspace_root());
    cmd
}

/// Replaces this process with `cargo run -p package -- task args…`.
pub fn exec(package: &str, task: &str, forwarded: Forwarded) -> anyhow::Result<()> {
    let mut cmd = command(package, task, &forwarded.args);
    let err = cmd.exec();
    Err(err).with_context(|| format!("cannot start `{}`", describe(&cmd)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_task_keeps_its_arguments_in_order() {
        let cmd = command(TESTENV, "cluster", &["up".into(), "--tier".into(), "api".into()]);
        assert!(
            describe(&cmd).ends_with("run --quiet --package ptah-testenv -- cluster up --tier api"),
            "{}",
            describe(&cmd)
        );
    }
}
