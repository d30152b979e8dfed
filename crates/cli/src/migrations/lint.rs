//! `ptah migrations lint`: what the migrations would do to a live database, before they run
//! (`ptah-migrationlint`). Exit 1 when a finding is at or above `--fail-on`.

use ptah_migrate::{Directory, Version};
use ptah_migrationlint::{CONFIG_FILE, Config, Report, Severity, lint_directory};

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

/// Runs `lint`.
pub fn run(a: &LintArgs, out: Output) -> u8 {
    let config_path = a.config.clone().or_else(|| {
        let default = a.dir.dir.join(CONFIG_FILE);
        default.is_file().then_some(default)
    });
    let config =
        match config_path.map(|p| std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))) {
            None => Config::default(),
            Some(Err(why)) => return out.error("invalid_lint_config", &why, EXIT_USAGE),
            Some(Ok(text)) => match Config::parse(&text) {
                Ok(c) => c,
                Err(e) => return out.error("invalid_lint_config", &e.to_string(), EXIT_USAGE),
            },
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
