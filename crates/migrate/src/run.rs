//! The commands: `status`, `up`, `baseline` and `hash`, each over one database target.

use std::{collections::BTreeMap, path::Path, time::Duration};

use ptah_engine::{DatabaseUrl, Dialect, Session};

use crate::{
    AheadMigration, AppliedMigration, BaselineReport, Directory, Error, ExecOrder, ModifiedMigration,
    Outcome, PendingMigration, PlannedMigration, Revision, Script, SequenceEntry, StatusReport, SumFile,
    UpReport, Version, exec, plan, sum, table,
};

/// The database to work on.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL (its `Display` masks the password).
    pub url: DatabaseUrl,
    /// How long connecting may take.
    pub connect_timeout: Duration,
}

/// Options of `up`.
#[derive(Debug, Clone, Default)]
pub struct UpOptions {
    /// Apply at most this many migrations.
    pub limit: Option<usize>,
    /// Print the statements instead of running them; creates nothing and takes no lock.
    pub dry_run: bool,
    /// The approved sequence; refuse before any SQL when the selection differs.
    pub expect: Option<Vec<SequenceEntry>>,
    /// How out-of-order versions are treated.
    pub exec_order: ExecOrder,
    /// How long to wait for the migration lock.
    pub lock_wait: Duration,
    /// Fail when the directory has no `ptah.sum`.
    pub require_sum: bool,
    /// Skip the PostgreSQL check that the lock is exclusive (a transaction pooler defeats it).
    pub allow_unverified_lock: bool,
}

fn prepare(dir: &Directory, dialect: Dialect) -> Result<BTreeMap<Version, Script<'_>>, Error> {
    dir.migrations()
        .iter()
        .map(|m| Ok((m.version, Script::prepare(m, dialect)?)))
        .collect()
}

pub(crate) async fn connect(target: &Target) -> Result<Session, Error> {
    Ok(Session::connect(&target.url, target.connect_timeout).await?)
}

pub(crate) async fn close(session: Session) {
    if let Err(e) = session.close().await {
        tracing::debug!(error = %e, "closing the session failed");
    }
}

/// Reports the directory against the database; creates nothing.
pub async fn status(target: &Target, dir: &Directory, order: ExecOrder) -> Result<StatusReport, Error> {
    let sum = sum::verify_directory(dir, false)?;
    let scripts = prepare(dir, target.url.dialect())?;
    let mut session = connect(target).await?;
    let read = async {
        let exists = table::exists(&mut session).await?;
        Ok::<_, Error>((exists, table::read(&mut session).await?))
    }
    .await;
    close(session).await;
    let (exists, rows) = read?;
    let reading = plan::read(dir.migrations(), &rows);
    let (pending_sequence, blocked) = match reading.select(order, None) {
        Ok(selected) => (
            Some(
                selected
                    .iter()
                    .map(|m| scripts[&m.version].entry())
                    .collect::<Vec<_>>(),
            ),
            None,
        ),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(StatusReport {
        dialect: ptah_engine::dialect_name(target.url.dialect()),
        database_url: target.url.to_string(),
        sum,
        revision_table: exists,
        current_version: reading.current,
        applied_migrations: rows
            .iter()
            .filter(|r| r.is_applied())
            .map(|r| AppliedMigration {
                version: r.version,
                description: r.description.clone(),
                applied_at: r.applied_at.clone(),
                execution_time_ms: r.execution_time_ms,
                checksum: r.checksum.clone(),
            })
            .collect(),
        pending_migrations: reading
            .pending
            .iter()
            .map(|m| PendingMigration {
                version: m.version,
                file_version: m.file_version().map(str::to_owned),
                description: m.description.clone(),
                checksum: m.checksum(),
                transaction: scripts[&m.version].headers.tx_mode,
                statements: scripts[&m.version].statements.len(),
                file: m.up.path.clone(),
            })
            .collect(),
        out_of_order_migrations: reading.out_of_order.clone(),
        modified_migrations: reading
            .modified
            .iter()
            .map(|(r, file)| ModifiedMigration {
                version: r.version,
                recorded_checksum: r.checksum.clone(),
                file_checksum: file.clone(),
            })
            .collect(),
        ahead_migrations: reading
            .ahead
            .iter()
            .map(|r| AheadMigration {
                version: r.version,
                description: r.description.clone(),
                state: r.state.clone(),
            })
            .collect(),
        dirty_revision: reading.dirty.cloned(),
        total_migrations: dir.migrations().len(),
        has_pending_changes: !reading.pending.is_empty(),
        history_fingerprint: plan::history_fingerprint(&rows),
        pending_sequence_fingerprint: pending_sequence.as_deref().map(plan::sequence_fingerprint),
        pending_sequence,
        blocked,
    })
}

/// Applies pending migrations under the shared lock (or plans them with `dry_run`).
pub async fn up(target: &Target, dir: &Directory, options: &UpOptions) -> Result<UpReport, Error> {
    sum::verify_directory(dir, options.require_sum)?;
    let scripts = prepare(dir, target.url.dialect())?;
    let mut session = connect(target).await?;
    let result = if options.dry_run {
        dry_run(&mut session, dir, &scripts, options).await
    } else {
        match session.lock(options.lock_wait).await {
            Ok(()) => {
                let result = locked_up(&mut session, target, dir, &scripts, options).await;
                if let Err(e) = session.unlock().await {
                    tracing::warn!(error = %e, "releasing the migration lock failed; closing the session releases it");
                }
                result
            }
            Err(e) => Err(e.into()),
        }
    };
    close(session).await;
    result
}

fn selection<'s>(
    scripts: &'s BTreeMap<Version, Script<'s>>,
    rows: &[Revision],
    dir: &'s Directory,
    options: &UpOptions,
) -> Result<Vec<&'s Script<'s>>, Error> {
    let reading = plan::read(dir.migrations(), rows);
    let selected: Vec<&Script> = reading
        .select(options.exec_order, options.limit)?
        .iter()
        .map(|m| &scripts[&m.version])
        .collect();
    if let Some(expected) = &options.expect {
        let found: Vec<SequenceEntry> = selected.iter().map(|s| s.entry()).collect();
        plan::check_expected(expected, &found)?;
    }
    Ok(selected)
}

