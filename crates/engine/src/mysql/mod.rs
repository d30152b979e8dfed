//! MySQL/MariaDB introspection of the URL's database from information_schema.
//!
//! Conventions shared with the planner: every object lives in namespace `""`; a UNIQUE index whose
//! parts are whole ascending columns is read as a [`UniqueConstraint`] (MySQL cannot tell the two
//! apart), any other unique index as an [`Index`]; the index InnoDB adds for a foreign key (named
//! after the constraint, on exactly its columns) is implicit and hidden; a `longtext` column with
//! MariaDB's implicit `json_valid` check is `Json` and the check is hidden; `tinyint(1)` is boolean.

mod foreign_keys;
mod partitions;
mod probe;
mod programs;
mod queries;
mod stored;

use std::collections::{BTreeMap, HashMap, HashSet};

use mysql_async::{Conn, Row, prelude::Queryable};
use ptah_schema::{
    CheckConstraint, Column, DataType, DefaultValue, Dialect, Generated, Index, IndexPart, IndexTarget,
    PrimaryKey, QualifiedName, Schema, Table, UniqueConstraint,
};

use ptah_schema::normalize::{mysql_charset_name, mysql_on_update_default};

use crate::{Error, InspectScope, canon};

pub(crate) use probe::views_equivalent_to_live;

const DIALECT: Dialect = Dialect::Mysql;

/// Reads every base table, view and trigger of the session's current database.
pub(crate) async fn inspect(conn: &mut Conn, _scope: &InspectScope) -> Result<Schema, Error> {
    let (database, version): (Option<String>, String) = conn
        .query_first("SELECT DATABASE(), VERSION()")
        .await
        .map_err(Error::mysql)?
        .ok_or_else(|| Error::Query("SELECT DATABASE() returned no row".to_owned()))?;
    let database = database.ok_or_else(|| Error::Query("the session has no current database".to_owned()))?;
    let mariadb = version.contains("MariaDB");

    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    for row in rows(conn, queries::TABLES, &database).await? {
        let name = req(&row, 0)?;
        let mut table = Table::new(QualifiedName::new("", &name));
        table.comment = text(&row, 1)?.filter(|c| !c.is_empty());
        table.collation = text(&row, 2)?.map(|c| mysql_charset_name(&c));
        table.charset = table.collation.as_deref().map(charset_of);
        tables.insert(name, table);
    }
    let json_columns = read_checks(conn, &database, mariadb, &mut tables).await?;
    read_columns(conn, &database, mariadb, &json_columns, &mut tables).await?;
    foreign_keys::read(conn, &database, &mut tables).await?;
    let statistics = if mariadb {
        queries::STATISTICS_MARIADB
    } else {
        queries::STATISTICS_MYSQL
    };
    read_indexes(conn, statistics, &database, &mut tables).await?;
    partitions::read(conn, &database, &mut tables).await?;
    let (views, view_options) = programs::views(conn, &database, mariadb).await?;
    Ok(Schema {
        tables: tables.into_values().map(|t| (t.name.clone(), t)).collect(),
        views,
        view_options,
        triggers: programs::triggers(conn, &database).await?,
        stored_routines: stored::routines(conn, &database).await?,
        events: stored::events(conn, &database).await?,
        ..Schema::default()
    })
}

/// Fills the CHECK constraints; returns the (table, column) pairs whose check is MariaDB's implicit
/// `json_valid`, which is not reported as a check but makes the column `Json`.
async fn read_checks(
    conn: &mut Conn,
    database: &str,
    mariadb: bool,
    tables: &mut BTreeMap<String, Table>,
) -> Result<HashSet<(String, String)>, Error> {
    let found = if mariadb {
        rows(conn, queries::CHECKS_MARIADB, database).await?
    } else {
        conn.exec(queries::CHECKS_MYSQL, (database, database))
            .await
            .map_err(Error::mysql)?
    };
    let mut json = HashSet::new();
    for row in found {
        let (table_name, name, clause): (String, String, String) =
            (req(&row, 0)?, req(&row, 1)?, req(&row, 2)?);
        let column_level = text(&row, 3)?.as_deref() == Some("Column");
        if column_level && clause == format!("json_valid(`{}`)", name.replace('`', "``")) {
            json.insert((table_name, name));
            continue;
        }
        if let Some(table) = tables.get_mut(&table_name) {
            let expression = canon::expression(DIALECT, &clause);
            table
                .checks
                .insert(name.clone(), CheckConstraint { name, expression });
        }
    }
    Ok(json)
}

