//! One timed run of the floor, inspect, or inspect + plan, each on a fresh connection; and the
//! process's peak resident set.

use std::{borrow::Cow, time::Instant};

use ptah_engine::{DatabaseUrl, InspectScope, Session, inspect, into_comparable};
use ptah_schema::diff::ExcludeSet;
use ptah_schema::{Plan, PlanOptions, Schema};

use super::super::floor;
use super::CONNECT_TIMEOUT;

/// One run's wall-clock time, and the part spent connecting.
pub(super) struct Timing {
    pub(super) total: f64,
    pub(super) connect: f64,
}

pub(super) async fn connect(url: &DatabaseUrl) -> anyhow::Result<(Session, f64, Instant)> {
    let started = Instant::now();
    let session = Session::connect(url, CONNECT_TIMEOUT).await?;
    Ok((session, started.elapsed().as_secs_f64(), started))
}

pub(super) async fn timed_floor(
    url: &DatabaseUrl,
    namespaces: &[String],
    database: &str,
) -> anyhow::Result<(Timing, usize)> {
    let (mut session, connect, started) = connect(url).await?;
    let rows = floor::run(&mut session, namespaces, database).await?;
    session.close().await?;
    let total = started.elapsed().as_secs_f64();
    Ok((Timing { total, connect }, rows))
}

pub(super) async fn timed_inspect(
    url: &DatabaseUrl,
    scope: &InspectScope,
) -> anyhow::Result<(Timing, Schema)> {
    let (mut session, connect, started) = connect(url).await?;
    let live = inspect(&mut session, scope).await?;
    session.close().await?;
    let total = started.elapsed().as_secs_f64();
    Ok((Timing { total, connect }, live))
}

pub(super) async fn timed_inspect_plan(
    url: &DatabaseUrl,
    scope: &InspectScope,
    desired: &Schema,
    options: &PlanOptions,
) -> anyhow::Result<(Timing, (f64, f64), Plan)> {
    // `ptah schema plan` owns the schema it read from the document; the bench keeps its own, so
    // the copy the command never makes is made here, before the clock starts.
    let desired = std::sync::Arc::new(desired.clone());
    // As `ptah schema plan` does: the document's fingerprint is hashed while the database is read.
    let document = {
        let (desired, exclude) = (desired.clone(), options.exclude.clone());
        tokio::task::spawn_blocking(move || ExcludeSet::new(&exclude).apply(&desired).fingerprint())
    };
    let (mut session, connect, started) = connect(url).await?;
    let live = inspect(&mut session, scope).await?;
    let planning = Instant::now();
    let to_fingerprint = document.await?;
    // As `ptah schema plan` does: once hashed, the schema has one owner and is brought to the
    // server's spelling in place.
    let desired = std::sync::Arc::try_unwrap(desired).unwrap_or_else(|shared| (*shared).clone());
    let comparable = into_comparable(&mut session, Cow::Owned(desired), &live).await?;
    let probe_secs = planning.elapsed().as_secs_f64();
    let plan = ptah_schema::plan_for(to_fingerprint, &comparable, &live, session.dialect(), options)?;
    let plan_secs = planning.elapsed().as_secs_f64();
    session.close().await?;
    let total = started.elapsed().as_secs_f64();
    Ok((Timing { total, connect }, (probe_secs, plan_secs), plan))
}

/// Starts the process's peak resident set afresh from its current one (Linux `clear_refs` 5); a
/// kernel without it leaves the whole run's peak, which only overstates.
pub(super) fn reset_peak_rss() {
    if let Err(err) = std::fs::write("/proc/self/clear_refs", "5") {
        eprintln!("    cannot reset the peak RSS ({err}): the figure covers the whole run");
    }
}

/// The process's peak resident set (`VmHWM`), in KiB, when the kernel reports it.
pub(super) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
