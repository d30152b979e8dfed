//! `ptah migrations lint`: what the migrations would do to a live database, before they run
//! (`ptah-migrationlint`). Exit 1 when a finding is at or above `--fail-on`.

use ptah_migrate::{Directory, Version};
use ptah_migrationlint::{CONFIG_FILE, Config, Finding, Report, Severity, lint_directory};
use serde::Serialize;

use super::{DialectArg, DirArgs};
use crate::common::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, Output};

/// Arguments of `lint`.
#[derive(Debug, clap::Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub(super) dir: DirArgs,
    /// The engine the files are written for.
    #[arg(long, value_enum)]
    dialect: DialectArg,
    /// Lint only the migrations after this version (those still pending).
    #[arg(long)]
    after: Option<i64>,
    /// The config file (default: `.ptah-lint.yaml` in the directory, when present).
    #[arg(long)]
    config: Option<std::path::PathBuf>,
    /// The lowest severity that fails the command.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    fail_on: FailOn,
}

/// `--fail-on` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Any finding at all.
    Notice,
    /// A warning or an error.
    Warning,
    /// An error.
    Error,
}

impl From<FailOn> for Severity {
    fn from(f: FailOn) -> Severity {
        match f {
            FailOn::Notice => Severity::Notice,
            FailOn::Warning => Severity::Warning,
            FailOn::Error => Severity::Error,
        }
    }
}

/// The config of `dir`: `explicit` when given, else its `.ptah-lint.yaml` when present.
fn config_of(dir: &std::path::Path, explicit: Option<&std::path::Path>) -> Result<Config, String> {
    let path = explicit.map(std::path::Path::to_path_buf).or_else(|| {
        let default = dir.join(CONFIG_FILE);
        default.is_file().then_some(default)
    });
    match path {
        None => Ok(Config::default()),
        Some(p) => {
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            Config::parse(&text).map_err(|e| e.to_string())
        }
    }
}

/// What `migrations status` says of the pending migrations' lint: the worst severity and the
/// findings (at most [`MAX_STATUS_FINDINGS`]), or why the linter could not judge them.
#[derive(Debug, Serialize)]
pub struct PendingLint {
    /// The highest severity among the pending migrations' findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    worst: Option<Severity>,
    /// The findings, pending migrations only.
    findings: Vec<PendingFinding>,
    /// Whether findings were left out.
    truncated: bool,
    /// Why nothing was judged (a bad config, a file `up` would refuse).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// A finding of a pending migration, with its version.
#[derive(Debug, Serialize)]
pub struct PendingFinding {
    /// The migration's version.
    version: Version,
    /// The finding.
    #[serde(flatten)]
    finding: Finding,
}

/// The most findings `status` reports.
pub const MAX_STATUS_FINDINGS: usize = 256;

/// The lint of the migrations of `dir` whose versions are `pending`, for `status`.
pub fn pending(dir: &Directory, dialect: ptah_engine::Dialect, pending: &[Version]) -> PendingLint {
    let judged = config_of(dir.root(), None)
        .and_then(|config| lint_directory(dir, dialect, &config, None).map_err(|e| e.to_string()));
    let report = match judged {
        Ok(report) => report,
        Err(error) => {
            return PendingLint {
                worst: None,
                findings: Vec::new(),
                truncated: false,
                error: Some(error),
            };
        }
    };
    let files: Vec<(&str, Version)> = dir
        .migrations()
        .iter()
        .filter(|m| pending.contains(&m.version))
        .map(|m| (m.up.path.as_str(), m.version))
        .collect();
    let mut findings: Vec<PendingFinding> = report
        .findings
        .into_iter()
        .filter_map(|finding| {
            let (_, version) = files.iter().find(|(file, _)| *file == finding.file)?;
            Some(PendingFinding {
                version: *version,
                finding,
            })
        })
        .collect();
    let worst = findings.iter().map(|f| f.finding.severity).max();
    let truncated = findings.len() > MAX_STATUS_FINDINGS;
    findings.truncate(MAX_STATUS_FINDINGS);
    PendingLint {
        worst,
        findings,
        truncated,
        error: None,
    }
}

/// Runs `lint`.
pub fn run(a: &LintArgs, out: Output) -> u8 {
    let config = match config_of(&a.dir.dir, a.config.as_deref()) {
        Ok(c) => c,
        Err(why) => return out.error("invalid_lint_config", &why, EXIT_USAGE),
    };
    let dir = match Directory::read(&a.dir.dir) {
        Ok(d) => d,
        Err(e) => return out.error(e.code(), &e.to_string(), EXIT_FAILURE),
    };
    let report = match lint_directory(&dir, a.dialect.into(), &config, a.after.map(Version)) {
        Ok(r) => r,
        Err(e) => return out.error("invalid_migration", &e.to_string(), EXIT_FAILURE),
    };
    let failing = report.worst().is_some_and(|w| w >= a.fail_on.into());
    out.report(
        &report,
        || text(&report),
        if failing { EXIT_FAILURE } else { EXIT_OK },
    )
}

fn text(report: &Report) -> String {
    if report.findings.is_empty() {
        return "No findings.".to_owned();
    }
    report
        .findings
        .iter()
        .map(|f| {
            let severity = match f.severity {
                Severity::Notice => "notice",
                Severity::Warning => "warning",
                Severity::Error => "error",
            };
            if f.line == 0 {
                format!("{}: {severity} {}: {}", f.file, f.code, f.message)
            } else {
                format!("{}:{}: {severity} {}: {}", f.file, f.line, f.code, f.message)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
