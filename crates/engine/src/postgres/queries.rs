//! The pg_catalog queries: one per object kind, each filtered by `$1`, the namespaces in scope.
//!
//! Structured catalog columns (`conkey`, `indkey`, `indoption`) are preferred over server-side
//! deparsing, which is expensive at scale; only expressions (defaults, CHECK bodies, index
//! expressions and predicates) are deparsed. Deparsing runs with `search_path = public`, whatever the
//! session's settings, so names print the same every time: qualified unless in `public` or
//! `pg_catalog`, as people usually write them.

/// Non-system namespaces that no extension owns.
pub(super) const NAMESPACES: &str = r"
SELECT n.nspname::text
FROM pg_namespace n
WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d
                  WHERE d.classid = 'pg_namespace'::regclass AND d.objid = n.oid AND d.deptype = 'e')";

/// Installed extensions except `plpgsql`, which every database has.
pub(super) const EXTENSIONS: &str = r"
SELECT e.extname::text, n.nspname::text, e.extversion
FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname <> 'plpgsql'";

/// Enum types with their labels in order, except those an extension owns.
pub(super) const ENUMS: &str = r"
SELECT n.nspname::text, t.typname::text,
       ARRAY(SELECT e.enumlabel::text FROM pg_enum e
             WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS labels
FROM pg_type t
JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE t.typtype = 'e' AND n.nspname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_depend d
                  WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')";

/// Ordinary and partitioned tables and partitions (not extension-owned), with their comments.
pub(super) const TABLES: &str = r"
SELECT c.oid, n.nspname::text, c.relname::text, d.description
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_description d
       ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_depend x
                  WHERE x.classid = 'pg_class'::regclass AND x.objid = c.oid AND x.deptype = 'e')";

/// Columns: the formatted type, the enum behind it (directly or as an array element), identity,
/// generation, the deparsed default, the comment, a collation other than the type's default
/// (its schema and name), and an identity's sequence options (`pg_sequence` of the sequence the
/// column owns internally).
pub(super) const COLUMNS: &str = r"
SELECT a.attrelid, a.attnum, a.attname::text,
       format_type(a.atttypid, a.atttypmod) AS type,
       a.attnotnull, a.attidentity::text, a.attgenerated::text,
       pg_get_expr(ad.adbin, ad.adrelid, true) AS default_expr,
       d.description,
       en.nspname::text AS enum_schema, et.typname::text AS enum_name, t.typcategory = 'A' AS is_array,
       cn.nspname::text AS collation_schema, co.collname::text AS collation,
       t.typtype = 'd' OR (t.typcategory = 'A' AND EXISTS (
           SELECT 1 FROM pg_type e WHERE e.oid = t.typelem AND e.typtype = 'd')) AS is_domain,
       idseq.seqstart, idseq.seqincrement, idseq.seqmin, idseq.seqmax, idseq.seqcache, idseq.seqcycle
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type et
       ON et.oid = CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE t.oid END AND et.typtype = 'e'
LEFT JOIN pg_namespace en ON en.oid = et.typnamespace
LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
LEFT JOIN pg_description d
       ON d.objoid = a.attrelid AND d.classoid = 'pg_class'::regclass AND d.objsubid = a.attnum
LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> t.typcollation
LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
LEFT JOIN LATERAL (
    SELECT s.* FROM pg_depend dep JOIN pg_sequence s ON s.seqrelid = dep.objid
    WHERE a.attidentity <> '' AND dep.classid = 'pg_class'::regclass
      AND dep.refclassid = 'pg_class'::regclass
      AND dep.refobjid = a.attrelid AND dep.refobjsubid = a.attnum AND dep.deptype = 'i'
    LIMIT 1) idseq ON true
WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1)
  AND a.attnum > 0 AND NOT a.attisdropped";

/// PRIMARY KEY, UNIQUE, FOREIGN KEY and CHECK constraints; key columns resolved to names in order.
/// Not a partition's copies of its parent's (`conparentid`; a check a partition inherits, even
/// one it also declares, as a restored dump's partitions do), which the server makes.
pub(super) const CONSTRAINTS: &str = r"
SELECT con.conrelid, con.conname::text, con.contype::text,
       CASE WHEN con.contype = 'c' THEN pg_get_constraintdef(con.oid, true) END AS def,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num
             ORDER BY k.ord) AS columns,
       fn.nspname::text AS ref_schema, fc.relname::text AS ref_table,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num
             ORDER BY k.ord) AS ref_columns,
       con.confupdtype::text, con.confdeltype::text,
       con.confmatchtype = 'f' AS match_full, con.condeferrable, con.condeferred,
       con.convalidated
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class fc ON fc.oid = con.confrelid
LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace
WHERE n.nspname = ANY($1) AND con.contype IN ('p', 'u', 'f', 'c')
  AND con.conparentid = 0 AND NOT (c.relispartition AND con.coninhcount > 0)";

