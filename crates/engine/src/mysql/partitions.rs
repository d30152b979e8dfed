//! MySQL/MariaDB partitioning, read from `information_schema.PARTITIONS` in one query into the
//! canonical text the dump reader produces ([`MysqlPartitioning`]). A sub-partitioned table is
//! left unpartitioned here and listed as not managed ([`crate::unmodelled`]).

use std::collections::BTreeMap;

use mysql_async::Conn;
use ptah_schema::Table;
use ptah_schema::normalize::MysqlPartitioning;

use super::{int, req, rows, text};
use crate::Error;

/// Every partition of every partitioned table, in order.
const PARTITIONS: &str = "SELECT TABLE_NAME, PARTITION_NAME, PARTITION_ORDINAL_POSITION, \
     PARTITION_METHOD, PARTITION_EXPRESSION, PARTITION_DESCRIPTION, SUBPARTITION_NAME \
     FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = ? AND PARTITION_NAME IS NOT NULL";

/// One table's partitions as read so far.
struct Found {
    partitioning: MysqlPartitioning,
    partitions: BTreeMap<i64, (String, Option<String>)>,
    subpartitioned: bool,
}

/// Sets `partition_by` on the partitioned tables.
pub(super) async fn read(
    conn: &mut Conn,
    database: &str,
    tables: &mut BTreeMap<String, Table>,
) -> Result<(), Error> {
    let mut found: BTreeMap<String, Found> = BTreeMap::new();
    for row in rows(conn, PARTITIONS, database).await? {
        let table: String = req(&row, 0)?;
        let entry = found.entry(table).or_insert_with(|| Found {
            partitioning: MysqlPartitioning {
                method: String::new(),
                expression: String::new(),
                partitions: Vec::new(),
            },
            partitions: BTreeMap::new(),
            subpartitioned: false,
        });
        entry.partitioning.method = text(&row, 3)?.unwrap_or_default();
        entry.partitioning.expression = text(&row, 4)?.unwrap_or_default();
        entry.subpartitioned |= text(&row, 6)?.is_some();
        let position = int(&row, 2)?.unwrap_or_default();
        entry.partitions.insert(position, (req(&row, 1)?, text(&row, 5)?));
    }
    for (name, found) in found {
        if found.subpartitioned {
            continue;
        }
        let mut partitioning = found.partitioning;
        partitioning.partitions = found.partitions.into_values().collect();
        if let Some(table) = tables.get_mut(&name) {
            table.partition_by = Some(partitioning.text());
        }
    }
    Ok(())
}
