//! The per-scenario report of the `data-plane` suite: one JSON line per scenario test, appended to
//! the file named by [`FILE_ENV`], which the e2e driver sets for each phase it runs and reads
//! back into the cell's result file; `cargo xtask gate` prints it as a table.
//!
//! A line: `{"scenario": "<test fn name>", "engine": "postgresql"|"mysql", "apply_jobs":
//! {"<plan name>": <n>, …}, "database": "ok"|"failed: <why>", "leak_scan": "clean"|"leaked:
//! <where>", "seconds": <f64>}`. Tests write it with [`Record::append`]; the driver reads it with
//! [`read`]. One type serves both, so the writer and the reader cannot drift apart.

use std::{
    collections::BTreeMap,
    fmt,
    io::Write,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

/// Environment variable naming the file the scenario tests of a phase append to.
pub const FILE_ENV: &str = "PTAH_E2E_SCENARIOS_FILE";

/// The database family a scenario ran against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// PostgreSQL.
    Postgresql,
    /// The MySQL family (MariaDB on the local provider).
    Mysql,
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Engine::Postgresql => "postgresql",
            Engine::Mysql => "mysql",
        })
    }
}

/// What the scenario found in the database's own state: `"ok"` or `"failed: <why>"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Database {
    /// The tables, the revision table and the lock owner are as the scenario expects.
    Ok,
    /// They are not; the text says how.
    Failed(String),
}

/// What the scan of Pod logs, Events, status and plan objects for passwords found:
/// `"clean"` or `"leaked: <where>"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum LeakScan {
    /// No password anywhere.
    Clean,
    /// A password was found; the text says where.
    Leaked(String),
}

/// One scenario's result: one line of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The test function's name.
    pub scenario: String,
    /// The engine it ran against.
    pub engine: Engine,
    /// The number of Apply Jobs per plan name.
    pub apply_jobs: BTreeMap<String, u32>,
    /// The database verdict.
    pub database: Database,
    /// The leak-scan verdict.
    pub leak_scan: LeakScan,
    /// The scenario's own time in seconds.
    pub seconds: f64,
}

impl Record {
    /// Appends this record as one line to the file in [`FILE_ENV`]; does nothing when it is unset.
    pub fn append(&self) -> std::io::Result<()> {
        match std::env::var_os(FILE_ENV).filter(|v| !v.is_empty()) {
            Some(path) => self.append_to(Path::new(&path)),
            None => Ok(()),
        }
    }

    /// Appends this record as one line to `path` (created if missing).
    pub fn append_to(&self, path: &Path) -> std::io::Result<()> {
        let line = self.to_line()?;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        // One write of the whole line, so lines of tests running at once do not interleave.
        file.write_all(line.as_bytes())
    }

    /// The record as one JSON line, newline included; refuses a time that is not finite.
    pub fn to_line(&self) -> std::io::Result<String> {
        if !self.seconds.is_finite() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "scenario {}: seconds {} is not finite",
                    self.scenario, self.seconds
                ),
            ));
        }
        let json = serde_json::to_string(self).map_err(std::io::Error::other)?;
        Ok(json + "\n")
    }

    /// The failures the scenario reports of its own (database failed, a password leaked).
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if let Database::Failed(why) = &self.database {
            failures.push(format!("database failed: {why}"));
        }
        if let LeakScan::Leaked(place) = &self.leak_scan {
            failures.push(format!("leaked: {place}"));
        }
        failures
    }
}

impl TryFrom<String> for Database {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.as_str() {
            "ok" => Ok(Database::Ok),
            _ => match text.strip_prefix("failed: ") {
                Some(why) if !why.trim().is_empty() => Ok(Database::Failed(why.to_owned())),
                _ => Err(format!(
                    "database verdict {text:?} is neither \"ok\" nor \"failed: <why>\""
                )),
            },
        }
    }
}

impl From<Database> for String {
    fn from(verdict: Database) -> Self {
        match verdict {
            Database::Ok => "ok".to_owned(),
            Database::Failed(why) => format!("failed: {why}"),
        }
    }
}

impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from(self.clone()))
    }
}

impl TryFrom<String> for LeakScan {
    type Error = String;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.as_str() {
            "clean" => Ok(LeakScan::Clean),
            _ => match text.strip_prefix("leaked: ") {
                Some(place) if !place.trim().is_empty() => Ok(LeakScan::Leaked(place.to_owned())),
                _ => Err(format!(
                    "leak-scan verdict {text:?} is neither \"clean\" nor \"leaked: <where>\""
                )),
            },
        }
    }
}