async fn dry_run(
    session: &mut Session,
    dir: &Directory,
    scripts: &BTreeMap<Version, Script<'_>>,
    options: &UpOptions,
) -> Result<UpReport, Error> {
    let rows = table::read(session).await?;
    let selected = selection(scripts, &rows, dir, options)?;
    let sequence: Vec<SequenceEntry> = selected.iter().map(|s| s.entry()).collect();
    Ok(UpReport {
        outcome: if selected.is_empty() {
            Outcome::UpToDate
        } else {
            Outcome::Planned
        },
        applied_versions: Vec::new(),
        failure: None,
        sequence_fingerprint: plan::sequence_fingerprint(&sequence),
        sequence,
        current_version: plan::read(dir.migrations(), &rows).current,
        history_fingerprint: plan::history_fingerprint(&rows),
        planned: Some(
            selected
                .iter()
                .map(|s| PlannedMigration {
                    version: s.migration.version,
                    file_version: s.migration.file_version().map(str::to_owned),
                    description: s.migration.description.clone(),
                    transaction: s.headers.tx_mode,
                    statements: s.statements.iter().map(|st| st.sql.clone()).collect(),
                })
                .collect(),
        ),
    })
}

async fn locked_up(
    session: &mut Session,
    target: &Target,
    dir: &Directory,
    scripts: &BTreeMap<Version, Script<'_>>,
    options: &UpOptions,
) -> Result<UpReport, Error> {
    if !options.allow_unverified_lock {
        verify_exclusive(target).await?;
    }
    table::create(session).await?;
    let rows = table::read(session).await?;
    let selected = selection(scripts, &rows, dir, options)?;
    let sequence: Vec<SequenceEntry> = selected.iter().map(|s| s.entry()).collect();
    let mut applied_versions = Vec::new();
    let mut failure = None;
    for script in &selected {
        match exec::run(session, script).await? {
            Ok(()) => applied_versions.push(script.migration.version),
            Err(f) => {
                failure = Some(f);
                break;
            }
        }
    }
    let outcome = match &failure {
        Some(f) if f.applied > 0 => Outcome::Partial,
        Some(_) => Outcome::Failed,
        None if applied_versions.is_empty() => Outcome::UpToDate,
        None => Outcome::Applied,
    };
    let after = table::read(session).await?;
    Ok(UpReport {
        outcome,
        applied_versions,
        failure,
        sequence_fingerprint: plan::sequence_fingerprint(&sequence),
        sequence,
        current_version: plan::read(dir.migrations(), &after).current,
        history_fingerprint: plan::history_fingerprint(&after),
        planned: None,
    })
}

/// PostgreSQL: a second connection must not get the lock this process holds (a pooler would allow it).
pub(crate) async fn verify_exclusive(target: &Target) -> Result<(), Error> {
    if target.url.dialect() != Dialect::Postgres {
        return Ok(());
    }
    let mut probe = connect(target).await?;
    let result = match probe.lock(Duration::ZERO).await {
        Ok(()) => {
            let _ = probe.unlock().await;
            Err(Error::LockNotExclusive)
        }
        Err(ptah_engine::Error::LockBusy { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    };
    close(probe).await;
    result
}

/// Records every migration up to `version` as applied without running it.
pub async fn baseline(
    target: &Target,
    dir: &Directory,
    version: Version,
    force: bool,
    lock_wait: Duration,
) -> Result<BaselineReport, Error> {
    let scripts = prepare(dir, target.url.dialect())?;
    let mut session = connect(target).await?;
    if let Err(e) = session.lock(lock_wait).await {
        close(session).await;
        return Err(e.into());
    }
    let result = async {
        table::create(&mut session).await?;
        let rows = table::read(&mut session).await?;
        if !rows.is_empty() && !force {
            return Err(Error::BaselineRefused { rows: rows.len() });
        }
        let mut baselined = Vec::new();
        for script in scripts.values().filter(|s| s.migration.version <= version) {
            let m = script.migration;
            if rows.iter().any(|r| r.version == m.version && r.is_applied()) {
                continue;
            }
            let n = script.statements.len();
            table::write(
                &mut session,
                m.version,
                &m.description,
                &m.checksum(),
                table::APPLIED,
                n,
                n,
            )
            .await?;
            baselined.push(m.version);
        }
        let after = table::read(&mut session).await?;
        Ok(BaselineReport {
            version,
            baselined_versions: baselined,
            history_fingerprint: plan::history_fingerprint(&after),
        })
    }
    .await;
    if let Err(e) = session.unlock().await {
        tracing::warn!(error = %e, "releasing the migration lock failed");
    }
    close(session).await;
    result
}

/// Computes `ptah.sum` for `dir` and writes it at the directory's root, after refusing a file that
/// asks for a transaction its statements cannot run in (PostgreSQL-only statements: the directory
/// names no dialect).
pub fn hash(dir: &Directory) -> Result<SumFile, Error> {
    crate::check_transactions(dir, None)?;
    let sum = SumFile::compute(dir);
    let path = dir.root().join(crate::SUM_FILE);
    write_atomically(&path, sum.render().as_bytes())?;
    Ok(sum)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("sum.tmp");
    std::fs::write(&tmp, bytes).map_err(Error::io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(Error::io(path))
}
