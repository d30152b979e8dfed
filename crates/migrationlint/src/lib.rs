//! The migration linter (`ptah migrations lint`): what a pending migration would do to a live
//! database, found before it runs.
//!
//! The rule families ([`rules::RULES`]): `DS` destructive changes, `PG` PostgreSQL lock hazards,
//! `MY` MySQL/MariaDB table copies, `TX` transaction conflicts, `MF` file rules, `BC` renames.
//! Each file's up part (a `.up.sql`, or the up section of a goose or dbmate file) is split as the
//! executor splits it and each statement parsed for the file's dialect; a statement the parser
//! cannot read is reported (`SQL001`) unless a rule knows its form without the parser. Findings are suppressed by a
//! `-- ptah:nolint CODE` comment above the statement ([`suppress`]) or by [`Config`].

#![warn(missing_docs)]

mod config;
pub mod lock;
pub mod online;
pub mod rules;
mod statement;
mod suppress;

pub use config::{CONFIG_FILE, Config};
use ptah_engine::Dialect;
use ptah_migrate::{Directory, Migration, PieceKind, TxMode, parse_headers, parse_sections, pieces};
pub use rules::{RULES, Rule, Severity};
use serde::Serialize;

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The rule's code.
    pub code: &'static str,
    /// Its severity after the config.
    pub severity: Severity,
    /// The file, as the directory names it.
    pub file: String,
    /// 1-based line of the statement's first code (0 for a rule about the whole file).
    pub line: usize,
    /// What was found.
    pub message: String,
}

/// Everything found in a directory, file by file in version order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The findings.
    pub findings: Vec<Finding>,
}

impl Report {
    /// The highest severity found.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// Why linting could not be done.
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// The config file is not one.
    #[error("lint config: {0}")]
    Config(String),
    /// A file's headers or sections are refused (as `migrations up` would refuse them).
    #[error(transparent)]
    Migration(#[from] ptah_migrate::Error),
}

/// Lints every migration of `dir` (those after `after`, when given: the pending ones).
pub fn lint_directory(
    dir: &Directory,
    dialect: Dialect,
    config: &Config,
    after: Option<ptah_migrate::Version>,
) -> Result<Report, LintError> {
    let mut report = Report::default();
    for migration in dir.migrations() {
        if after.is_some_and(|v| migration.version <= v) || config.excludes(&migration.up.path) {
            continue;
        }
        report
            .findings
            .extend(lint_migration(migration, dialect, config)?);
    }
    Ok(report)
}

fn lint_migration(m: &Migration, dialect: Dialect, config: &Config) -> Result<Vec<Finding>, LintError> {
    let path = m.up.path.clone();
    let text = String::from_utf8_lossy(&m.up.bytes).into_owned();
    let mut found = Vec::new();
    let (up, in_transaction) = if m.is_single_file() {
        let sections = parse_sections(&path, &text)?;
        if !has_down(&text) {
            found.push(("MF101", 0, "the file has no down section".to_owned()));
        }
        (sections.up, !sections.no_transaction)
    } else {
        // A pair's down half is mandatory: the directory refuses a pair without it.
        let headers = parse_headers(&path, &text)?;
        (0..text.len(), headers.tx_mode == TxMode::File)
    };
    let mut ctx = statement::Context {
        // MySQL/MariaDB commit every DDL statement on their own: no file transaction to conflict with.
        in_transaction: in_transaction && dialect == Dialect::Postgres,
        ..statement::Context::default()
    };
    let body = &text[up.clone()];
    let base_line = text[..up.start].matches('\n').count();
    let parts = pieces(body, dialect).map_err(|e| {
        LintError::Migration(ptah_migrate::Error::Split {
            path: path.clone(),
            line: base_line + e.line,
            reason: e.reason,
        })
    })?;
    let mut statements = 0;
    for piece in parts.iter().filter(|p| p.kind == PieceKind::Body) {
        let Some(first) = piece.first_code else { continue };
        statements += 1;
        let sql = body[first..piece.range.end].trim();
        let line = base_line + body[..first].matches('\n').count() + 1;
        let quiet = suppress::suppressed(&body[piece.range.start..first]);
        let mut hits = Vec::new();
        if ctx.in_transaction
            && let Some(nt) = ptah_migrate::non_transactional(sql)
            && !nt.what.contains("CONCURRENTLY")
        {
            hits.push((
                "TX101",
                format!("{} cannot run in the file's transaction", nt.what),
            ));
        }
        match statement::parse(sql, dialect) {
            Some(parsed) => {
                for stmt in &parsed {
                    hits.extend(statement::check(stmt, dialect, &mut ctx));
                }
            }
            None => hits.extend(statement::unparsed(sql, dialect, &mut ctx)),
        }
        for (code, message) in hits {
            if !suppress::covers(quiet.as_ref(), code) {
                found.push((code, line, message));
            }
        }
    }
    if statements == 0 {
        found.push(("MF102", 0, "the migration holds no statement".to_owned()));
    }
    Ok(found
        .into_iter()
        .filter_map(|(code, line, message)| {
            Some(Finding {
                code,
                severity: config.severity_of(code)?,
                file: path.clone(),
                line,
                message,
            })
        })
        .collect())
}

/// Whether a single file has a down section (`-- +goose Down`, `-- migrate:down`).
fn has_down(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim().trim_start_matches("--").trim().to_lowercase();
        l.starts_with("+goose down") || l.starts_with("migrate:down")
    })
}
