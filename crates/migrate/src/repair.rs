//! `repair`: record what a person established about a failed or interrupted version.
//!
//! After a failure the revision row is dirty and every later run refuses. Someone looks at the
//! database, finishes or undoes the half-applied work by hand, and then says which it was: the
//! version's effects are all there (`applied`), or none are (`absent`, so it is pending again).
//! The row keeps who said so and why, in three nullable columns added on first use
//! (`repaired_by`, `repair_reason`, `repaired_at`): tables of older executors and of the reference
//! CLI stay readable, and nothing changes for databases that never needed a repair. It is the
//! command-line counterpart of the operator's run acknowledgment.
//!
//! Only a dirty row (`pending`, `failed`, or a state this executor does not know) is repaired: an
//! applied row, an absent row or a missing row has nothing unresolved, and recording anything else
//! would be `baseline`'s job, with its own checks.

use std::time::Duration;

use ptah_engine::Session;
use serde::Serialize;

use crate::{
    Directory, Error, Target, Version, plan,
    run::{close, connect, verify_exclusive},
    sum,
    table::{self, Param},
};

/// What the person established.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordAs {
    /// Every statement's effect is in the database: the version counts as applied.
    Applied,
    /// None is: the version is pending again and the next `up` runs it.
    Absent,
}

/// Options of `repair`.
#[derive(Debug, Clone)]
pub struct RepairOptions {
    /// The dirty version.
    pub version: Version,
    /// How to record it.
    pub record_as: RecordAs,
    /// Why (stored in `repair_reason`; required).
    pub reason: String,
    /// Who (stored in `repaired_by`; required).
    pub by: String,
    /// How long to wait for the migration lock.
    pub lock_wait: Duration,
    /// Skip the PostgreSQL check that the lock is exclusive.
    pub allow_unverified_lock: bool,
}

/// The answer of `repair`.
#[derive(Debug, Clone, Serialize)]
pub struct RepairReport {
    /// The version.
    pub version: Version,
    /// The digits as written in the file name, when they are not the reference's ten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_version: Option<String>,
    /// The row's state before.
    pub previous_state: String,
    /// Statements the row recorded as committed before.
    pub previous_applied: i64,
    /// Statements in the file.
    pub total: i64,
    /// What was recorded.
    pub recorded_as: RecordAs,
    /// The row's state now (`applied` or `absent`).
    pub state: String,
    /// The checksum the row holds now.
    pub checksum: String,
    /// Who.
    pub repaired_by: String,
    /// Why.
    pub repair_reason: String,
    /// Fingerprint of the revision rows afterwards.
    pub history_fingerprint: ptah_fingerprint::Fingerprint,
}

/// The most bytes of `--reason` and `--by` stored.
const MAX_NOTE: usize = 2048;

/// Records the dirty row of `options.version` as applied or absent, under the shared lock.
pub async fn repair(
    target: &Target,
    dir: &Directory,
    options: &RepairOptions,
) -> Result<RepairReport, Error> {
    sum::verify_directory(dir, false)?;
    for (what, value) in [("--reason", &options.reason), ("--by", &options.by)] {
        if value.trim().is_empty() {
            return Err(Error::InvalidValue(format!("{what} must not be empty")));
        }
        if value.len() > MAX_NOTE {
            return Err(Error::InvalidValue(format!(
                "{what} is longer than {MAX_NOTE} bytes"
            )));
        }
    }
    let mut session = connect(target).await?;
    if let Err(e) = session.lock(options.lock_wait).await {
        close(session).await;
        return Err(e.into());
    }
    let result = async {
        if !options.allow_unverified_lock {
            verify_exclusive(target).await?;
        }
        locked(&mut session, dir, options).await
    }
    .await;
    if let Err(e) = session.unlock().await {
        tracing::warn!(error = %e, "releasing the migration lock failed; closing the session releases it");
    }
    close(session).await;
    result
}

async fn locked(
    session: &mut Session,
    dir: &Directory,
    options: &RepairOptions,
) -> Result<RepairReport, Error> {
    let version = options.version;
    let rows = table::read(session).await?;
    let Some(row) = rows.iter().find(|r| r.version == version) else {
        return Err(Error::NotRepairable {
            version,
            state: "missing (schema_migrations has no row for it)".into(),
        });
    };
    if !row.is_dirty() {
        return Err(Error::NotRepairable {
            version,
            state: row.state.clone(),
        });
    }
    add_columns(session).await?;
    let migration = dir.get(version);
    // Recorded as applied, the row vouches for the file as it is now (the person checked the
    // database against it); a version the directory lacks keeps the checksum it ran with.
    let checksum = match (options.record_as, migration) {
        (RecordAs::Applied, Some(m)) => m.checksum(),
        _ => row.checksum.clone(),
    };
    let (state, applied) = match options.record_as {
        RecordAs::Applied => (table::APPLIED, row.total),
        RecordAs::Absent => (table::ABSENT, 0),
    };
    table::execute(
        session,
        "record a repair",
        "UPDATE schema_migrations SET state = $1, applied = $2, checksum = $3, repaired_by = $4, \
         repair_reason = $5, repaired_at = (now() AT TIME ZONE 'UTC') WHERE version = $6 AND state = $7",
        "UPDATE schema_migrations SET state = ?, applied = ?, checksum = ?, repaired_by = ?, \
         repair_reason = ?, repaired_at = UTC_TIMESTAMP() WHERE version = ? AND state = ?",
        vec![
            Param::Text(Some(state.to_owned())),
            Param::Int(i32::try_from(applied).unwrap_or(i32::MAX)),
            Param::Text(Some(checksum.clone())),
            Param::Text(Some(options.by.clone())),
            Param::Text(Some(options.reason.clone())),
            Param::Big(version.0),
            Param::Text(Some(row.state.clone())),
        ],
    )
    .await?;
    let after = table::read(session).await?;
    tracing::info!(%version, state, by = %options.by, "repaired a dirty migration row");
    Ok(RepairReport {
        version,
        file_version: migration.and_then(|m| m.file_version()).map(str::to_owned),
        previous_state: row.state.clone(),
        previous_applied: row.applied,
        total: row.total,
        recorded_as: options.record_as,
        state: state.to_owned(),
        checksum,
        repaired_by: options.by.clone(),
        repair_reason: options.reason.clone(),
        history_fingerprint: plan::history_fingerprint(&after),
    })
}

/// Adds the repair columns when the table lacks them (nullable, so old rows and writers are fine).
async fn add_columns(session: &mut Session) -> Result<(), Error> {
    let err = |message: String| Error::RevisionTable {
        context: "add the repair columns",
        message,
    };
    let present = match session {
        Session::Postgres { client, .. } => {
            let row = client
                .query_one(
                    "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass('schema_migrations') \
                     AND attname = 'repaired_by' AND NOT attisdropped",
                    &[],
                )
                .await
                .map_err(|e| err(table::pg_message(&e)))?;
            row.try_get::<_, i64>(0).map_err(|e| err(table::pg_message(&e)))? > 0
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let n: Option<i64> = conn
                .query_first(
                    "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE() \
                     AND table_name = 'schema_migrations' AND column_name = 'repaired_by'",
                )
                .await
                .map_err(|e| err(e.to_string()))?;
            n.unwrap_or(0) > 0
        }
    };
    if present {
        return Ok(());
    }
    session
        .batch(
            "ALTER TABLE schema_migrations ADD COLUMN repaired_by TEXT NULL, \
             ADD COLUMN repair_reason TEXT NULL, ADD COLUMN repaired_at TIMESTAMP NULL",
        )
        .await
        .map_err(|e| err(table::engine_message(e)))
}
