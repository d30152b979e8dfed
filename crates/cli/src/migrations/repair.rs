//! `ptah migrations repair`: the command-line counterpart of the operator's run acknowledgment.

use std::{path::PathBuf, time::Duration};

use ptah_migrate::{Directory, Error, RecordAs, RepairOptions, Version};

use crate::common::{DbArgs, EXIT_OK, Format, Output, parse_duration};

/// Arguments of `repair`.
#[derive(Debug, clap::Args)]
pub struct RepairArgs {
    /// The migration directory (its ptah.sum, when present, must match).
    #[arg(long, visible_alias = "migrations-dir", env = "PTAH_MIGRATIONS_DIR")]
    dir: PathBuf,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
    #[command(flatten)]
    db: DbArgs,
    /// The dirty version (its digits as written in the file name, or the number).
    #[arg(long)]
    version: i64,
    /// What you established: every effect of the version is in the database, or none is.
    #[arg(long = "as", value_enum)]
    record_as: As,
    /// Why (stored in the row's repair_reason).
    #[arg(long)]
    reason: String,
    /// Who (stored in the row's repaired_by); defaults to the database user of the URL.
    #[arg(long)]
    by: Option<String>,
    /// How long to wait for the migration lock.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    lock_timeout: Duration,
    /// Skip the check that no transaction pooler shares the PostgreSQL lock.
    #[arg(long, env = "PTAH_ALLOW_UNVERIFIED_MIGRATION_LOCK")]
    allow_unverified_lock: bool,
}

/// `--as` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum As {
    /// The version's effects are all in the database.
    Applied,
    /// None are; the version is pending again.
    Absent,
}

/// Runs `repair` and returns the exit code.
pub(super) async fn run(a: RepairArgs, out: Output) -> Result<u8, Error> {
    let target = a.db.target().map_err(Error::Engine)?;
    let dir = Directory::read(&a.dir)?;
    let by = a.by.unwrap_or_else(|| target.url.user().to_owned());
    let options = RepairOptions {
        version: Version(a.version),
        record_as: match a.record_as {
            As::Applied => RecordAs::Applied,
            As::Absent => RecordAs::Absent,
        },
        reason: a.reason,
        by,
        lock_wait: a.lock_timeout,
        allow_unverified_lock: a.allow_unverified_lock,
    };
    let report = ptah_migrate::repair(&target, &dir, &options).await?;
    let text = || {
        format!(
            "Repaired {}: {} ({}/{} statements recorded) is now {}, by {}: {}\n",
            report
                .file_version
                .clone()
                .unwrap_or_else(|| report.version.to_string()),
            report.previous_state,
            report.previous_applied,
            report.total,
            report.state,
            report.repaired_by,
            report.repair_reason
        )
    };
    Ok(out.report(&report, text, EXIT_OK))
}
