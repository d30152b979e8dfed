//! Foreign keys of the URL's database: their columns from KEY_COLUMN_USAGE and their actions
//! from REFERENTIAL_CONSTRAINTS, two queries for the whole database.

use std::collections::{BTreeMap, HashMap};

use mysql_async::Conn;
use ptah_schema::normalize::mysql_action;
use ptah_schema::{ForeignKey, QualifiedName, ReferentialAction, Table};

use super::{queries, req, rows};
use crate::Error;

/// Fills every table's foreign keys.
pub(super) async fn read(
    conn: &mut Conn,
    database: &str,
    tables: &mut BTreeMap<String, Table>,
) -> Result<(), Error> {
    let mut rules = HashMap::new();
    for row in rows(conn, queries::FOREIGN_KEY_RULES, database).await? {
        let key = (req::<String>(&row, 0)?, req::<String>(&row, 1)?);
        rules.insert(
            key,
            (action(&req::<String>(&row, 2)?), action(&req::<String>(&row, 3)?)),
        );
    }
    type Parts = BTreeMap<i64, (String, String)>;
    let mut keys: BTreeMap<(String, String), (QualifiedName, Parts)> = BTreeMap::new();
    for row in rows(conn, queries::FOREIGN_KEY_COLUMNS, database).await? {
        let id = (req::<String>(&row, 0)?, req::<String>(&row, 1)?);
        let ref_schema: String = req(&row, 4)?;
        let referenced = QualifiedName::new(
            if ref_schema == database { "" } else { &ref_schema },
            req::<String>(&row, 5)?,
        );
        let entry = keys.entry(id).or_insert_with(|| (referenced, BTreeMap::new()));
        entry.1.insert(req(&row, 3)?, (req(&row, 2)?, req(&row, 6)?));
    }
    for ((table_name, name), (referenced_table, parts)) in keys {
        let Some(table) = tables.get_mut(&table_name) else {
            continue;
        };
        let (on_update, on_delete) = rules
            .get(&(table_name.clone(), name.clone()))
            .copied()
            .unwrap_or_default();
        let (columns, referenced_columns) = parts.into_values().unzip();
        let key = ForeignKey {
            name: name.clone(),
            columns,
            referenced_table,
            referenced_columns,
            on_delete,
            on_update,
            options: ptah_schema::ForeignKeyOptions::default(),
        };
        table.foreign_keys.insert(name, key);
    }
    Ok(())
}

/// `REFERENTIAL_CONSTRAINTS` rule text (NO ACTION is RESTRICT: [`mysql_action`]).
fn action(rule: &str) -> ReferentialAction {
    mysql_action(match rule.to_ascii_uppercase().as_str() {
        "RESTRICT" => ReferentialAction::Restrict,
        "CASCADE" => ReferentialAction::Cascade,
        "SET NULL" => ReferentialAction::SetNull,
        "SET DEFAULT" => ReferentialAction::SetDefault,
        _ => ReferentialAction::NoAction,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_map_to_actions() {
        assert_eq!(action("CASCADE"), ReferentialAction::Cascade);
        assert_eq!(action("SET NULL"), ReferentialAction::SetNull);
        assert_eq!(action("NO ACTION"), ReferentialAction::Restrict);
        assert_eq!(action("RESTRICT"), ReferentialAction::Restrict);
    }
}
