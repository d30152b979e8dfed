//! The floor: the bare catalog queries of `bench-baseline.md` §6, run over the same drivers and
//! the same kind of session as `inspect`, fetching every value of every row.

use anyhow::Context;
use ptah_engine::Session;

/// §6.1: six set-based pg_catalog queries, `$1` the managed namespaces.
const POSTGRES: [&str; 6] = [
    // tables
    "SELECT c.oid, n.nspname, c.relname, c.relkind, c.relpersistence, c.relispartition,
            c.reloptions, c.relreplident, d.description AS comment
     FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_description d
            ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
     WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1)",
    // columns
    "SELECT a.attrelid, a.attnum, a.attname,
            format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull, a.attidentity, a.attgenerated,
            pg_get_expr(ad.adbin, ad.adrelid) AS default_expr,
            CASE WHEN a.attcollation <> t.typcollation THEN co.collname END AS collation,
            d.description AS comment
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_type t ON t.oid = a.atttypid
     LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
     LEFT JOIN pg_collation co ON co.oid = a.attcollation
     LEFT JOIN pg_description d
            ON d.objoid = a.attrelid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
     WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1)
       AND a.attnum > 0 AND NOT a.attisdropped",
    // constraints
    "SELECT con.oid, con.conrelid, con.conname, con.contype,
            pg_get_constraintdef(con.oid, true) AS def,
            con.condeferrable, con.condeferred, con.convalidated,
            con.conkey, con.confrelid, con.confkey, con.conindid,
            con.confupdtype, con.confdeltype, con.confmatchtype,
            fn.nspname AS ref_schema, fc.relname AS ref_table
     FROM pg_constraint con
     JOIN pg_class c ON c.oid = con.conrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_class fc ON fc.oid = con.confrelid
     LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
     WHERE n.nspname = ANY($1) AND con.contype IN ('p', 'u', 'f', 'c', 'x')",
    // indexes
    "SELECT i.indexrelid, i.indrelid, ic.relname AS index_name, am.amname,
            i.indisunique, i.indisprimary, i.indisvalid, i.indnkeyatts, i.indkey::int2[] AS indkey,
            pg_get_indexdef(i.indexrelid) AS def,
            pg_get_expr(i.indpred, i.indrelid) AS predicate,
            EXISTS (SELECT 1 FROM pg_constraint k
                    WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid
                      AND k.contype IN ('p', 'u', 'x')) AS backs_constraint
     FROM pg_index i
     JOIN pg_class ic ON ic.oid = i.indexrelid
     JOIN pg_class c ON c.oid = i.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_am am ON am.oid = ic.relam
     WHERE n.nspname = ANY($1) AND c.relkind IN ('r', 'p', 'm')",
    // enums
    "SELECT n.nspname, t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS labels
     FROM pg_type t
     JOIN pg_namespace n ON n.oid = t.typnamespace
     JOIN pg_enum e ON e.enumtypid = t.oid
     WHERE n.nspname = ANY($1)
     GROUP BY n.nspname, t.typname",
    // sequences
    "SELECT c.oid, n.nspname, c.relname, format_type(s.seqtypid, NULL) AS type,
            s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle,
            d.refobjid AS owner_table, d.refobjsubid AS owner_column, d.deptype
     FROM pg_sequence s
     JOIN pg_class c ON c.oid = s.seqrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_depend d
            ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
           AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
     WHERE n.nspname = ANY($1)",
];

/// §6.3: the eight information_schema views, each filtered by an equality on the one database.
const MARIADB: [&str; 8] = [
    "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME \
     FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COLLATION, CREATE_OPTIONS, TABLE_COMMENT \
     FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
    "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, \
     DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, COLUMN_COMMENT, IS_GENERATED, \
     GENERATION_EXPRESSION FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?",
    "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, \
     COLLATION, NULLABLE, INDEX_TYPE, INDEX_COMMENT, IGNORED \
     FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?",
    "SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_TYPE \
     FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = ?",
    "SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, \
     POSITION_IN_UNIQUE_CONSTRAINT, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME \
     FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = ?",
    "SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_NAME, UNIQUE_CONSTRAINT_SCHEMA, \
     UNIQUE_CONSTRAINT_NAME, REFERENCED_TABLE_NAME, MATCH_OPTION, UPDATE_RULE, DELETE_RULE \
     FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?",
    "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, LEVEL, CHECK_CLAUSE \
     FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?",
];

/// Any PostgreSQL value, borrowed as its wire bytes: fetching it costs what fetching costs, and no
/// more than the cheapest decode.
struct Raw;

impl<'a> tokio_postgres::types::FromSql<'a> for Raw {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        std::hint::black_box(raw);
        Ok(Raw)
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }
}

/// Runs the floor queries once in one read-only snapshot; returns the rows read.
///
/// PostgreSQL: `namespaces` are the managed schemas. MariaDB: `database` is the one database.
pub async fn run(session: &mut Session, namespaces: &[String], database: &str) -> anyhow::Result<usize> {
    let mut rows = 0;
    match session {
        Session::Postgres { client, .. } => {
            client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await?;
            for sql in POSTGRES {
                for row in client.query(sql, &[&namespaces]).await.context("floor query")? {
                    for i in 0..row.len() {
                        row.try_get::<_, Option<Raw>>(i)?;
                    }
                    rows += 1;
                }
            }
            client.batch_execute("COMMIT").await?;
        }
        Session::MySql(conn) => {
            use mysql_async::prelude::Queryable;
            conn.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
                .await?;
            for sql in MARIADB {
                // The driver decodes every value into a `Value` as it reads the row.
                let found: Vec<mysql_async::Row> =
                    conn.exec(sql, (database,)).await.context("floor query")?;
                rows += found.len();
            }
            conn.query_drop("COMMIT").await?;
        }
    }
    Ok(rows)
}
