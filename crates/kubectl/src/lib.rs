//! `kubectl ptah`: the person's side of the operator. It reads published plans back from their
//! chunks with every check the manager makes, shows the status of PtahSchemas and PtahMigrations
//! and a migration's history, and creates the one approval a person gives for one exact plan.
//!
//! Every read goes straight to the API server (no cache). Nothing reaches stdout until a plan has
//! passed every check, so a pipe never receives half of a refused plan. Approving is the only
//! write; the admission webhook still stamps who approved.

mod approve;
mod client;
mod error;
mod migration;
mod plan;
mod status;
mod style;

use std::{io::Write, path::PathBuf};

use clap::{Parser, Subcommand, ValueEnum};

pub use error::{Error, ExitCode};

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-ptah",
    version,
    about = "Plans, status and approvals of ptah-operator"
)]
pub struct Args {
    /// The kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: the current one).
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// The namespace (default: the context's).
    #[arg(short, long, global = true)]
    pub namespace: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print a published plan, verified chunk by chunk: of a PtahSchema (its current plan), or a
    /// PtahSchemaPlan or PtahMigrationPlan by name.
    Plan {
        /// A PtahSchema, PtahSchemaPlan or PtahMigrationPlan.
        name: String,
        /// The plan the PtahSchema last applied instead of its current one.
        #[arg(long)]
        applied: bool,
        /// The statements only, in order (same as `-o sql`).
        #[arg(long, conflicts_with = "output")]
        sql: bool,
        /// Output format.
        #[arg(short, long, value_enum)]
        output: Option<PlanFormat>,
    },
    /// One line per PtahSchema and PtahMigration.
    Status {
        /// Every namespace.
        #[arg(short = 'A', long)]
        all_namespaces: bool,
    },
    /// A PtahMigration's history, plan and unresolved run.
    Migration {
        /// The PtahMigration.
        name: String,
        /// Output format.
        #[arg(short, long, value_enum, default_value = "text")]
        output: TextOrJson,
    },
    /// Approve one plan (PtahSchemaPlan or PtahMigrationPlan) after showing it.
    Approve {
        /// The plan.
        plan: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
}

/// How `plan` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// A header, then every statement with its severity and reason.
    Text,
    /// The statements, each terminated once.
    Sql,
    /// The stored plan document, byte for byte.
    Json,
}

/// Text or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TextOrJson {
    /// For people.
    Text,
    /// For programs.
    Json,
}

/// Terminal I/O of one invocation: where output goes and where answers come from.
pub struct Io<'a> {
    /// Standard output.
    pub out: &'a mut dyn Write,
    /// Standard error.
    pub err: &'a mut dyn Write,
    /// Standard input, for the approval question.
    pub input: &'a mut dyn std::io::BufRead,
    /// Whether stdout is a terminal (colours).
    pub colour: bool,
}

/// Runs one invocation and returns its exit code; errors are printed to `io.err`.
pub async fn run(args: Args, io: &mut Io<'_>) -> ExitCode {
    match dispatch(args, io).await {
        Ok(()) => ExitCode::Printed,
        Err(e) => {
            let _ = writeln!(io.err, "kubectl-ptah: {e}");
            e.exit_code()
        }
    }
}

async fn dispatch(args: Args, io: &mut Io<'_>) -> Result<(), Error> {
    let cluster = client::connect(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    let namespace = args.namespace.unwrap_or_else(|| cluster.namespace.clone());
    let client = cluster.client;
    match args.command {
        Command::Plan {
            name,
            applied,
            sql,
            output,
        } => {
            let format = if sql {
                PlanFormat::Sql
            } else {
                output.unwrap_or(PlanFormat::Text)
            };
            plan::show(&client, &namespace, &name, applied, format, io).await
        }
        Command::Status { all_namespaces } => {
            let scope = (!all_namespaces).then_some(namespace.as_str());
            status::show(&client, scope, io).await
        }
        Command::Migration { name, output } => migration::show(&client, &namespace, &name, output, io).await,
        Command::Approve { plan, yes } => approve::approve(&client, &namespace, &plan, yes, io).await,
    }
}
