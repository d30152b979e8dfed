//! What every `ptah` command shares: the database URL, the output format and exit codes.

use std::{path::PathBuf, time::Duration};

use clap::ValueEnum;
use ptah_engine::DatabaseUrl;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// Success, or nothing found.
pub const EXIT_OK: u8 = 0;
/// The command ran and found or caused a failure (a failed migration, integrity drift, a stale sequence).
pub const EXIT_FAILURE: u8 = 1;
/// Usage, configuration or input error, connection failure, or a refused gate (dirty, lock busy).
pub const EXIT_USAGE: u8 = 2;

/// The version of every JSON document this CLI prints.
pub const FORMAT_VERSION: u32 = 1;

/// How reports are written to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Lines for people.
    #[default]
    Text,
    /// One JSON document (`format_version: 1`).
    Json,
}

/// The database to connect to.
#[derive(Clone, clap::Args)]
pub struct DbArgs {
    /// Database URL (`postgres://…` or `mysql://…`); prefer the environment variable, which stays out of `ps`.
    #[arg(long, visible_alias = "db-url", env = "PTAH_DB_URL", hide_env_values = true)]
    pub url: String,
    /// How long connecting may take (e.g. 10s).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub connect_timeout: Duration,
    /// PEM CA bundle the TLS modes (`sslmode=require|verify-ca|verify-full`, MySQL
    /// `ssl-mode=REQUIRED|VERIFY_CA|VERIFY_IDENTITY`) check the server's certificate against;
    /// without it the verifying modes trust the public web PKI roots.
    #[arg(long, env = "PTAH_DB_CA_FILE")]
    pub db_ca_file: Option<PathBuf>,
}

/// Shows the URL's scheme only: a password with an unencoded `/`, `?`, `#` or `@` can make any
/// other part of a malformed URL carry a piece of it.
impl std::fmt::Debug for DbArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbArgs")
            .field("url", &format_args!("{}", redacted_url(&self.url)))
            .field("connect_timeout", &self.connect_timeout)
            .field("db_ca_file", &self.db_ca_file)
            .finish()
    }
}

/// A database URL for `Debug` output: its scheme only.
pub fn redacted_url(url: &str) -> String {
    let scheme = url.split_once("://").map(|(s, _)| s).filter(|s| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    match scheme {
        Some(s) => format!("{s}://[REDACTED]"),
        None => "[REDACTED]".to_owned(),
    }
}

impl DbArgs {
    /// The parsed URL with the CA bundle; a refusal never shows the password.
    pub fn database_url(&self) -> Result<DatabaseUrl, ptah_engine::Error> {
        Ok(DatabaseUrl::parse(&self.url)?.with_ca_file(self.db_ca_file.clone()))
    }

    /// The parsed target; a refusal never shows the password.
    pub fn target(&self) -> Result<ptah_migrate::Target, ptah_engine::Error> {
        Ok(ptah_migrate::Target {
            url: self.database_url()?,
            connect_timeout: self.connect_timeout,
        })
    }
}

/// Parses `500ms`, `3s`, `2m`, `1h` for clap.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    ptah_migrate::parse_duration(text)
}

/// Writes one command's report or error in the chosen format and picks the exit code.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// The chosen format.
    pub format: Format,
    /// The command's name, e.g. `migrations status`.
    pub command: &'static str,
}

impl Output {
    /// Prints `report` (JSON) or `text` and returns `exit`.
    pub fn report<T: Serialize>(&self, report: &T, text: impl FnOnce() -> String, exit: u8) -> u8 {
        match self.format {
            Format::Text => println!("{}", text().trim_end()),
            Format::Json => {
                let body = match serde_json::to_value(report) {
                    Ok(Value::Object(map)) => map,
                    Ok(other) => Map::from_iter([("report".to_owned(), other)]),
                    Err(err) => {
                        return self.error(
                            "internal",
                            &format!("cannot render the report: {err}"),
                            EXIT_FAILURE,
                        );
                    }
                };
                self.print_json(body, exit);
            }
        }
        exit
    }

    /// Reports an error: `error: …` on stderr, in JSON mode a document with `error` on stdout,
    /// and the termination line when `PTAH_TERMINATION_LOG` asks for one
    /// ([`crate::termination`]). Every failing command ends here.
    pub fn error(&self, code: &str, message: &str, exit: u8) -> u8 {
        eprintln!("error: {message}");
        crate::termination::record(code, message);
        if self.format == Format::Json {
            let body = Map::from_iter([("error".to_owned(), json!({ "code": code, "message": message }))]);
            self.print_json(body, exit);
        }
        exit
    }

    fn print_json(&self, body: Map<String, Value>, exit: u8) {
        let mut doc = Map::new();
        doc.insert("format_version".into(), json!(FORMAT_VERSION));
        doc.insert("command".into(), json!(self.command));
        doc.insert("exit_code".into(), json!(exit));
        doc.extend(body);
        match serde_json::to_string_pretty(&Value::Object(doc)) {
            Ok(text) => println!("{text}"),
            Err(err) => eprintln!("error: cannot render JSON: {err}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_args_debug_never_shows_the_password() {
        let args = DbArgs {
            url: "postgres://app:s3cr3t%2Fp%40ss@db.example:5432/shop".into(),
            connect_timeout: Duration::from_secs(10),
            db_ca_file: None,
        };
        let unparseable = DbArgs {
            url: "postgres://app:pa/ss?w#rd@db.example:5432/shop".into(),
            ..args.clone()
        };
        for a in [&args, &unparseable] {
            for text in [format!("{a:?}"), format!("{a:#?}")] {
                for form in [
                    "s3cr3t",
                    "s3cr3t%2Fp%40ss",
                    "s3cr3t/p@ss",
                    "pa/ss",
                    "pa%2Fss",
                    "w#rd",
                ] {
                    assert!(!text.contains(form), "{form:?} in {text}");
                }
                assert!(text.contains("[REDACTED]") && text.contains("10s"), "{text}");
            }
        }
    }
}
