//! The revision table `schema_migrations`, column for column as the reference CLI defines it.

use ptah_engine::Session;
use serde::Serialize;

use crate::{Error, Version};

/// The table's name.
pub const TABLE: &str = "schema_migrations";

const COLUMNS: &str = "version BIGINT PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at TIMESTAMP NOT NULL,
  state VARCHAR(32) NOT NULL DEFAULT 'applied',
  applied INTEGER NOT NULL DEFAULT 1,
  total INTEGER NOT NULL DEFAULT 1,
  error TEXT NULL,
  error_stmt TEXT NULL,
  execution_time_ms BIGINT NOT NULL DEFAULT 0,
  checksum VARCHAR(64) NOT NULL DEFAULT ''";

/// The longest `error`/`error_stmt` text stored, in bytes.
const MAX_TEXT: usize = 8 * 1024;

/// The `CREATE TABLE` statement for a dialect.
pub fn create_sql(session: &Session) -> String {
    match session {
        Session::Postgres { .. } => format!("CREATE TABLE IF NOT EXISTS {TABLE} (\n  {COLUMNS}\n)"),
        Session::MySql(_) => format!("CREATE TABLE IF NOT EXISTS {TABLE} (\n  {COLUMNS}\n) ENGINE=InnoDB"),
    }
}

/// The state of a row that finished successfully.
pub const APPLIED: &str = "applied";
/// The state written before a body runs.
pub const PENDING: &str = "pending";
/// The state `repair --as absent` records: the version's effects are not in the database, so it
/// is pending again; the row stays to keep who repaired it and why.
pub const ABSENT: &str = "absent";

/// One row of the revision table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Revision {
    /// The version.
    pub version: Version,
    /// The description.
    pub description: String,
    /// When the row was last written (UTC, as the server renders it).
    pub applied_at: String,
    /// `pending`, `failed`, `applied` (a `:down` suffix marks rollbacks).
    pub state: String,
    /// Statements committed.
    pub applied: i64,
    /// Statements in the body.
    pub total: i64,
    /// The failure, if any.
    pub error: Option<String>,
    /// The statement that failed, if any.
    pub error_stmt: Option<String>,
    /// Wall time of the body.
    pub execution_time_ms: i64,
    /// Hex sha256 of the up file.
    pub checksum: String,
}

impl Revision {
    /// True when the migration counts as applied.
    pub fn is_applied(&self) -> bool {
        self.state == APPLIED
    }

    /// True for a row a run left unfinished (`pending`/`failed`, also for rollbacks, or unknown).
    pub fn is_dirty(&self) -> bool {
        !matches!(self.state.as_str(), APPLIED | "applied:down" | ABSENT)
    }

    /// True for a row `repair` recorded as absent (the version is pending again).
    pub fn is_absent(&self) -> bool {
        self.state == ABSENT
    }
}

fn failed(context: &'static str) -> impl Fn(String) -> Error {
    move |message| Error::RevisionTable { context, message }
}

pub(crate) fn pg_message(err: &tokio_postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => err.to_string(),
    }
}

/// The message of a server error from either driver.
pub(crate) fn engine_message(err: ptah_engine::Error) -> String {
    match err {
        ptah_engine::Error::Query(message) => message,
        other => other.to_string(),
    }
}

/// True when the table exists in the session's schema.
pub async fn exists(session: &mut Session) -> Result<bool, Error> {
    let err = failed("check whether the table exists");
    match session {
        Session::Postgres { client, .. } => {
            let row = client
                .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
                .await
                .map_err(|e| err(pg_message(&e)))?;
            row.try_get::<_, bool>(0).map_err(|e| err(pg_message(&e)))
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let n: Option<i64> = conn
                .query_first(
                    "SELECT COUNT(*) FROM information_schema.tables \
                     WHERE table_schema = DATABASE() AND table_name = 'schema_migrations'",
                )
                .await
                .map_err(|e| err(e.to_string()))?;
            Ok(n.unwrap_or(0) > 0)
        }
    }
}

