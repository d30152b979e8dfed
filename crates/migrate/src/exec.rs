//! Runs one migration's statements and keeps its revision row truthful at every step.
//!
//! The row is written `pending` (autocommit) before the body runs, so a process that dies midway
//! leaves a dirty row behind. PostgreSQL runs a `file`-mode script in one transaction with
//! `SET LOCAL` timeouts and marks the row `applied` inside it; a failure rolls the body back and
//! records `failed` with nothing applied. Without a transaction (MySQL/MariaDB, where DDL commits
//! implicitly, or `no_transaction`) each statement commits on its own and the row's `applied`
//! count follows it; a failure records `failed` with the committed count.

use std::time::{Duration, Instant};

use ptah_engine::Session;
use serde::Serialize;

use crate::{Error, Script, TxMode, Version, table};

/// Why a migration stopped: the row is left `failed` with these values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The version.
    pub version: Version,
    /// The digits as written in the file name, when they are not the reference's ten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_version: Option<String>,
    /// Its description.
    pub description: String,
    /// Statements that committed and stay committed.
    pub applied: usize,
    /// Statements in the file.
    pub total: usize,
    /// 1-based index of the failing statement.
    pub statement: usize,
    /// 1-based line of the failing statement in the up file.
    pub line: usize,
    /// The server's message.
    pub error: String,
}

