//! Partitioning: each partitioned table's key (`pg_get_partkeydef`) and each partition's parent
//! (`pg_inherits`) and bound (`pg_get_expr(relpartbound)`), in one query for the whole namespace
//! set, deparsed with an empty `search_path` so names are qualified as `pg_dump` writes them.
//! A partition's columns are then its parent's ([`ptah_schema::inherit_partition_columns`]).

use ptah_schema::{
    PartitionOf, QualifiedName, Schema, inherit_partition_columns, partition_bound, partition_key,
};
use tokio_postgres::Client;

use super::{Params, get, query};
use crate::Error;

/// Partitioned tables and partitions in scope, with their keys, parents and bounds.
const PARTITIONING: &str = r"
SELECT n.nspname::text, c.relname::text,
       CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END,
       pn.nspname::text, pc.relname::text,
       CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, c.oid) END
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_inherits h ON c.relispartition AND h.inhrelid = c.oid
LEFT JOIN pg_class pc ON pc.oid = h.inhparent
LEFT JOIN pg_namespace pn ON pn.oid = pc.relnamespace
WHERE c.relkind IN ('r', 'p') AND (c.relkind = 'p' OR c.relispartition) AND n.nspname = ANY($1)";

/// Reads partitioning into the tables of `schema` (already read); the caller has emptied
/// `search_path`.
pub(super) async fn read(client: &Client, params: &Params<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in query(client, PARTITIONING, params).await? {
        let name = QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?);
        let Some(table) = schema.tables.get_mut(&name) else {
            continue;
        };
        table.partition_by = get::<Option<String>>(&row, 2)?.map(|k| partition_key(&k));
        let parent: (Option<String>, Option<String>) = (get(&row, 3)?, get(&row, 4)?);
        if let ((Some(schema), Some(parent)), Some(bound)) = (parent, get::<Option<String>>(&row, 5)?) {
            table.partition_of = Some(PartitionOf {
                parent: QualifiedName::new(schema, parent),
                bound: partition_bound(&bound),
            });
        }
    }
    inherit_partition_columns(&mut schema.tables);
    Ok(())
}

/// The desired partitions whose bound is written otherwise than the live one's (same parent) but
/// that the server prints exactly as the live one: a hand-written `FROM ('2024-01-01')` on a
/// `timestamptz` key and the catalog's `FROM ('2024-01-01 00:00:00+00')` are one bound.
///
/// Each such bound is tried once on a temporary copy of the live parent (its columns and key),
/// in a transaction that is always rolled back, in the session's own time zone, and read back.
/// A bound the server refuses is not equivalent: the plan detaches and attaches again.
pub(crate) async fn equivalent_to_live(
    client: &Client,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<QualifiedName>, Error> {
    let differing: Vec<(&QualifiedName, &PartitionOf, &str)> = desired
        .tables
        .values()
        .filter_map(|t| {
            let want = t.partition_of.as_ref()?;
            let have = live.tables.get(&t.name)?.partition_of.as_ref()?;
            let key = live.tables.get(&have.parent)?.partition_by.as_deref()?;
            (have.parent == want.parent && have.bound != want.bound).then_some((&t.name, want, key))
        })
        .collect();
    if differing.is_empty() {
        return Ok(Vec::new());
    }
    client.batch_execute("BEGIN").await.map_err(Error::postgres)?;
    let mut same = Vec::new();
    let mut result = Ok(());
    for (n, (name, want, key)) in differing.iter().enumerate() {
        match probe(client, n, want, key).await {
            Ok(Some(bound)) => {
                let live_bound = live.tables.get(*name).and_then(|t| t.partition_of.as_ref());
                if live_bound.is_some_and(|l| l.bound == bound) {
                    same.push((*name).clone());
                }
            }
            Ok(None) => {}
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
    result.map(|()| same)
}

/// Creates a temporary copy of `want`'s parent partitioned by `key`, a temporary partition of it
/// with `want`'s bound, and reads the bound back; `None` when the server refuses either.
async fn probe(client: &Client, n: usize, want: &PartitionOf, key: &str) -> Result<Option<String>, Error> {
    let savepoint = format!("ptah_bound_{n}");
    client
        .batch_execute(&format!("SAVEPOINT {savepoint}"))
        .await
        .map_err(Error::postgres)?;
    let parent = format!("ptah_probe_parent_{n}");
    let child = format!("ptah_probe_part_{n}");
    let quoted = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    // One statement each through the extended protocol: a bound cannot smuggle in a second
    // statement that would outlive the rollback.
    let statements = [
        format!(
            "CREATE TABLE pg_temp.{parent} (LIKE {}.{}) PARTITION BY {key}",
            quoted(&want.parent.schema),
            quoted(&want.parent.name)
        ),
        format!(
            "CREATE TABLE pg_temp.{child} PARTITION OF pg_temp.{parent} {}",
            want.bound
        ),
    ];
    let mut created = true;
    for s in &statements {
        if client.execute(s.as_str(), &[]).await.is_err() {
            created = false;
            break;
        }
    }
    let bound = if created {
        let row = client
            .query_one(
                "SELECT pg_get_expr(c.relpartbound, c.oid) FROM pg_class c \
                 WHERE c.oid = format('pg_temp.%I', $1::text)::regclass",
                &[&child],
            )
            .await
            .map_err(Error::postgres)?;
        Some(partition_bound(&get::<String>(&row, 0)?))
    } else {
        None
    };
    client
        .batch_execute(&format!("ROLLBACK TO SAVEPOINT {savepoint}"))
        .await
        .map_err(Error::postgres)?;
    Ok(bound)
}
