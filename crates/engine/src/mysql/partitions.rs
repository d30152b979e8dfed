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

/// Sets `partition_by` on the partitioned tables.
pub(super) async fn read(
    conn: &mut Conn,
    database: &str,
    tables: &mut BTreeMap<String, Table>,
) -> Result<(), Error> {
    let mut found: BTreeMap<String, (MysqlPartitioning, BTreeMap<i64, (String, Option<String>)>, bool)> =
        BTreeMap::new();
    for row in rows(conn, PARTITIONS, database).await? {
        let table: String = req(&row, 0)?;
        let entry = found.entry(table).or_insert_with(|| {
            (
                MysqlPartitioning {
                    method: String::new(),
                    expression: String::new(),
                    partitions: Vec::new(),
                },
                BTreeMap::new(),
                false,
            )
        });
        entry.0.method = text(&row, 3)?.unwrap_or_default();
        entry.0.expression = text(&row, 4)?.unwrap_or_default();
        entry.2 |= text(&row, 6)?.is_some();
        let position = int(&row, 2)?.unwrap_or_default();
        entry.1.insert(position, (req(&row, 1)?, text(&row, 5)?));
    }
    for (name, (mut partitioning, partitions, subpartitioned)) in found {
        if subpartitioned {
            continue;
        }
        partitioning.partitions = partitions.into_values().collect();
        if let Some(table) = tables.get_mut(&name) {
            table.partition_by = Some(partitioning.text());
        }
    }
    Ok(())
}