impl From<LeakScan> for String {
    fn from(verdict: LeakScan) -> Self {
        match verdict {
            LeakScan::Clean => "clean".to_owned(),
            LeakScan::Leaked(place) => format!("leaked: {place}"),
        }
    }
}

impl fmt::Display for LeakScan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from(self.clone()))
    }
}

/// Why a report file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file exists but cannot be read.
    #[error("cannot read the scenario report {path}: {source}")]
    Io {
        /// The report file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a record.
    #[error("{path}:{line}: not a scenario record ({reason})")]
    Malformed {
        /// The report file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Every record of the report at `path`, in file order; no file means no scenario ran.
pub fn read(path: &Path) -> Result<Vec<Record>, ReadError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(path, &text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(source) => Err(ReadError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Parses the report `text` read from `path` (named in errors); blank lines are skipped.
pub fn parse(path: &Path, text: &str) -> Result<Vec<Record>, ReadError> {
    let malformed = |line: usize, reason: String| ReadError::Malformed {
        path: path.to_owned(),
        line,
        reason,
    };
    let mut records = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Record =
            serde_json::from_str(line).map_err(|err| malformed(index + 1, err.to_string()))?;
        if !record.seconds.is_finite() || record.seconds < 0.0 {
            return Err(malformed(
                index + 1,
                format!("seconds {} is not a duration", record.seconds),
            ));
        }
        if record.scenario.trim().is_empty() {
            return Err(malformed(index + 1, "the scenario has no name".to_owned()));
        }
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        Record {
            scenario: "e2e_dataplane_registry_outage".to_owned(),
            engine: Engine::Postgresql,
            apply_jobs: BTreeMap::from([("users-1a2b".to_owned(), 1), ("orders-3c4d".to_owned(), 0)]),
            database: Database::Ok,
            leak_scan: LeakScan::Leaked("Pod log ptah-apply-x".to_owned()),
            seconds: 12.5,
        }
    }

    #[test]
    fn a_line_has_exactly_the_documented_format() {
        let line = record().to_line().expect("line");
        assert!(
            line.ends_with('\n') && line.matches('\n').count() == 1,
            "{line:?}"
        );
        let json: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(
            json,
            serde_json::json!({
                "scenario": "e2e_dataplane_registry_outage",
                "engine": "postgresql",
                "apply_jobs": {"orders-3c4d": 0, "users-1a2b": 1},
                "database": "ok",
                "leak_scan": "leaked: Pod log ptah-apply-x",
                "seconds": 12.5,
            })
        );
    }

    #[test]
    fn what_append_writes_is_what_read_returns() {
        let dir = std::env::temp_dir().join(format!("ptah-scenario-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("cell.scenarios.jsonl");
        let _ = std::fs::remove_file(&path);
        assert_eq!(read(&path).expect("no file"), Vec::new());
        let first = record();
        let second = Record {
            engine: Engine::Mysql,
            database: Database::Failed("table users missing".to_owned()),
            leak_scan: LeakScan::Clean,
            apply_jobs: BTreeMap::new(),
            ..record()
        };
        first.append_to(&path).expect("append");
        second.append_to(&path).expect("append");
        assert_eq!(read(&path).expect("read"), vec![first, second.clone()]);
        assert_eq!(
            second.failures(),
            vec!["database failed: table users missing".to_owned()]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_malformed_line_is_refused_with_the_file_and_line() {
        let path = Path::new("/run/cell.scenarios.jsonl");
        let good = record().to_line().expect("line");
        for (bad, why) in [
            ("{\"scenario\": \"x\"}", "missing field"),
            ("not json", "expected"),
            (&good.replace("\"ok\"", "\"fine\""), "neither \"ok\""),
            (&good.replace("postgresql", "oracle"), "unknown variant"),
            (&good.replace("12.5", "-1.0"), "not a duration"),
            (
                &good.replace("\"seconds\"", "\"extra\":1,\"seconds\""),
                "unknown field",
            ),
        ] {
            let text = format!("{good}\n{bad}\n");
            let err = parse(path, &text).expect_err(bad).to_string();
            assert!(
                err.starts_with("/run/cell.scenarios.jsonl:3: not a scenario record"),
                "{err}"
            );
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn a_time_that_is_not_finite_is_not_written() {
        let err = Record {
            seconds: f64::NAN,
            ..record()
        }
        .to_line()
        .expect_err("NaN");
        assert!(err.to_string().contains("not finite"), "{err}");
    }
}
