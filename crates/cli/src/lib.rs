//! The `ptah` executor CLI: argument definitions and dispatch. `main.rs` only parses, sets up
//! logging and calls [`run`].
//!
//! Every command writes its report to stdout (a versioned JSON document with `--format json`,
//! `format_version: 1`) and its logs to stderr. Exit codes follow the reference CLI: 0 success,
//! 1 the command ran and found or caused a failure, 2 usage, input or refused gate.

#![warn(missing_docs)]

pub mod common;
pub mod migrations;
pub mod oci;
pub mod schema;
pub mod termination;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

/// `ptah`: plan and apply declared schemas, run versioned migrations and move their OCI artifacts.
#[derive(Debug, Parser)]
#[command(name = "ptah", version, about)]
pub struct Cli {
    /// Log filter for stderr (tracing `EnvFilter` syntax); `RUST_LOG` is used when absent.
    #[arg(long, global = true, env = "PTAH_LOG")]
    pub log_level: Option<String>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands, one module each.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Versioned migrations: status, up, baseline, hash, push, pull.
    Migrations(migrations::Args),
    /// Declared schema: inspect, drift, plan, apply, push.
    Schema(schema::Args),
    /// OCI artifacts: resolve, inspect, verify, pull, push.
    Oci(oci::Args),
}

/// Sends logs to stderr: JSON lines when stderr is not a terminal, human-readable otherwise.
pub fn init_tracing(filter: Option<&str>) {
    use std::io::IsTerminal;
    let filter = filter
        .map(EnvFilter::new)
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = if std::io::stderr().is_terminal() {
        builder.try_init()
    } else {
        builder.json().with_ansi(false).try_init()
    };
    if let Err(err) = result {
        eprintln!("warning: logging is not available: {err}");
    }
}

/// Runs a parsed command and returns the process exit code.
pub async fn run(cli: Cli) -> u8 {
    match cli.command {
        Command::Migrations(args) => migrations::run(args).await,
        Command::Schema(args) => schema::run(args).await,
        Command::Oci(args) => oci::run(args).await,
    }
}
