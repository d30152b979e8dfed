//! A rehearsal of a plan on a scratch ("dev") database before anyone approves it: the observed
//! schema is recreated there (first only the part the plan touches, [`crate::touched`]), the
//! plan runs there statement by statement, and a fresh plan on the dev database must be empty.
//! The dev database is left as it was found.
//!
//! A rehearsal proves the plan's SQL runs on this server version against this schema and reaches
//! the desired schema; it does not prove the production rows satisfy it (a NOT NULL column on a
//! table with rows), which only the apply itself can.

use std::time::Instant;

use ptah_fingerprint::Fingerprint;
use ptah_schema::{Plan, PlanOptions, Schema};
use serde::Serialize;

use crate::{Dialect, Error, InspectScope, Session, comparable, inspect, live_fingerprint, touched::touched};

/// How a rehearsal ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RehearsalOutcome {
    /// Every statement ran and a fresh plan on the dev database is empty.
    Passed,
    /// A statement failed, or the plan did not reach the desired schema.
    Failed,
    /// The dev database could not be brought to the observed schema: nothing was rehearsed.
    Inconclusive,
}

/// One rehearsed statement's run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementTiming {
    /// The 0-based index of the statement in the plan.
    pub index: usize,
    /// How long it ran, in milliseconds.
    pub millis: u64,
}

/// What a rehearsal found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rehearsal {
    /// How it ended.
    pub outcome: RehearsalOutcome,
    /// The statements that ran, in the order they ran (an Apply's), with their times.
    pub statements: Vec<StatementTiming>,
    /// The 0-based index of the statement that failed, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_statement_index: Option<usize>,
    /// Why it failed or was inconclusive, for people (the server's message, credentials removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Whether the dev database was put back as it was found.
    pub restored: bool,
    /// How many tables of the observed schema were recreated for the rehearsal reported: the
    /// part the plan touches, or all of them.
    pub recreated_tables: usize,
}

impl Rehearsal {
    /// Ended before any statement of the plan ran (the dev database untouched so far).
    fn ended(outcome: RehearsalOutcome, reason: String) -> Rehearsal {
        Rehearsal {
            outcome,
            statements: Vec::new(),
            failed_statement_index: None,
            reason: Some(reason),
            restored: true,
            recreated_tables: 0,
        }
    }
}

/// Rehearses `plan` on `dev`: recreates `observed` (the live schema the plan was computed
/// against, within the desired schema's scope), runs the plan, and plans `desired` again.
///
/// Refuses a dev database that holds objects in scope which the observed schema does not have
/// (recreating it would drop them): an `Inconclusive` rehearsal that touched nothing.
///
/// Only the part of the schema the plan touches is recreated first ([`touched`]); when the
/// rehearsal of that part does not pass, the whole observed schema is recreated and the plan
/// rehearsed again, so a failure is always the whole schema's.
pub async fn rehearse(
    dev: &mut Session,
    observed: &Schema,
    desired: &Schema,
    plan: &Plan,
    options: &PlanOptions,
) -> Result<Rehearsal, Error> {
    if plan.dialect != dev.dialect() {
        return Err(Error::DialectMismatch {
            plan: plan.dialect,
            database: dev.dialect(),
        });
    }
    let scope = InspectScope::of(desired);
    if let Some((part_observed, part_desired)) = touched(observed, desired, plan) {
        let expected = live_fingerprint(&part_observed, &plan.exclude);
        let part = on(
            dev,
            &part_observed,
            &part_desired,
            plan,
            options,
            &scope,
            &expected,
        )
        .await?;
        if part.outcome == RehearsalOutcome::Passed || !part.restored {
            return Ok(part);
        }
    }
    on(
        dev,
        observed,
        desired,
        plan,
        options,
        &scope,
        &plan.from_fingerprint,
    )
    .await
}

/// Rehearses `plan` with `observed` recreated, which must read back as `expected`.
async fn on(
    dev: &mut Session,
    observed: &Schema,
    desired: &Schema,
    plan: &Plan,
    options: &PlanOptions,
    scope: &InspectScope,
    expected: &Fingerprint,
) -> Result<Rehearsal, Error> {
    let found = inspect(dev, scope).await?;
    let recreate = match ptah_schema::plan(observed, &found, plan.dialect, options) {
        Ok(p) => p,
        Err(e) => return Ok(Rehearsal::ended(RehearsalOutcome::Inconclusive, e.to_string())),
    };
    if recreate.destructive {
        return Ok(Rehearsal::ended(
            RehearsalOutcome::Inconclusive,
            "the dev database holds objects the observed schema does not: give the rehearsal an empty database".into(),
        ));
    }
    let mut rehearsal = match recreated(dev, &recreate, scope, plan, expected).await? {
        Some(reason) => Rehearsal::ended(RehearsalOutcome::Inconclusive, reason),
        None => run(dev, desired, plan, options, scope).await?,
    };
    rehearsal.restored = restore(dev, &found, scope, options).await;
    rehearsal.recreated_tables = observed.tables.len();
    Ok(rehearsal)
}

