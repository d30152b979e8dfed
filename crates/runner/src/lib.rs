//! `ptah-runner`: the supervisor of the `ptah` executor inside an operation Pod.
//!
//! It validates its inputs from the environment contract ([`ptah_dataplane::env`]), refuses a
//! protocol mismatch, a wrong target identity (required for mutating operations, checked
//! whenever set), expired deadlines or a plan (file or chunk directory, [`plan`]) that is not the
//! approved one before starting anything; runs `ptah` directly (never a shell) with only the
//! variables its operation needs; stops it at the execution deadline or on SIGTERM; bounds and
//! redacts its output; maps its JSON report into the result payload and writes one frame as the
//! last stdout output, plus the termination summary. A Plan runs `ptah` twice and then dry-runs
//! the plan bytes ([`planning`]): only a reproducible plan is reported. A Resolve given the
//! verification policy then runs `ptah oci verify` on the digest-pinned reference it resolved,
//! and reports resolution and verdict in one frame. With `PTAH_RESULT_DELIVERY=durable` it enrols
//! with the manager's receiver before anything runs and delivers the result over mutual TLS instead
//! of writing a frame ([`durable`]).
//!
//! It links no database driver and no Kubernetes client (`cargo xtask deps-check`).

#![warn(missing_docs)]

pub mod bounded;
pub mod command;
pub mod diagnostics;
pub mod durable;
pub mod emit;
pub mod error;
mod grant;
pub mod inputs;
pub mod install;
mod launcher;
pub mod plan;
pub mod planning;
pub mod redact;
pub mod report;
pub mod run;
mod secret_debug;
pub mod supervise;

use std::{path::PathBuf, process::ExitCode};

use clap::Parser;
use diagnostics::Notes;
use ptah_dataplane::{MAX_PLAN_BYTES, Operation};

/// The command line of `ptah-runner`.
#[derive(Debug, Parser)]
#[command(
    name = "ptah-runner",
    version,
    about = "Runs one ptah operation and reports a framed result"
)]
pub struct Args {
    /// Copy this executable to PATH (mode 0755; refused if PATH exists) and exit.
    #[arg(long, value_name = "PATH", conflicts_with = "operation")]
    pub install_to: Option<PathBuf>,
    /// The operation: resolve, verify, observe, plan, apply, migration-history, migration-apply.
    #[arg(long, required_unless_present = "install_to")]
    pub operation: Option<Operation>,
    /// The ptah executable.
    #[arg(long, default_value = "/usr/local/bin/ptah")]
    pub ptah_binary: PathBuf,
    /// Where the termination summary goes.
    #[arg(long, env = "PTAH_TERMINATION_LOG", default_value = "/dev/termination-log")]
    pub termination_log: PathBuf,
    /// A directory for the runner's own files (default: the temporary directory).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// The largest plan accepted (at most 8 MiB).
    #[arg(long, default_value_t = MAX_PLAN_BYTES, value_parser = plan_bound)]
    pub max_plan_bytes: usize,
}

fn plan_bound(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (1..=MAX_PLAN_BYTES).contains(&n) => Ok(n),
        _ => Err(format!("must be a byte count in 1..={MAX_PLAN_BYTES}")),
    }
}

/// Exit code when the frame reports success.
pub const EXIT_SUCCESS: u8 = 0;
/// Exit code when the frame reports a failure.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for usage errors (no frame).
pub const EXIT_USAGE: u8 = 2;

/// Runs the runner with parsed arguments and the process environment.
pub fn main_with(args: Args) -> ExitCode {
    if let Some(to) = &args.install_to {
        return match install::install_to(to) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                Notes::default().write(&format!("cannot install to {}: {e}", to.display()));
                ExitCode::from(EXIT_USAGE)
            }
        };
    }
    let Some(operation) = args.operation else {
        Notes::default().write("--operation is required");
        return ExitCode::from(EXIT_USAGE);
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            Notes::default().write(&format!("cannot start the async runtime: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let config = run::Config {
        operation,
        ptah_binary: args.ptah_binary,
        work_dir: args.work_dir.unwrap_or_else(std::env::temp_dir),
        max_plan_bytes: args.max_plan_bytes,
    };
    let env = inputs::Env::from_process();
    let written = match durable::Delivery::from_env(&env, operation) {
        Ok(None) => frame_path(&runtime, &config, &env, &args.termination_log),
        Ok(Some(delivery)) => {
            let (written, delivered) =
                runtime.block_on(durable::run(&config, &env, &delivery, &args.termination_log));
            if !delivered {
                return ExitCode::from(EXIT_FAILED);
            }
            written
        }
        Err(err) => durable::refuse(operation, &env, &err, &args.termination_log),
    };
    ExitCode::from(if written.is_success() {
        EXIT_SUCCESS
    } else {
        EXIT_FAILED
    })
}

/// Runs the operation and writes its frame to the log.
fn frame_path(
    runtime: &tokio::runtime::Runtime,
    config: &run::Config,
    env: &inputs::Env,
    termination_log: &std::path::Path,
) -> ptah_dataplane::ResultPayload {
    let outcome = runtime.block_on(run::run(config, env));
    emit::emit(
        &outcome.payload,
        outcome.diagnostics.as_deref(),
        &outcome.redactor,
        termination_log,
    )
}
