//! Per-file directives in the comment header before the first statement.
//!
//! `-- +ptah no_transaction`, `-- +ptah lock_timeout=3s`, `-- +ptah statement_timeout=30s`, the
//! Atlas spelling `-- atlas:txmode none|file` and Mattermost's morph spelling
//! `-- morph:nontransactional` (its golang-migrate files carry it). A directive after the first SQL line is ignored with
//! a warning (as the reference does); an unreadable value or an unknown `+ptah` directive is an
//! error, so a check or online-DDL directive this executor does not implement never passes silently.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::Error;

/// How a file's statements are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TxMode {
    /// One transaction per file (PostgreSQL); per-statement progress on MySQL/MariaDB.
    #[default]
    File,
    /// No transaction: each statement commits on its own (`-- +ptah no_transaction`).
    None,
}

/// The directives of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Headers {
    /// The transaction mode.
    pub tx_mode: TxMode,
    /// `lock_timeout=` for the file's statements.
    pub lock_timeout: Option<Duration>,
    /// `statement_timeout=` for the file's statements.
    pub statement_timeout: Option<Duration>,
}

/// Parses `500ms`, `3s`, `2m` or `1h` (a whole number and a unit).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 500ms, 3s, 2m or 1h"))?;
    let ms = match unit {
        "ms" => Some(n),
        "s" => n.checked_mul(1_000),
        "m" => n.checked_mul(60_000),
        "h" => n.checked_mul(3_600_000),
        _ => None,
    };
    ms.map(Duration::from_millis)
        .ok_or_else(|| format!("{text:?} is not a duration like 500ms, 3s, 2m or 1h"))
}

/// Reads the header of the file at `path` (used in messages only).
pub fn parse_headers(path: &str, sql: &str) -> Result<Headers, Error> {
    let mut headers = Headers::default();
    let mut in_header = true;
    for (index, line) in sql.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let Some(comment) = trimmed.strip_prefix("--") else {
            in_header = false;
            continue;
        };
        let comment = comment.trim();
        let directive = comment
            .strip_prefix("+ptah")
            .filter(|rest| rest.is_empty() || rest.starts_with(char::is_whitespace))
            .map(|rest| ("+ptah", rest.trim()))
            .or_else(|| {
                comment
                    .strip_prefix("atlas:txmode")
                    .map(|rest| ("txmode", rest.trim()))
            })
            .or_else(|| {
                comment
                    .strip_prefix("morph:nontransactional")
                    .map(|rest| ("morph", rest.trim()))
            });
        let Some((kind, body)) = directive else {
            continue;
        };
        if !in_header {
            tracing::warn!(
                file = path,
                line = number,
                "ignoring a directive placed after SQL"
            );
            continue;
        }
        let err = |reason: String| Error::Header {
            path: path.to_owned(),
            line: number,
            reason,
        };
        if kind == "morph" {
            if !body.is_empty() {
                return Err(err(format!(
                    "morph:nontransactional takes no value (found {body:?})"
                )));
            }
            headers.tx_mode = TxMode::None;
            continue;
        }
        if kind == "txmode" {
            headers.tx_mode = match body {
                "none" => TxMode::None,
                "file" => TxMode::File,
                other => {
                    return Err(err(format!(
                        "atlas:txmode {other:?} is not supported (none or file)"
                    )));
                }
            };
            continue;
        }
        for word in body.split_whitespace() {
            match word.split_once('=') {
                None if word == "no_transaction" => headers.tx_mode = TxMode::None,
                Some(("lock_timeout", value)) => {
                    headers.lock_timeout = Some(parse_duration(value).map_err(&err)?);
                }
                Some(("statement_timeout", value)) => {
                    headers.statement_timeout = Some(parse_duration(value).map_err(&err)?);
                }
                _ => {
                    return Err(err(format!(
                        "the directive `+ptah {word}` is not supported by this executor"
                    )));
                }
            }
        }
    }
    if headers.tx_mode == TxMode::None
        && (headers.lock_timeout.is_some() || headers.statement_timeout.is_some())
    {
        return Err(Error::Header {
            path: path.to_owned(),
            line: 1,
            reason: "lock_timeout and statement_timeout are refused with no_transaction".into(),
        });
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_directives_before_the_first_statement() {
        let h = parse_headers(
            "f",
            "-- a comment\n\n-- +ptah lock_timeout=3s statement_timeout=2m\nCREATE TABLE t (a int);\n-- +ptah no_transaction\n",
        )
        .expect("valid");
        assert_eq!(h.tx_mode, TxMode::File, "a directive after SQL is ignored");
        assert_eq!(h.lock_timeout, Some(Duration::from_secs(3)));
        assert_eq!(h.statement_timeout, Some(Duration::from_secs(120)));
        let h = parse_headers(
            "f",
            "-- +ptah no_transaction\nCREATE INDEX CONCURRENTLY i ON t (a);",
        )
        .expect("valid");
        assert_eq!(h.tx_mode, TxMode::None);
        let h = parse_headers("f", "-- atlas:txmode none\nSELECT 1;").expect("valid");
        assert_eq!(h.tx_mode, TxMode::None);
        let h = parse_headers(
            "f",
            "-- morph:nontransactional\nCREATE INDEX CONCURRENTLY i ON t (a);",
        )
        .expect("valid");
        assert_eq!(h.tx_mode, TxMode::None);
        let h = parse_headers("f", "SELECT 1;\n-- morph:nontransactional\n").expect("valid");
        assert_eq!(h.tx_mode, TxMode::File, "only the header counts");
    }

    #[test]
    fn refuses_unreadable_values_and_unknown_directives() {
        for bad in [
            "-- +ptah lock_timeout=3\n",
            "-- +ptah lock_timeout=soon\n",
            "-- +ptah check name=x assert=\"SELECT 1\"\n",
            "-- atlas:txmode all\n",
            "-- +ptah no_transaction lock_timeout=1s\n",
            "-- morph:nontransactional yes\n",
            "-- morph:nontransactional\n-- +ptah lock_timeout=1s\n",
        ] {
            let err = parse_headers("f", bad).expect_err(bad);
            assert!(matches!(err, Error::Header { .. }), "{bad}: {err}");
        }
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        for bad in ["1d", ""] {
            assert_eq!(
                parse_duration(bad),
                Err(format!("{bad:?} is not a duration like 500ms, 3s, 2m or 1h"))
            );
        }
    }
}