/// Creates the table when it is missing.
pub async fn create(session: &mut Session) -> Result<(), Error> {
    let sql = create_sql(session);
    session
        .batch(&sql)
        .await
        .map_err(|e| failed("create the table")(engine_message(e)))
}

/// Every row in version order; empty when the table does not exist.
pub async fn read(session: &mut Session) -> Result<Vec<Revision>, Error> {
    if !exists(session).await? {
        return Ok(Vec::new());
    }
    let err = failed("read the rows");
    match session {
        Session::Postgres { client, .. } => {
            let rows = client
                .query(
                    "SELECT version, description, applied_at::text, state, applied::bigint, \
                     total::bigint, error, error_stmt, execution_time_ms, checksum \
                     FROM schema_migrations ORDER BY version",
                    &[],
                )
                .await
                .map_err(|e| err(pg_message(&e)))?;
            rows.iter()
                .map(|r| {
                    Ok(Revision {
                        version: Version(r.try_get(0)?),
                        description: r.try_get(1)?,
                        applied_at: r.try_get(2)?,
                        state: r.try_get(3)?,
                        applied: r.try_get(4)?,
                        total: r.try_get(5)?,
                        error: r.try_get(6)?,
                        error_stmt: r.try_get(7)?,
                        execution_time_ms: r.try_get(8)?,
                        checksum: r.try_get(9)?,
                    })
                })
                .collect::<Result<_, tokio_postgres::Error>>()
                .map_err(|e| err(pg_message(&e)))
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            type Row = (
                i64,
                String,
                String,
                String,
                i64,
                i64,
                Option<String>,
                Option<String>,
                i64,
                String,
            );
            let rows: Vec<Row> = conn
                .query(
                    "SELECT version, description, CAST(applied_at AS CHAR), state, applied, total, \
                     error, error_stmt, execution_time_ms, checksum FROM schema_migrations ORDER BY version",
                )
                .await
                .map_err(|e| err(e.to_string()))?;
            Ok(rows
                .into_iter()
                .map(|r| Revision {
                    version: Version(r.0),
                    description: r.1,
                    applied_at: r.2,
                    state: r.3,
                    applied: r.4,
                    total: r.5,
                    error: r.6,
                    error_stmt: r.7,
                    execution_time_ms: r.8,
                    checksum: r.9,
                })
                .collect())
        }
    }
}

/// A typed bind value for both drivers.
pub(crate) enum Param {
    Big(i64),
    Int(i32),
    Text(Option<String>),
}

