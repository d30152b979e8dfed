//! Partitioning: each partitioned table's key (`pg_get_partkeydef`) and each partition's parent
//! (`pg_inherits`) and bound (`pg_get_expr(relpartbound)`), in one query for the whole namespace
//! set, deparsed with an empty `search_path` so names are qualified as `pg_dump` writes them.
//! A partition's columns are then its parent's ([`ptah_schema::inherit_partition_columns`]).

use ptah_schema::{
    PartitionOf, QualifiedName, Schema, inherit_partition_columns, partition_bound, partition_key,
};
use tokio_postgres::Client;

use super::{get, pipeline::Pipeline, search_path};
use crate::Error;

/// Partitioned tables and partitions in scope, with their keys, parents and bounds.
pub(super) const PARTITIONING: &str = r"
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
pub(super) async fn read(rows: &mut Pipeline<'_>, schema: &mut Schema) -> Result<(), Error> {
    for row in rows.next(PARTITIONING).await? {
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
pub(crate) async fn bounds_equivalent_to_live(
    client: &Client,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<QualifiedName>, Error> {
    let probes: Vec<Probe> = desired
        .tables
        .values()
        .filter_map(|t| {
            let want = t.partition_of.as_ref()?;
            let have = live.tables.get(&t.name)?.partition_of.as_ref()?;
            let key = live.tables.get(&have.parent)?.partition_by.as_deref()?;
            (have.parent == want.parent && have.bound != want.bound).then(|| Probe {
                table: t.name.clone(),
                creates: vec![
                    format!("CREATE TABLE pg_temp.ptah_probe_parent (LIKE {}) PARTITION BY {key}", quoted(&have.parent)),
                    format!("CREATE TABLE pg_temp.ptah_probe PARTITION OF pg_temp.ptah_probe_parent {}", want.bound),
                ],
                read: "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE oid = 'pg_temp.ptah_probe'::regclass",
                live: have.bound.clone(),
            })
        })
        .collect();
    run(client, probes, partition_bound).await
}

/// The desired partitioned tables whose key is written otherwise than the live one's but that
/// the server prints exactly as the live one (`RANGE ((a + b))` is the catalog's `RANGE (((a +
/// b)))`): each is tried on a temporary copy of the live table's columns, as bounds are.
pub(crate) async fn keys_equivalent_to_live(
    client: &Client,
    desired: &Schema,
    live: &Schema,
) -> Result<Vec<QualifiedName>, Error> {
    let probes: Vec<Probe> = desired
        .tables
        .values()
        .filter_map(|t| {
            let want = t.partition_by.as_deref()?;
            let have = live.tables.get(&t.name)?.partition_by.as_deref()?;
            (have != want).then(|| Probe {
                table: t.name.clone(),
                creates: vec![format!(
                    "CREATE TABLE pg_temp.ptah_probe (LIKE {}) PARTITION BY {want}",
                    quoted(&t.name)
                )],
                read: "SELECT pg_get_partkeydef('pg_temp.ptah_probe'::regclass)",
                live: have.to_owned(),
            })
        })
        .collect();
    run(client, probes, partition_key).await
}

/// One desired text tried on the server: the statements that create it on temporary tables, the
/// query that reads the server's spelling back, and the live text it is compared with.
struct Probe {
    table: QualifiedName,
    creates: Vec<String>,
    read: &'static str,
    live: String,
}

/// Runs each probe in its own savepoint of one transaction that is always rolled back; returns
/// the tables whose desired text the server prints as the live one.
async fn run(
    client: &Client,
    probes: Vec<Probe>,
    canonical: fn(&str) -> String,
) -> Result<Vec<QualifiedName>, Error> {
    if probes.is_empty() {
        return Ok(Vec::new());
    }
    client.batch_execute("BEGIN").await.map_err(Error::postgres)?;
    let mut same = Vec::new();
    let mut result = Ok(());
    for probe in probes {
        match read_back(client, &probe).await {
            Ok(Some(text)) if canonical(&text) == probe.live => same.push(probe.table),
            Ok(_) => {}
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    client.batch_execute("ROLLBACK").await.map_err(Error::postgres)?;
    result.map(|()| same)
}

/// Creates a probe's temporary tables under the session's `search_path` (the one an apply runs
/// with) and reads the server's text back with an empty one, as inspection does; `None` when the
/// server refuses the desired text.
async fn read_back(client: &Client, probe: &Probe) -> Result<Option<String>, Error> {
    client
        .batch_execute("SAVEPOINT ptah_probe")
        .await
        .map_err(Error::postgres)?;
    let mut created = true;
    // One statement each through the extended protocol: a desired text cannot smuggle in a
    // second statement that would outlive the rollback.
    for s in &probe.creates {
        if client.execute(s.as_str(), &[]).await.is_err() {
            created = false;
            break;
        }
    }
    let text = if created {
        search_path(client, "").await?;
        let row = client.query_one(probe.read, &[]).await.map_err(Error::postgres)?;
        Some(get::<String>(&row, 0)?)
    } else {
        None
    };
    client
        .batch_execute("ROLLBACK TO SAVEPOINT ptah_probe")
        .await
        .map_err(Error::postgres)?;
    Ok(text)
}

/// A qualified name quoted for SQL.
fn quoted(name: &QualifiedName) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    format!("{}.{}", q(&name.schema), q(&name.name))
}