fn millis(since: Instant) -> i64 {
    i64::try_from(since.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// Runs `script` on `session`; `Ok(Err(failure))` when a statement failed and was recorded.
pub(crate) async fn run(session: &mut Session, script: &Script<'_>) -> Result<Result<(), Failure>, Error> {
    let m = script.migration;
    let total = script.statements.len();
    let started = Instant::now();
    table::write(
        session,
        m.version,
        &m.description,
        &m.checksum(),
        table::PENDING,
        0,
        total,
    )
    .await?;
    let transactional = matches!(session, Session::Postgres { .. }) && script.headers.tx_mode == TxMode::File;
    let result = if transactional {
        run_in_transaction(session, script, started).await?
    } else {
        run_each(session, script, started).await?
    };
    if let Err(failure) = &result {
        tracing::error!(
            version = %m.shown_version(), statement = failure.statement, line = failure.line,
            applied = failure.applied, total, error = %failure.error, "migration failed"
        );
    } else {
        tracing::info!(version = %m.shown_version(), description = %m.description, statements = total,
            elapsed_ms = millis(started), "migration applied");
    }
    Ok(result)
}

fn failure(script: &Script<'_>, index: usize, applied: usize, error: String) -> Failure {
    Failure {
        version: script.migration.version,
        file_version: script.migration.file_version().map(str::to_owned),
        description: script.migration.description.clone(),
        applied,
        total: script.statements.len(),
        statement: index + 1,
        line: script.statements.get(index).map_or(0, |s| s.line),
        error,
    }
}

async fn run_in_transaction(
    session: &mut Session,
    script: &Script<'_>,
    started: Instant,
) -> Result<Result<(), Failure>, Error> {
    let m = script.migration;
    let total = script.statements.len();
    let mut setup = String::from("BEGIN");
    if let Some(t) = script.headers.lock_timeout {
        setup.push_str(&format!("; SET LOCAL lock_timeout = '{}ms'", t.as_millis()));
    }
    if let Some(t) = script.headers.statement_timeout {
        setup.push_str(&format!("; SET LOCAL statement_timeout = '{}ms'", t.as_millis()));
    }
    session.batch(&setup).await.map_err(|e| Error::RevisionTable {
        context: "begin a transaction",
        message: table::engine_message(e),
    })?;
    for (index, statement) in script.statements.iter().enumerate() {
        if let Err(e) = session.batch(&statement.sql).await {
            let message = table::engine_message(e);
            rollback(session).await;
            table::fail(session, m.version, 0, &message, &statement.sql, millis(started)).await?;
            return Ok(Err(failure(script, index, 0, message)));
        }
    }
    if let Err(e) = table::finish(session, m.version, total, millis(started)).await {
        rollback(session).await;
        return Err(e);
    }
    if let Err(e) = session.batch("COMMIT").await {
        let message = table::engine_message(e);
        table::fail(session, m.version, 0, &message, "COMMIT", millis(started)).await?;
        return Ok(Err(failure(script, total.saturating_sub(1), 0, message)));
    }
    Ok(Ok(()))
}

async fn rollback(session: &mut Session) {
    if let Err(e) = session.batch("ROLLBACK").await {
        tracing::warn!(error = %e, "rollback failed; the server aborts the transaction anyway");
    }
}

async fn run_each(
    session: &mut Session,
    script: &Script<'_>,
    started: Instant,
) -> Result<Result<(), Failure>, Error> {
    let m = script.migration;
    let reset = set_timeouts(session, script).await?;
    let total = script.statements.len();
    let mut outcome = Ok(());
    for (index, statement) in script.statements.iter().enumerate() {
        match session.batch(&statement.sql).await {
            // After the last statement, with no timeouts to reset, the very next write is
            // `finish`, which records the same count: a progress write there would only add a
            // round trip and a commit per migration.
            Ok(()) if index + 1 == total && reset.is_empty() => {}
            Ok(()) => table::progress(session, m.version, index + 1).await?,
            Err(e) => {
                let message = table::engine_message(e);
                table::fail(
                    session,
                    m.version,
                    index,
                    &message,
                    &statement.sql,
                    millis(started),
                )
                .await?;
                outcome = Err(failure(script, index, index, message));
                break;
            }
        }
    }
    for statement in reset {
        session.batch(statement).await.map_err(|e| Error::RevisionTable {
            context: "reset session timeouts",
            message: table::engine_message(e),
        })?;
    }
    if outcome.is_ok() {
        table::finish(session, m.version, total, millis(started)).await?;
    }
    Ok(outcome)
}

/// Applies a MySQL/MariaDB file's timeouts to the session; returns the statements that reset them.
async fn set_timeouts(session: &mut Session, script: &Script<'_>) -> Result<Vec<&'static str>, Error> {
    let Session::MySql(conn) = session else {
        return Ok(Vec::new());
    };
    let headers = &script.headers;
    if headers.lock_timeout.is_none() && headers.statement_timeout.is_none() {
        return Ok(Vec::new());
    }
    use mysql_async::prelude::Queryable;
    let err = |e: mysql_async::Error| Error::RevisionTable {
        context: "set session timeouts",
        message: e.to_string(),
    };
    let version: Option<String> = conn.query_first("SELECT VERSION()").await.map_err(err)?;
    let mariadb = version.unwrap_or_default().contains("MariaDB");
    let seconds = |d: Duration| d.as_secs() + u64::from(d.subsec_nanos() > 0);
    let mut set = Vec::new();
    let mut reset = Vec::new();
    if let Some(t) = headers.lock_timeout {
        let s = seconds(t).max(1);
        set.push(format!(
            "SET SESSION innodb_lock_wait_timeout = {s}, SESSION lock_wait_timeout = {s}"
        ));
        reset.push("SET SESSION innodb_lock_wait_timeout = DEFAULT, SESSION lock_wait_timeout = DEFAULT");
    }
    if let Some(t) = headers.statement_timeout {
        if mariadb {
            set.push(format!("SET SESSION max_statement_time = {:.3}", t.as_secs_f64()));
            reset.push("SET SESSION max_statement_time = DEFAULT");
        } else {
            set.push(format!("SET SESSION max_execution_time = {}", t.as_millis()));
            reset.push("SET SESSION max_execution_time = DEFAULT");
        }
    }
    for statement in set {
        conn.query_drop(statement).await.map_err(err)?;
    }
    Ok(reset)
}