async fn read_columns(
    conn: &mut Conn,
    database: &str,
    mariadb: bool,
    json_columns: &HashSet<(String, String)>,
    tables: &mut BTreeMap<String, Table>,
) -> Result<(), Error> {
    let mut ordered: HashMap<String, BTreeMap<i64, Column>> = HashMap::new();
    for row in rows(conn, queries::COLUMNS, database).await? {
        let table: String = req(&row, 0)?;
        let name: String = req(&row, 1)?;
        let column_type: String = req(&row, 3)?;
        let extra = text(&row, 6)?.unwrap_or_default().to_ascii_lowercase();
        let data_type = if json_columns.contains(&(table.clone(), name.clone())) {
            DataType::Json
        } else if column_type.eq_ignore_ascii_case("tinyint(1)") {
            DataType::Boolean
        } else {
            canon::data_type(DIALECT, &column_type)
        };
        // EXTRA says `STORED GENERATED` or `VIRTUAL GENERATED` (MySQL 8 and MariaDB alike).
        let generated = match text(&row, 11)? {
            Some(expr) if extra.contains("generated") && !extra.contains("default_generated") => {
                Some(Generated {
                    expression: canon::expression(DIALECT, &expr),
                    stored: extra.contains("stored"),
                })
            }
            _ => None,
        };
        let default = match text(&row, 5)? {
            _ if generated.is_some() => None,
            None => None,
            Some(raw) if mariadb => canon::default(DIALECT, &data_type, &raw),
            Some(raw) => mysql_default(&raw, &extra, &data_type),
        };
        let default = default.filter(|d| !matches!(d, DefaultValue::Literal(ptah_schema::Literal::Null)));
        // EXTRA says `on update current_timestamp(3)` (MySQL 8: after `DEFAULT_GENERATED`).
        let raw_extra = text(&row, 6)?.unwrap_or_default();
        let default = match extra.find("on update ") {
            Some(at) => Some(mysql_on_update_default(
                &data_type,
                default,
                &raw_extra[at + 10..],
            )),
            None => default,
        };
        let mut column = Column {
            name,
            data_type,
            nullable: req::<String>(&row, 4)? == "YES",
            default,
            identity: None,
            identity_options: None,
            auto_increment: extra.contains("auto_increment"),
            comment: text(&row, 7)?.filter(|c| !c.is_empty()),
            charset: None,
            collation: None,
            generated,
        };
        // Reported only where it is not the table's, as a document states it.
        let table_collation = tables.get(&table).and_then(|t| t.collation.clone());
        // MariaDB's JSON columns are utf8mb4_bin by definition: part of the type, not a choice.
        let json = column.data_type == DataType::Json;
        if let Some(collation) = text(&row, 10)?.map(|c| mysql_charset_name(&c))
            && Some(&collation) != table_collation.as_ref()
            && !(json && collation == "utf8mb4_bin")
        {
            column.charset = text(&row, 9)?.map(|c| mysql_charset_name(&c));
            column.collation = Some(collation);
        }
        ordered.entry(table).or_default().insert(req(&row, 2)?, column);
    }
    for (name, columns) in ordered {
        if let Some(table) = tables.get_mut(&name) {
            table.columns = columns.into_values().collect();
        }
    }
    Ok(())
}

/// The character set a collation belongs to: MySQL and MariaDB name every collation after its
/// character set (`utf8mb4_unicode_ci`), and no character set name has an underscore.
fn charset_of(collation: &str) -> String {
    collation.split('_').next().unwrap_or(collation).to_owned()
}

/// MySQL 8 prints literal defaults unquoted and marks expressions `DEFAULT_GENERATED`; rewrite them
/// in MariaDB's quoted form, which the normalizer reads.
fn mysql_default(raw: &str, extra: &str, data_type: &DataType) -> Option<DefaultValue> {
    let numeric = matches!(
        data_type,
        DataType::Boolean
            | DataType::Integer { .. }
            | DataType::Decimal { .. }
            | DataType::Float32
            | DataType::Float64
    );
    let text = if extra.contains("default_generated") || numeric {
        raw.to_owned()
    } else {
        format!("'{}'", raw.replace('\'', "''"))
    };
    canon::default(DIALECT, data_type, &text)
}

/// One index as STATISTICS lists it, parts keyed by position.
struct RawIndex {
    unique: bool,
    method: String,
    parts: BTreeMap<i64, IndexPart>,
    /// `INDEX_COMMENT`, empty when none.
    comment: String,
}

