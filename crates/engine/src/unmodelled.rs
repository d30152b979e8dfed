//! The objects a live database holds that the schema model does not: ordered-set and moving
//! aggregates, routines and triggers with attributes it has no field for, exclusion constraints
//! and deferrable keys, grants on views and sequences, column grants,
//! range and composite types (PostgreSQL), sub-partitioning and sequences (MariaDB)… Inspection leaves them out, and the planner never touches them;
//! this listing makes that visible instead of silent (`unmodelled` in the CLI's reports).

use crate::postgres::program::{modelled_routine, modelled_trigger};
use crate::{Error, Session};

/// One object the model does not hold.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unmodelled {
    /// What it is (`view`, `function`, `trigger`, …).
    pub kind: String,
    /// Its qualified name (a trigger: `table.trigger`; grants: the table).
    pub name: String,
}

/// PostgreSQL, in the given schemas; extension members and what PostgreSQL creates itself
/// (internal dependencies such as a range type's constructors, a view's rewrite rule, constraint
/// triggers, a partition's copies of its parent's triggers) are left out, and so are the
/// sequences, functions, procedures, triggers and partitioning inspection reads.
const POSTGRES: &str = concat!(
    r"
WITH ns AS (SELECT oid, nspname FROM pg_namespace WHERE nspname = ANY($1)),
ext AS (SELECT objid, classid FROM pg_depend WHERE deptype = 'e'),
internal AS (SELECT objid FROM pg_depend WHERE classid = 'pg_proc'::regclass AND deptype = 'i')
SELECT kind, name FROM (
  SELECT CASE c.relkind WHEN 'f' THEN 'foreign table' WHEN 'c' THEN 'composite type' END AS kind,
         ns.nspname || '.' || c.relname AS name
  FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
  WHERE c.relkind IN ('f', 'c')
    AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_class'::regclass AND ext.objid = c.oid)
    AND NOT (c.relkind = 'c' AND EXISTS (SELECT 1 FROM pg_type t WHERE t.typrelid = c.oid AND t.typtype <> 'c'))
  UNION ALL
  SELECT CASE p.prokind WHEN 'p' THEN 'procedure (attributes not modelled)' WHEN 'a' THEN 'aggregate'
                        WHEN 'w' THEN 'window function' ELSE 'function (attributes not modelled)' END,
         ns.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
  FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
  WHERE NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_proc'::regclass AND ext.objid = p.oid)
    AND NOT EXISTS (SELECT 1 FROM internal WHERE internal.objid = p.oid)
    AND NOT ",
    modelled_routine!(),
    r"
  UNION ALL
  SELECT CASE WHEN c.relkind IN ('r', 'p') THEN 'trigger (disabled or replica-only)'
              ELSE 'trigger' END,
         ns.nspname || '.' || c.relname || '.' || t.tgname
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN ns ON ns.oid = c.relnamespace
  WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND NOT ",
    modelled_trigger!(),
    r"
  UNION ALL
  SELECT CASE t.typtype WHEN 'r' THEN 'range type' WHEN 'm' THEN 'multirange type' END,
         ns.nspname || '.' || t.typname
  FROM pg_type t JOIN ns ON ns.oid = t.typnamespace
  WHERE t.typtype = 'r'
    AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_type'::regclass AND ext.objid = t.oid)
  UNION ALL
  SELECT CASE con.contype WHEN 'x' THEN 'exclusion constraint'
                          ELSE 'deferrable key (DEFERRABLE PRIMARY KEY or UNIQUE)' END,
         ns.nspname || '.' || c.relname || '.' || con.conname
  FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN ns ON ns.oid = c.relnamespace
  WHERE (con.contype = 'x' OR (con.contype IN ('p', 'u') AND con.condeferrable))
    AND con.conparentid = 0
  UNION ALL
  SELECT 'comment on a constraint', ns.nspname || '.' || c.relname || '.' || con.conname
  FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN ns ON ns.oid = c.relnamespace
  JOIN pg_description d ON d.objoid = con.oid AND d.classoid = 'pg_constraint'::regclass
  WHERE con.conparentid = 0

  UNION ALL
  SELECT 'comment on an enum type', ns.nspname || '.' || t.typname
  FROM pg_type t JOIN ns ON ns.oid = t.typnamespace
  JOIN pg_description d ON d.objoid = t.oid AND d.classoid = 'pg_type'::regclass
  WHERE t.typtype = 'e'
    AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_type'::regclass AND ext.objid = t.oid)
  UNION ALL
  SELECT 'rewrite rule', ns.nspname || '.' || c.relname || '.' || r.rulename
  FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN ns ON ns.oid = c.relnamespace
  WHERE r.rulename <> '_RETURN'
  UNION ALL
  SELECT 'grants', ns.nspname || '.' || c.relname
  FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
  WHERE c.relkind IN ('v', 'm', 'S') AND c.relacl IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_class'::regclass AND ext.objid = c.oid)
  UNION ALL
  SELECT DISTINCT 'column grants', ns.nspname || '.' || c.relname
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN ns ON ns.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm') AND a.attacl IS NOT NULL AND NOT a.attisdropped
    AND NOT EXISTS (SELECT 1 FROM ext WHERE ext.classid = 'pg_class'::regclass AND ext.objid = c.oid)
) x
WHERE kind IS NOT NULL
ORDER BY kind, name"
);

/// MySQL/MariaDB, in the URL's database. Views, their options, triggers, routines and events are
/// modelled; what of them is not (a trigger's place after another of the same event) is listed
/// under the object.
const MYSQL: &str = r"
SELECT kind, name FROM (
  SELECT 'sequence' AS kind, TABLE_NAME AS name FROM information_schema.TABLES
  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'SEQUENCE'
  UNION ALL
  SELECT 'trigger order (FOLLOWS/PRECEDES)', CONCAT(EVENT_OBJECT_TABLE, '.', TRIGGER_NAME)
  FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND ACTION_ORDER > 1
  UNION ALL
  SELECT DISTINCT 'sub-partitioning (SUBPARTITION BY)', TABLE_NAME FROM information_schema.PARTITIONS
  WHERE TABLE_SCHEMA = DATABASE() AND SUBPARTITION_NAME IS NOT NULL
) x
ORDER BY kind, name";

/// The objects in the inspected `namespaces` (PostgreSQL; MySQL reads the URL's database) that
/// the model does not hold, sorted by kind and name.
pub async fn unmodelled(session: &mut Session, namespaces: &[String]) -> Result<Vec<Unmodelled>, Error> {
    match session {
        Session::Postgres { client, .. } => {
            let rows = client
                .query(POSTGRES, &[&namespaces])
                .await
                .map_err(Error::postgres)?;
            rows.iter()
                .map(|row| {
                    Ok(Unmodelled {
                        kind: row.try_get(0).map_err(Error::postgres)?,
                        name: row.try_get(1).map_err(Error::postgres)?,
                    })
                })
                .collect()
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            let rows: Vec<(String, String)> = conn.query(MYSQL).await.map_err(Error::mysql)?;
            Ok(rows
                .into_iter()
                .map(|(kind, name)| Unmodelled { kind, name })
                .collect())
        }
    }
}