/// Brings the dev database to the observed schema; why not, when it cannot.
async fn recreated(
    dev: &mut Session,
    recreate: &Plan,
    scope: &InspectScope,
    plan: &Plan,
    expected: &Fingerprint,
) -> Result<Option<String>, Error> {
    if let Err(failed) = run_each(dev, recreate, true, &mut Vec::new()).await {
        return Ok(Some(format!(
            "the observed schema cannot be recreated on the dev database: {}",
            failed.reason
        )));
    }
    let now = live_fingerprint(&inspect(dev, scope).await?, &plan.exclude);
    Ok((now != *expected).then(|| {
        format!(
            "the dev database reads as {now} after recreating the observed schema, not {expected}: the engine cannot reproduce it exactly"
        )
    }))
}

/// Runs the plan's statements ([`run_each`]), then plans again.
async fn run(
    dev: &mut Session,
    desired: &Schema,
    plan: &Plan,
    options: &PlanOptions,
    scope: &InspectScope,
) -> Result<Rehearsal, Error> {
    let mut statements = Vec::with_capacity(plan.statements.len());
    if let Err(failed) = run_each(dev, plan, false, &mut statements).await {
        return Ok(Rehearsal {
            outcome: RehearsalOutcome::Failed,
            statements,
            failed_statement_index: Some(failed.index),
            reason: Some(failed.reason),
            restored: false,
            recreated_tables: 0,
        });
    }
    let after = inspect(dev, scope).await?;
    let desired = comparable(dev, desired, &after).await?;
    let fresh = ptah_schema::plan(&desired, &after, plan.dialect, options)
        .map_err(|e| Error::Query(format!("planning on the dev database: {e}")))?;
    let (outcome, reason) = match fresh.statements.first() {
        None => (RehearsalOutcome::Passed, None),
        Some(first) => (
            RehearsalOutcome::Failed,
            Some(format!(
                "after the plan, a fresh plan on the dev database still has {} statement(s), first: {}",
                fresh.statements.len(),
                first.sql
            )),
        ),
    };
    Ok(Rehearsal {
        outcome,
        statements,
        failed_statement_index: None,
        reason,
        restored: false,
        recreated_tables: 0,
    })
}

/// Puts the dev database back to what it held before; whether that worked.
async fn restore(dev: &mut Session, found: &Schema, scope: &InspectScope, options: &PlanOptions) -> bool {
    let Ok(now) = inspect(dev, scope).await else {
        return false;
    };
    let Ok(back) = ptah_schema::plan(found, &now, dev.dialect(), options) else {
        return false;
    };
    if run_each(dev, &back, true, &mut Vec::new()).await.is_err() {
        return false;
    }
    // A plan never drops a PostgreSQL schema, so the ones recreating the observed schema created
    // go here; RESTRICT, so a schema something else filled meanwhile stays (and says so).
    let created = match dev.dialect() {
        Dialect::Postgres => now.namespaces.difference(&found.namespaces).cloned().collect(),
        Dialect::Mysql => Vec::new(),
    };
    for created in created {
        let drop = format!("DROP SCHEMA \"{}\" RESTRICT", created.replace('"', "\"\""));
        if dev.batch(&drop).await.is_err() {
            return false;
        }
    }
    true
}

/// The statement a run stopped at.
struct Stopped {
    /// Its 0-based index in the plan.
    index: usize,
    /// `statement N of M failed: <the server's message>`.
    reason: String,
}

/// Runs `plan`'s statements one by one, timed into `timings`, in the order an Apply runs them
/// (the transactional ones, then those that run alone, as `CONCURRENTLY`), each committed on its
/// own: a scratch database needs no transaction, and one around thousands of tables would
/// exceed PostgreSQL's lock table (`max_locks_per_transaction`). MySQL's online forms fall back
/// as an Apply's do, to a table copy only when `allow_table_copy`.
async fn run_each(
    dev: &mut Session,
    plan: &Plan,
    allow_table_copy: bool,
    timings: &mut Vec<StatementTiming>,
) -> Result<(), Stopped> {
    let (in_tx, alone): (Vec<_>, Vec<_>) = plan
        .statements
        .iter()
        .enumerate()
        .partition(|(_, s)| s.transactional);
    for (index, statement) in in_tx.into_iter().chain(alone) {
        let started = Instant::now();
        let ran = match dev {
            Session::MySql(conn) => crate::online::run(conn, &statement.sql, allow_table_copy)
                .await
                .map_err(Error::Query),
            Session::Postgres { .. } => dev.batch(&statement.sql).await,
        };
        let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        timings.push(StatementTiming { index, millis });
        if let Err(e) = ran {
            return Err(Stopped {
                index,
                reason: format!("statement {} of {} failed: {e}", index + 1, plan.statements.len()),
            });
        }
    }
    Ok(())
}
