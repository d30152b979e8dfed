//! `ptah migrations status|up|baseline|hash|lint|repair|push|pull`.

mod lint;
mod repair;
mod text;

use std::{path::PathBuf, time::Duration};

use clap::Subcommand;
use ptah_engine::Dialect;
use ptah_migrate::{Directory, Error, ExecOrder, Outcome, UpOptions, Version, parse_expected};
use serde::Serialize;

use ptah_artifact::Kind;

use crate::{
    common::{DbArgs, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, Format, Output, parse_duration},
    oci,
};

/// `ptah migrations …`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The migrations command.
    #[command(subcommand)]
    pub command: Sub,
}

/// The migrations commands.
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Report applied, pending, out-of-order, modified and dirty migrations.
    Status(StatusArgs),
    /// Apply pending migrations under the shared migration lock.
    Up(UpArgs),
    /// Record every migration up to a version as applied without running it.
    Baseline(BaselineArgs),
    /// Write ptah.sum for the directory.
    Hash(HashArgs),
    /// Report what the migrations would do to a live database: destructive changes, lock
    /// hazards, table copies, transaction conflicts, file rules and renames.
    Lint(lint::LintArgs),
    /// Record a failed or interrupted (dirty) version as applied or absent, with who and why.
    Repair(repair::RepairArgs),
    /// Publish the directory (with a current ptah.sum) as a migrations artifact.
    Push(PushArgs),
    /// Pull a migrations artifact into a new directory.
    Pull(PullArgs),
}

/// Arguments of `push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    #[command(flatten)]
    common: oci::Common,
    /// The migration directory; its ptah.sum must be present and current.
    #[arg(long, visible_alias = "migrations-dir", env = "PTAH_MIGRATIONS_DIR")]
    dir: PathBuf,
}

/// Arguments of `pull`.
#[derive(Debug, clap::Args)]
pub struct PullArgs {
    #[command(flatten)]
    common: oci::Common,
    /// The directory to create (it must not exist).
    #[arg(long)]
    out: PathBuf,
}

/// The migration directory and the report format.
#[derive(Debug, Clone, clap::Args)]
pub struct DirArgs {
    /// The migration directory.
    #[arg(long, visible_alias = "migrations-dir", env = "PTAH_MIGRATIONS_DIR")]
    pub dir: PathBuf,
    /// Report format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Arguments of `status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    dir: DirArgs,
    #[command(flatten)]
    db: DbArgs,
    /// Same as `--format json`.
    #[arg(long)]
    json: bool,
    /// Exit 1 when migrations are pending.
    #[arg(long)]
    exit_code: bool,
    /// How out-of-order versions are treated when computing the pending sequence.
    #[arg(long, value_enum, default_value_t = Order::Linear)]
    exec_order: Order,
}

/// Arguments of `up`.
#[derive(Debug, clap::Args)]
pub struct UpArgs {
    #[command(flatten)]
    dir: DirArgs,
    #[command(flatten)]
    db: DbArgs,
    /// The approved sequence as JSON (`[{version, checksum, transaction}]`, or a status document), or `@FILE`.
    #[arg(long)]
    expect_sequence: Option<String>,
    /// Apply at most N migrations.
    #[arg(long)]
    limit: Option<usize>,
    /// Print the statements that would run; create nothing.
    #[arg(long)]
    dry_run: bool,
    /// How out-of-order versions are treated.
    #[arg(long, value_enum, default_value_t = Order::Linear)]
    exec_order: Order,
    /// How long to wait for the migration lock.
    #[arg(long, visible_alias = "migration-lock-timeout", default_value = "60s", value_parser = parse_duration)]
    lock_timeout: Duration,
    /// Fail when the directory has no ptah.sum.
    #[arg(long)]
    verify_sum: bool,
    /// Skip the check that no transaction pooler shares the PostgreSQL lock.
    #[arg(long, env = "PTAH_ALLOW_UNVERIFIED_MIGRATION_LOCK")]
    allow_unverified_lock: bool,
}

