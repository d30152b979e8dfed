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
