//! The process-wide tracing subscriber: JSON in a cluster, pretty on a terminal.

use std::{io::IsTerminal as _, str::FromStr};

use tracing_subscriber::EnvFilter;

use crate::TelemetryError;

/// The filter used when `RUST_LOG` is unset or empty.
pub const DEFAULT_FILTER: &str = "info";

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line, for log collectors.
    Json,
    /// Human-readable, coloured lines.
    Pretty,
}

impl LogFormat {
    /// Pretty when stderr is a terminal, JSON otherwise (a container's output is never a terminal).
    pub fn detect() -> Self {
        if std::io::stderr().is_terminal() {
            LogFormat::Pretty
        } else {
            LogFormat::Json
        }
    }
}

impl FromStr for LogFormat {
    type Err = TelemetryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(LogFormat::Json),
            "pretty" => Ok(LogFormat::Pretty),
            other => Err(TelemetryError::UnknownLogFormat(other.to_owned())),
        }
    }
}

/// The filter from `RUST_LOG`, or [`DEFAULT_FILTER`] when it is unset or empty.
///
/// An invalid `RUST_LOG` is an error rather than a silent fallback: a typo would otherwise hide the
/// very logs someone asked for.
pub fn filter_from(rust_log: Option<&str>) -> Result<EnvFilter, TelemetryError> {
    let directives = rust_log
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or(DEFAULT_FILTER);
    EnvFilter::builder()
        .parse(directives)
        .map_err(|e| TelemetryError::InvalidFilter(e.to_string()))
}

/// Installs the global subscriber in `format`, filtered by `RUST_LOG` (default `info`).
pub fn init(format: LogFormat) -> Result<(), TelemetryError> {
    let rust_log = std::env::var("RUST_LOG").ok();
    let filter = filter_from(rust_log.as_deref())?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let installed = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
    installed.map_err(|e| TelemetryError::AlreadyInitialized(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_filter_is_info_and_a_bad_one_is_refused() {
        assert_eq!(filter_from(None).expect("default").to_string(), "info");
        assert_eq!(filter_from(Some("  ")).expect("blank").to_string(), "info");
        assert_eq!(
            filter_from(Some("ptah_controller=debug"))
                .expect("valid")
                .to_string(),
            "ptah_controller=debug"
        );
        let err = filter_from(Some("ptah=notalevel")).expect_err("invalid");
        assert!(matches!(err, TelemetryError::InvalidFilter(_)), "{err:?}");
        assert!(err.to_string().contains("RUST_LOG"), "{err}");
    }

    #[test]
    fn formats_parse_by_name() {
        assert_eq!("json".parse::<LogFormat>().expect("json"), LogFormat::Json);
        assert_eq!("pretty".parse::<LogFormat>().expect("pretty"), LogFormat::Pretty);
        let r = "text".parse::<LogFormat>();
        assert!(
            matches!(&r, Err(TelemetryError::UnknownLogFormat(name)) if name == "text"),
            "{r:?}"
        );
    }

    #[test]
    fn init_twice_is_an_error_not_a_panic() {
        // The first call may race another test's subscriber; the second always finds one installed.
        let _ = init(LogFormat::Json);
        let err = init(LogFormat::Pretty).expect_err("already installed");
        assert!(matches!(err, TelemetryError::AlreadyInitialized(_)), "{err}");
    }
}
