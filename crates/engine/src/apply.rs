//! Apply a plan under the shared advisory lock, refusing it when the live schema moved since it was
//! computed; verify that a database has converged on a desired schema.
//!
//! PostgreSQL runs the plan's transactional statements in one transaction with `SET LOCAL
//! lock_timeout`/`statement_timeout`, then each non-transactional one (`CONCURRENTLY`) alone after
//! the commit, its lock timeouts retried and an interrupted build's leftover dropped first
//! ([`crate::concurrent`]). MySQL/MariaDB commit DDL implicitly, so statements run one by one and the report
//! says exactly which ones committed.

use std::time::Duration;

use ptah_fingerprint::Fingerprint;
use ptah_schema::{Plan, PlanOptions, Schema, diff::ExcludeSet};

use crate::{Error, InspectScope, Session, inspect};

/// How to apply a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    /// How long to wait for the shared advisory lock before giving up with `LockBusy`.
    pub lock_wait: Duration,
    /// How long one statement may wait for a table lock (zero: no limit).
    pub lock_timeout: Duration,
    /// How long one statement may run (zero: no limit).
    pub statement_timeout: Duration,
    /// The part of the database the plan was computed against, to re-inspect for the stale check.
    pub scope: InspectScope,
    /// MySQL/MariaDB: whether a statement planned online may fall back to a form that copies the
    /// table or blocks its writes when the server refuses the online one ([`crate::online`]).
    pub allow_table_copy: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            lock_wait: Duration::from_secs(10),
            lock_timeout: Duration::from_secs(5),
            statement_timeout: Duration::ZERO,
            scope: InspectScope::all(),
            allow_table_copy: false,
        }
    }
}

/// What an apply did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyReport {
    /// How many statements committed.
    pub applied: usize,
    /// The plan's statement count.
    pub total: usize,
    /// The 0-based indexes of the committed statements, in execution order.
    pub committed: Vec<usize>,
    /// The statement that failed, if one did.
    pub failed_statement_index: Option<usize>,
    /// The server's message for that failure.
    pub error: Option<String>,
}

impl Error {
    /// The progress an [`Error::ApplyFailed`] records, as a report.
    pub fn apply_report(&self) -> Option<ApplyReport> {
        match self {
            Error::ApplyFailed {
                index,
                committed,
                total,
                error,
            } => Some(ApplyReport {
                applied: committed.len(),
                total: *total,
                committed: committed.clone(),
                failed_statement_index: Some(*index),
                error: Some(error.clone()),
            }),
            _ => None,
        }
    }
}

/// The fingerprint the planner records as `from_fingerprint`: the live schema without excluded
/// tables and enums ([`ptah_schema::plan`] computes it the same way).
pub fn live_fingerprint(live: &Schema, exclude: &[String]) -> Fingerprint {
    ExcludeSet::new(exclude).apply(live).fingerprint()
}

/// Applies `plan` on `session` under the shared lock; refuses a stale plan before running anything.
pub async fn apply(session: &mut Session, plan: &Plan, opts: &ApplyOptions) -> Result<ApplyReport, Error> {
    if plan.dialect != session.dialect() {
        return Err(Error::DialectMismatch {
            plan: plan.dialect,
            database: session.dialect(),
        });
    }
    session.lock(opts.lock_wait).await?;
    let result = locked(session, plan, opts).await;
    let released = session.unlock().await;
    let report = result?;
    released?;
    Ok(report)
}

async fn locked(session: &mut Session, plan: &Plan, opts: &ApplyOptions) -> Result<ApplyReport, Error> {
    let live = inspect(session, &opts.scope).await?;
    let actual = live_fingerprint(&live, &plan.exclude);
    if actual != plan.from_fingerprint {
        return Err(Error::StalePlan {
            expected: plan.from_fingerprint,
            actual,
        });
    }
    let committed = match session {
        Session::Postgres { client, .. } => postgres(client, plan, opts).await?,
        Session::MySql(conn) => mysql(conn, plan, opts).await?,
    };
    Ok(ApplyReport {
        applied: committed.len(),
        total: plan.statements.len(),
        committed,
        failed_statement_index: None,
        error: None,
    })
}

/// A PostgreSQL interval literal in milliseconds (`0` disables the limit).
fn millis(d: Duration) -> u128 {
    d.as_millis()
}