/// Arguments of `baseline`.
#[derive(Debug, clap::Args)]
pub struct BaselineArgs {
    #[command(flatten)]
    dir: DirArgs,
    #[command(flatten)]
    db: DbArgs,
    /// The baseline version (its digits as written in the file name, or the number).
    #[arg(long)]
    version: i64,
    /// Add rows even though the table has some (rows above the version are never touched).
    #[arg(long)]
    force: bool,
    /// How long to wait for the migration lock.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    lock_timeout: Duration,
}

/// Arguments of `hash`.
#[derive(Debug, clap::Args)]
pub struct HashArgs {
    #[command(flatten)]
    dir: DirArgs,
    /// The engine the files are written for; without it, only statements no engine but
    /// PostgreSQL has are checked against the file's transaction mode.
    #[arg(long, value_enum)]
    dialect: Option<DialectArg>,
}

/// `--dialect` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DialectArg {
    /// PostgreSQL.
    #[value(alias = "postgres")]
    Postgresql,
    /// MySQL or MariaDB.
    #[value(alias = "mariadb")]
    Mysql,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Postgresql => Dialect::Postgres,
            DialectArg::Mysql => Dialect::Mysql,
        }
    }
}

/// `--exec-order` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// Refuse pending versions below the current one.
    Linear,
    /// Leave them pending.
    LinearSkip,
    /// Apply them.
    NonLinear,
}

impl From<Order> for ExecOrder {
    fn from(order: Order) -> ExecOrder {
        match order {
            Order::Linear => ExecOrder::Linear,
            Order::LinearSkip => ExecOrder::LinearSkip,
            Order::NonLinear => ExecOrder::NonLinear,
        }
    }
}

/// Runs a migrations command and returns the exit code.
pub async fn run(args: Args) -> u8 {
    match args.command {
        Sub::Status(a) => {
            let format = if a.json { Format::Json } else { a.dir.format };
            let out = Output {
                format,
                command: "migrations status",
            };
            status(a, out).await.unwrap_or_else(|e| fail(out, &e))
        }
        Sub::Up(a) => {
            let out = Output {
                format: a.dir.format,
                command: "migrations up",
            };
            up(a, out).await.unwrap_or_else(|e| fail(out, &e))
        }
        Sub::Baseline(a) => {
            let out = Output {
                format: a.dir.format,
                command: "migrations baseline",
            };
            baseline(a, out).await.unwrap_or_else(|e| fail(out, &e))
        }
        Sub::Hash(a) => {
            let out = Output {
                format: a.dir.format,
                command: "migrations hash",
            };
            hash(&a, out).unwrap_or_else(|e| fail(out, &e))
        }
        Sub::Lint(a) => {
            let out = Output {
                format: a.dir.format,
                command: "migrations lint",
            };
            lint::run(&a, out)
        }
        Sub::Repair(a) => {
            let out = Output {
                format: a.format,
                command: "migrations repair",
            };
            repair::run(a, out).await.unwrap_or_else(|e| fail(out, &e))
        }
        Sub::Push(a) => {
            // A directory that could only fail on PostgreSQL is refused before it is published.
            let out = Output {
                format: a.common.format,
                command: "migrations push",
            };
            // Other problems of the directory are left to the push itself, which reports them
            // with the artifact layer's codes as before.
            if let Ok(dir) = Directory::read(&a.dir)
                && let Err(e @ Error::NeedsNoTransaction { .. }) =
                    ptah_migrate::check_transactions(&dir, None)
            {
                return fail(out, &e);
            }
            let args = oci::PushArgs {
                common: a.common,
                kind: Kind::Migrations,
                file: None,
                dir: Some(a.dir),
            };
            oci::push(args, "migrations push").await
        }
        Sub::Pull(a) => {
            let args = oci::PullArgs {
                common: a.common,
                kind: Some(Kind::Migrations),
                out: Some(a.out),
            };
            oci::pull(args, "migrations pull").await
        }
    }
}

fn fail(out: Output, err: &Error) -> u8 {
    let exit = if err.is_usage() { EXIT_USAGE } else { EXIT_FAILURE };
    out.error(err.code(), &err.to_string(), exit)
}