async fn read_indexes(
    conn: &mut Conn,
    sql: &str,
    database: &str,
    tables: &mut BTreeMap<String, Table>,
) -> Result<(), Error> {
    let mut indexes: BTreeMap<(String, String), RawIndex> = BTreeMap::new();
    for row in rows(conn, sql, database).await? {
        let id = (req::<String>(&row, 0)?, req::<String>(&row, 1)?);
        let target = match (text(&row, 4)?, text(&row, 8)?) {
            (Some(column), _) => IndexTarget::Column(column),
            (None, Some(expression)) => IndexTarget::Expression(canon::expression(DIALECT, &expression)),
            (None, None) => {
                return Err(Error::Unsupported {
                    object: format!("index {} on {}", id.1, id.0),
                    reason: "a key part names neither a column nor an expression".to_owned(),
                });
            }
        };
        let part = IndexPart {
            target,
            descending: text(&row, 6)?.as_deref() == Some("D"),
            prefix_length: int(&row, 5)?.and_then(|n| u32::try_from(n).ok()),
            opclass: None,
            nulls_first: None,
        };
        let raw = indexes.entry(id).or_insert_with(|| RawIndex {
            unique: false,
            method: String::new(),
            parts: BTreeMap::new(),
            comment: String::new(),
        });
        raw.comment = text(&row, 9)?.unwrap_or_default();
        raw.unique = int(&row, 2)? == Some(0);
        raw.method = req::<String>(&row, 7)?.to_ascii_lowercase();
        raw.parts.insert(req(&row, 3)?, part);
    }
    for ((table_name, name), raw) in indexes {
        let Some(table) = tables.get_mut(&table_name) else {
            continue;
        };
        let parts: Vec<IndexPart> = raw.parts.into_values().collect();
        let plain: Option<Vec<String>> = parts
            .iter()
            .map(|p| match (&p.target, p.descending, p.prefix_length) {
                (IndexTarget::Column(c), false, None) => Some(c.clone()),
                _ => None,
            })
            .collect();
        // A commented key is an index (the comment lives in `index_comments`), as the reader has it.
        if !raw.comment.is_empty() && name != "PRIMARY" {
            table.index_comments.insert(name.clone(), raw.comment.clone());
        }
        match plain {
            Some(columns) if name == "PRIMARY" => table.primary_key = Some(PrimaryKey { name, columns }),
            Some(columns) if raw.unique && raw.method == "btree" && raw.comment.is_empty() => {
                table
                    .uniques
                    .insert(name.clone(), UniqueConstraint { name, columns });
            }
            Some(columns)
                if raw.comment.is_empty()
                    && table
                        .foreign_keys
                        .get(&name)
                        .is_some_and(|fk| fk.columns == columns) => {}
            _ => {
                let index = Index {
                    name: name.clone(),
                    unique: raw.unique,
                    parts,
                    predicate: None,
                    method: (raw.method != "btree").then_some(raw.method),
                    include: Vec::new(),
                    nulls_not_distinct: false,
                    storage: Vec::new(),
                };
                table.indexes.insert(name, index);
            }
        }
    }
    Ok(())
}

async fn rows(conn: &mut Conn, sql: &str, database: &str) -> Result<Vec<Row>, Error> {
    conn.exec(sql, (database,)).await.map_err(Error::mysql)
}

/// A nullable text column (information_schema text arrives as bytes).
fn text(row: &Row, index: usize) -> Result<Option<String>, Error> {
    match row.as_ref(index) {
        None | Some(mysql_async::Value::NULL) => Ok(None),
        Some(mysql_async::Value::Bytes(bytes)) => Ok(Some(String::from_utf8_lossy(bytes).into_owned())),
        Some(other) => Ok(Some(other.as_sql(true))),
    }
}

/// A nullable integer column.
fn int(row: &Row, index: usize) -> Result<Option<i64>, Error> {
    match text(row, index)? {
        None => Ok(None),
        Some(t) => t
            .parse()
            .map(Some)
            .map_err(|_| Error::Query(format!("information_schema returned {t:?} for a number"))),
    }
}

/// A column that must not be NULL, converted.
fn req<T: std::str::FromStr>(row: &Row, index: usize) -> Result<T, Error> {
    let value =
        text(row, index)?.ok_or_else(|| Error::Query(format!("unexpected NULL in column {index}")))?;
    value
        .parse()
        .map_err(|_| Error::Query(format!("unexpected value {value:?} in column {index}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql8_literal_defaults_are_requoted() {
        let text = DataType::Varchar(Some(3));
        assert_eq!(
            mysql_default("it's", "", &text),
            canon::default(DIALECT, &text, "'it''s'")
        );
        let int = DataType::Integer {
            bits: 32,
            unsigned: false,
        };
        assert_eq!(mysql_default("5", "", &int), canon::default(DIALECT, &int, "5"));
        assert_eq!(
            mysql_default("CURRENT_TIMESTAMP", "default_generated", &text),
            canon::default(DIALECT, &text, "CURRENT_TIMESTAMP")
        );
    }
}