/// Indexes that are not implicit: not backing a PRIMARY KEY, UNIQUE or EXCLUDE constraint, not a
/// partition's copy of a parent index, not extension-owned. Expression parts are deparsed one by
/// one; plain column parts come back as attribute numbers. `indnullsnotdistinct` is read through
/// `to_jsonb` because servers before 15 have no such column (and no such option).
pub(super) const INDEXES: &str = r"
SELECT i.indrelid, ic.relname::text, am.amname::text, i.indisunique, i.indnkeyatts,
       i.indkey::int2[] AS keys, i.indoption::int2[] AS options,
       ARRAY(SELECT CASE WHEN k.num = 0 THEN pg_get_indexdef(i.indexrelid, k.ord::int, true) END
             FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(num, ord)
             ORDER BY k.ord) AS exprs,
       pg_get_expr(i.indpred, i.indrelid, true) AS predicate,
       d.description AS comment,
       ARRAY(SELECT CASE WHEN oc.opcdefault THEN NULL WHEN ocn.nspname = 'pg_catalog' THEN oc.opcname::text
                         ELSE ocn.nspname || '.' || oc.opcname END
             FROM unnest(i.indclass::oid[]) WITH ORDINALITY k(opc, ord)
             JOIN pg_opclass oc ON oc.oid = k.opc JOIN pg_namespace ocn ON ocn.oid = oc.opcnamespace
             ORDER BY k.ord) AS opclasses,
       COALESCE(ic.reloptions, '{}')::text[] AS storage,
       COALESCE((to_jsonb(i) ->> 'indnullsnotdistinct')::boolean, false) AS nulls_not_distinct
FROM pg_index i
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_am am ON am.oid = ic.relam
LEFT JOIN pg_description d
       ON d.objoid = i.indexrelid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1)
  AND NOT i.indisprimary
  -- An interrupted CREATE INDEX CONCURRENTLY leaves an invalid index that serves no query: it
  -- is not the index, and the Apply that builds it again drops it first.
  AND i.indisvalid
  AND NOT EXISTS (SELECT 1 FROM pg_constraint k
                  WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid
                    AND k.contype IN ('p', 'u', 'x'))
  AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)
  AND NOT EXISTS (SELECT 1 FROM pg_depend x
                  WHERE x.classid = 'pg_class'::regclass AND x.objid = i.indexrelid
                    AND x.deptype = 'e')";

/// Views and materialized views (not extension-owned), with their comments and options. Run with
/// an empty `search_path`, so the query prints every name qualified, exactly as `pg_dump` writes it.
pub(super) const VIEWS: &str = r"
SELECT n.nspname::text, c.relname::text, c.relkind = 'm', pg_get_viewdef(c.oid), d.description,
       array_to_string(c.reloptions, ', ')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_description d
       ON d.classoid = 'pg_class'::regclass AND d.objoid = c.oid AND d.objsubid = 0
WHERE c.relkind IN ('v', 'm') AND n.nspname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_depend e
                  WHERE e.classid = 'pg_class'::regclass AND e.objid = c.oid AND e.deptype = 'e')";

/// Domains (not extension-owned) with their collation when not the base type's, default, NOT
/// NULL, named checks and comment.
pub(super) const DOMAINS: &str = r"
SELECT n.nspname::text, t.typname::text, format_type(t.typbasetype, t.typtypmod),
       cn.nspname::text, co.collname::text, pg_get_expr(t.typdefaultbin, 0), t.typnotnull,
       ARRAY(SELECT c.conname::text FROM pg_constraint c
             WHERE c.contypid = t.oid AND c.contype = 'c' ORDER BY c.conname),
       ARRAY(SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
             WHERE c.contypid = t.oid AND c.contype = 'c' ORDER BY c.conname),
       d.description
FROM pg_type t
JOIN pg_namespace n ON n.oid = t.typnamespace
JOIN pg_type bt ON bt.oid = t.typbasetype
LEFT JOIN pg_collation co ON co.oid = t.typcollation AND t.typcollation <> bt.typcollation
LEFT JOIN pg_namespace cn ON cn.oid = co.collnamespace
LEFT JOIN pg_description d
       ON d.classoid = 'pg_type'::regclass AND d.objoid = t.oid AND d.objsubid = 0
WHERE t.typtype = 'd' AND n.nspname = ANY($1)
  AND NOT EXISTS (SELECT 1 FROM pg_depend e
                  WHERE e.classid = 'pg_type'::regclass AND e.objid = t.oid AND e.deptype = 'e')";