async fn postgres(
    client: &tokio_postgres::Client,
    plan: &Plan,
    opts: &ApplyOptions,
) -> Result<Vec<usize>, Error> {
    let total = plan.statements.len();
    let failed = |index: usize, committed: &[usize], err: tokio_postgres::Error| Error::ApplyFailed {
        index,
        committed: committed.to_vec(),
        total,
        error: crate::postgres_message(&err),
    };
    let (in_tx, alone): (Vec<_>, Vec<_>) = plan
        .statements
        .iter()
        .enumerate()
        .partition(|(_, s)| s.transactional);
    let lock = format!("lock_timeout = '{}ms'", millis(opts.lock_timeout));
    let statement = format!("statement_timeout = '{}ms'", millis(opts.statement_timeout));
    let mut committed = Vec::new();
    if !in_tx.is_empty() {
        let begin = format!("BEGIN; SET LOCAL {lock}; SET LOCAL {statement}");
        client.batch_execute(&begin).await.map_err(Error::postgres)?;
        for (index, statement) in &in_tx {
            if let Err(err) = client.batch_execute(&statement.sql).await {
                // Nothing of the transaction survives; the rollback's own failure adds nothing.
                let _ = client.batch_execute("ROLLBACK").await;
                return Err(failed(*index, &committed, err));
            }
        }
        if let Err(err) = client.batch_execute("COMMIT").await {
            let last = in_tx.last().map_or(0, |(i, _)| *i);
            return Err(failed(last, &committed, err));
        }
        committed.extend(in_tx.iter().map(|(i, _)| *i));
    }
    if !alone.is_empty() {
        client
            .batch_execute(&format!("SET {lock}; SET {statement}"))
            .await
            .map_err(Error::postgres)?;
        let mut outcome = Ok(());
        for (index, statement) in &alone {
            if let Err(err) = crate::concurrent::run(client, &statement.sql).await {
                outcome = Err(failed(*index, &committed, err));
                break;
            }
            committed.push(*index);
        }
        let reset = client
            .batch_execute("RESET lock_timeout; RESET statement_timeout")
            .await;
        outcome?;
        reset.map_err(Error::postgres)?;
    }
    Ok(committed)
}

async fn mysql(conn: &mut mysql_async::Conn, plan: &Plan, opts: &ApplyOptions) -> Result<Vec<usize>, Error> {
    use mysql_async::prelude::Queryable;
    let version: Option<String> = conn.query_first("SELECT VERSION()").await.map_err(Error::mysql)?;
    let mariadb = version.is_some_and(|v| v.contains("MariaDB"));
    // lock_wait_timeout is whole seconds, at least 1; zero means "no limit" here: a year.
    let lock_secs = match opts.lock_timeout.as_secs_f64().ceil() {
        0.0 => 31_536_000.0,
        s => s,
    };
    let mut set = format!("SET SESSION lock_wait_timeout = {lock_secs}");
    if mariadb {
        set.push_str(&format!(
            ", max_statement_time = {}",
            opts.statement_timeout.as_secs_f64()
        ));
    }
    conn.query_drop(set).await.map_err(Error::mysql)?;
    check_parses(conn, plan).await?;
    let mut committed = Vec::new();
    let mut outcome = Ok(());
    for (index, statement) in plan.statements.iter().enumerate() {
        if let Err(error) = crate::online::run(conn, &statement.sql, opts.allow_table_copy).await {
            outcome = Err(Error::ApplyFailed {
                index,
                committed: committed.clone(),
                total: plan.statements.len(),
                error,
            });
            break;
        }
        committed.push(index);
    }
    let mut reset = "SET SESSION lock_wait_timeout = DEFAULT".to_owned();
    if mariadb {
        reset.push_str(", max_statement_time = DEFAULT");
    }
    let reset = conn.query_drop(reset).await;
    outcome?;
    reset.map_err(Error::mysql)?;
    Ok(committed)
}

/// MySQL commits DDL statement by statement, so a statement the server cannot read, found
/// halfway, would leave a half-applied plan. The server prepares every statement first: a
/// prepared statement is parsed, never run, and DDL names are not resolved until it runs. Only a
/// syntax error refuses the plan; anything else a prepare reports (a table a reference-row
/// `INSERT` names that the plan creates first, a statement that cannot be prepared) is left to
/// the run itself.
async fn check_parses(conn: &mut mysql_async::Conn, plan: &Plan) -> Result<(), Error> {
    use mysql_async::prelude::Queryable;
    // ER_PARSE_ERROR, ER_SYNTAX_ERROR.
    const SYNTAX: [u16; 2] = [1064, 1149];
    for (index, statement) in plan.statements.iter().enumerate() {
        match conn.prep(statement.sql.as_str()).await {
            Ok(prepared) => conn.close(prepared).await.map_err(Error::mysql)?,
            Err(mysql_async::Error::Server(e)) if SYNTAX.contains(&e.code) => {
                return Err(Error::Unparsable {
                    index,
                    total: plan.statements.len(),
                    error: e.message,
                });
            }
            Err(mysql_async::Error::Server(_)) => {}
            Err(other) => return Err(Error::mysql(other)),
        }
    }
    Ok(())
}

/// Re-inspects and requires that a fresh plan from the live schema to `desired` within `scope` is
/// empty: `Error::NotConverged` otherwise.
pub async fn verify(
    session: &mut Session,
    desired: &Schema,
    scope: &InspectScope,
    options: &PlanOptions,
) -> Result<(), Error> {
    let live = inspect(session, scope).await?;
    let desired = crate::comparable(session, desired, &live).await?;
    match ptah_schema::plan(&desired, &live, session.dialect(), options) {
        Ok(plan) if plan.is_empty() => Ok(()),
        Ok(plan) => Err(Error::NotConverged {
            remaining: plan.statements.len(),
            first: plan.statements.first().map(|s| s.sql.clone()).unwrap_or_default(),
        }),
        Err(refused) => Err(Error::NotConverged {
            remaining: 1,
            first: refused.to_string(),
        }),
    }
}
