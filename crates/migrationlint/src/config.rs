//! `.ptah-lint.yaml`: rules turned off, severities changed, files left out.
//!
//! ```yaml
//! disable: [MF101]
//! severity: {PG101: error}
//! exclude: ["0001_initial"]
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::{LintError, Severity, rules};

/// The linter's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Rules that never report.
    #[serde(default)]
    pub disable: BTreeSet<String>,
    /// Severities that replace a rule's default.
    #[serde(default)]
    pub severity: BTreeMap<String, Severity>,
    /// Files whose path contains one of these is not linted.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// The name the CLI looks for in the migration directory.
pub const CONFIG_FILE: &str = ".ptah-lint.yaml";

impl Config {
    /// Reads a config; refuses an unknown key or a code no rule has.
    pub fn parse(text: &str) -> Result<Config, LintError> {
        let config: Config = serde_saphyr::from_str(text).map_err(|e| LintError::Config(e.to_string()))?;
        for code in config.disable.iter().chain(config.severity.keys()) {
            if rules::by_code(code).is_none() {
                return Err(LintError::Config(format!("{code} is no rule's code")));
            }
        }
        Ok(config)
    }

    /// The severity `code` reports at, `None` when it is disabled.
    pub fn severity_of(&self, code: &str) -> Option<Severity> {
        if self.disable.contains(code) {
            return None;
        }
        self.severity
            .get(code)
            .copied()
            .or_else(|| rules::by_code(code).map(|r| r.severity))
    }

    /// Whether `path` is left out.
    pub fn excludes(&self, path: &str) -> bool {
        self.exclude.iter().any(|e| path.contains(e.as_str()))
    }
}