fn target(db: &DbArgs) -> Result<ptah_migrate::Target, Error> {
    db.target().map_err(Error::Engine)
}

/// `status`'s report with the lint of its pending migrations.
#[derive(Serialize)]
struct StatusWithLint<'a> {
    #[serde(flatten)]
    report: &'a ptah_migrate::StatusReport,
    lint: lint::PendingLint,
}

async fn status(a: StatusArgs, out: Output) -> Result<u8, Error> {
    let target = target(&a.db)?;
    let dir = Directory::read(&a.dir.dir)?;
    let report = ptah_migrate::status(&target, &dir, a.exec_order.into()).await?;
    let exit = if a.exit_code && report.has_pending_changes {
        EXIT_FAILURE
    } else {
        EXIT_OK
    };
    let pending: Vec<Version> = report.pending_migrations.iter().map(|p| p.version).collect();
    let with_lint = StatusWithLint {
        report: &report,
        lint: lint::pending(&dir, target.url.dialect(), &pending),
    };
    Ok(out.report(&with_lint, || text::status_text(&report, &dir), exit))
}

fn read_expected(value: &str) -> Result<Vec<ptah_migrate::SequenceEntry>, Error> {
    let text = match value.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.into(),
            source,
        })?,
        None => value.to_owned(),
    };
    parse_expected(&text)
}

async fn up(a: UpArgs, out: Output) -> Result<u8, Error> {
    let target = target(&a.db)?;
    let expect = a.expect_sequence.as_deref().map(read_expected).transpose()?;
    let dir = Directory::read(&a.dir.dir)?;
    let options = UpOptions {
        limit: a.limit,
        dry_run: a.dry_run,
        expect,
        exec_order: a.exec_order.into(),
        lock_wait: a.lock_timeout,
        require_sum: a.verify_sum,
        allow_unverified_lock: a.allow_unverified_lock,
    };
    let report = ptah_migrate::up(&target, &dir, &options).await?;
    let exit = match report.outcome {
        Outcome::Failed | Outcome::Partial => EXIT_FAILURE,
        Outcome::UpToDate | Outcome::Applied | Outcome::Planned => EXIT_OK,
    };
    if let Some(f) = &report.failure {
        eprintln!(
            "error: version {} failed at statement {} (line {}), {} of {} statements committed: {}",
            f.file_version.as_deref().unwrap_or(&f.version.to_string()),
            f.statement,
            f.line,
            f.applied,
            f.total,
            f.error
        );
    }
    Ok(out.report(&report, || text::up_text(&report, &dir), exit))
}

async fn baseline(a: BaselineArgs, out: Output) -> Result<u8, Error> {
    let target = target(&a.db)?;
    let dir = Directory::read(&a.dir.dir)?;
    let report = ptah_migrate::baseline(&target, &dir, Version(a.version), a.force, a.lock_timeout).await?;
    let text = || {
        let versions: Vec<String> = report.baselined_versions.iter().map(Version::to_string).collect();
        format!("Baselined at {}: {}", report.version, versions.join(", "))
    };
    Ok(out.report(&report, text, EXIT_OK))
}

#[derive(Serialize)]
struct HashReport {
    path: String,
    dir_hash: String,
    files: usize,
}

fn hash(a: &HashArgs, out: Output) -> Result<u8, Error> {
    let dir = Directory::read(&a.dir.dir)?;
    if let Some(dialect) = a.dialect {
        ptah_migrate::check_transactions(&dir, Some(dialect.into()))?;
    }
    let sum = ptah_migrate::hash(&dir)?;
    let report = HashReport {
        path: dir.root().join(ptah_migrate::SUM_FILE).display().to_string(),
        dir_hash: sum.dir_hash.clone(),
        files: sum.entries.len(),
    };
    let text = || {
        format!(
            "Wrote {} ({} files, {})",
            report.path, report.files, report.dir_hash
        )
    };
    Ok(out.report(&report, text, EXIT_OK))
}