pub(crate) fn clip(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn int(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Runs one bookkeeping statement with typed parameters on either engine.
pub(crate) async fn execute(
    session: &mut Session,
    context: &'static str,
    pg: &str,
    mysql: &str,
    params: Vec<Param>,
) -> Result<(), Error> {
    let err = failed(context);
    match session {
        Session::Postgres { client, .. } => {
            use tokio_postgres::types::{ToSql, Type};
            let boxed: Vec<(Box<dyn ToSql + Sync + Send>, Type)> = params
                .into_iter()
                .map(|p| -> (Box<dyn ToSql + Sync + Send>, Type) {
                    match p {
                        Param::Big(v) => (Box::new(v), Type::INT8),
                        Param::Int(v) => (Box::new(v), Type::INT4),
                        Param::Text(v) => (Box::new(v), Type::TEXT),
                    }
                })
                .collect();
            let typed: Vec<(&(dyn ToSql + Sync), Type)> = boxed
                .iter()
                .map(|(b, t)| (b.as_ref() as &(dyn ToSql + Sync), t.clone()))
                .collect();
            // Typed parameters let the server parse, bind and run in one round trip; an untyped
            // `execute` first waits for a prepare. Two of these per migration made up a third of
            // `up`'s own round trips (`cargo xtask bench migrations`).
            client
                .execute_typed(pg, &typed)
                .await
                .map(drop)
                .map_err(|e| err(pg_message(&e)))
        }
        Session::MySql(conn) => {
            use mysql_async::{Value, prelude::Queryable};
            let values: Vec<Value> = params
                .into_iter()
                .map(|p| match p {
                    Param::Big(v) => Value::Int(v),
                    Param::Int(v) => Value::Int(i64::from(v)),
                    Param::Text(Some(s)) => Value::Bytes(s.into_bytes()),
                    Param::Text(None) => Value::NULL,
                })
                .collect();
            conn.exec_drop(mysql, values)
                .await
                .map_err(|e| err(e.to_string()))
        }
    }
}

/// Writes (or overwrites) the row of `version` with `state`, before or instead of running its body.
pub async fn write(
    session: &mut Session,
    version: Version,
    description: &str,
    checksum: &str,
    state: &str,
    applied: usize,
    total: usize,
) -> Result<(), Error> {
    execute(
        session,
        "write a row",
        "INSERT INTO schema_migrations (version, description, applied_at, state, applied, total, error, \
         error_stmt, execution_time_ms, checksum) VALUES ($1, $2, (now() AT TIME ZONE 'UTC'), $3, $4, $5, \
         NULL, NULL, 0, $6) ON CONFLICT (version) DO UPDATE SET description = EXCLUDED.description, \
         applied_at = EXCLUDED.applied_at, state = EXCLUDED.state, applied = EXCLUDED.applied, total = \
         EXCLUDED.total, error = NULL, error_stmt = NULL, execution_time_ms = 0, checksum = EXCLUDED.checksum",
        "INSERT INTO schema_migrations (version, description, applied_at, state, applied, total, error, \
         error_stmt, execution_time_ms, checksum) VALUES (?, ?, UTC_TIMESTAMP(), ?, ?, ?, NULL, NULL, 0, ?) \
         ON DUPLICATE KEY UPDATE description = VALUES(description), applied_at = VALUES(applied_at), \
         state = VALUES(state), applied = VALUES(applied), total = VALUES(total), error = NULL, \
         error_stmt = NULL, execution_time_ms = 0, checksum = VALUES(checksum)",
        vec![
            Param::Big(version.0),
            Param::Text(Some(description.to_owned())),
            Param::Text(Some(state.to_owned())),
            Param::Int(int(applied)),
            Param::Int(int(total)),
            Param::Text(Some(checksum.to_owned())),
        ],
    )
    .await
}

/// Records that `applied` statements of `version` have committed.
pub async fn progress(session: &mut Session, version: Version, applied: usize) -> Result<(), Error> {
    execute(
        session,
        "record progress",
        "UPDATE schema_migrations SET applied = $1 WHERE version = $2",
        "UPDATE schema_migrations SET applied = ? WHERE version = ?",
        vec![Param::Int(int(applied)), Param::Big(version.0)],
    )
    .await
}

/// Marks `version` applied after its body succeeded.
pub async fn finish(
    session: &mut Session,
    version: Version,
    applied: usize,
    elapsed_ms: i64,
) -> Result<(), Error> {
    execute(
        session,
        "mark a row applied",
        "UPDATE schema_migrations SET state = 'applied', applied = $1, execution_time_ms = $2, \
         applied_at = (now() AT TIME ZONE 'UTC') WHERE version = $3",
        "UPDATE schema_migrations SET state = 'applied', applied = ?, execution_time_ms = ?, \
         applied_at = UTC_TIMESTAMP() WHERE version = ?",
        vec![
            Param::Int(int(applied)),
            Param::Big(elapsed_ms),
            Param::Big(version.0),
        ],
    )
    .await
}

/// Leaves `version` dirty: `failed`, with the committed count, the error and the failing statement.
pub async fn fail(
    session: &mut Session,
    version: Version,
    applied: usize,
    error: &str,
    statement: &str,
    elapsed_ms: i64,
) -> Result<(), Error> {
    execute(
        session,
        "mark a row failed",
        "UPDATE schema_migrations SET state = 'failed', applied = $1, error = $2, error_stmt = $3, \
         execution_time_ms = $4 WHERE version = $5",
        "UPDATE schema_migrations SET state = 'failed', applied = ?, error = ?, error_stmt = ?, \
         execution_time_ms = ? WHERE version = ?",
        vec![
            Param::Int(int(applied)),
            Param::Text(Some(clip(error))),
            Param::Text(Some(clip(statement))),
            Param::Big(elapsed_ms),
            Param::Big(version.0),
        ],
    )
    .await
}
