//! PostgreSQL introspection from `pg_catalog`, in one read-only REPEATABLE READ transaction.

mod aggregates;
pub(crate) mod cache;
pub(crate) mod canonical;
mod dependencies;
pub(crate) mod domain_probe;
mod domains;
pub(crate) mod expressions;
pub(crate) mod generated;
mod indexes;
mod partitions;
mod pipeline;
pub(crate) mod policy_probe;
pub(crate) mod program;
mod queries;
mod savepoints;
mod security;
mod sequences;
pub(crate) mod trigger_probe;
mod views;

pub(crate) use partitions::{bounds_equivalent_to_live, keys_equivalent_to_live};
pub(crate) use views::equivalent_to_live as views_equivalent_to_live;

use std::collections::{BTreeMap, HashMap};

use ptah_schema::{
    CheckConstraint, Column, DataType, DefaultValue, Dialect, EnumType, Extension, ForeignKey, Generated,
    Identity, IdentityOptions, PrimaryKey, QualifiedName, ReferentialAction, Schema, Table, UniqueConstraint,
};
use tokio_postgres::{Client, Row};

use indexes::read as read_indexes;
use pipeline::Pipeline;

use crate::{Error, InspectScope, canon};

const DIALECT: Dialect = Dialect::Postgres;

/// Reads the schema in `scope` from the catalog; the transaction ends before returning.
pub(crate) async fn inspect(client: &Client, scope: &InspectScope) -> Result<Schema, Error> {
    client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL search_path = public")
        .await
        .map_err(Error::postgres)?;
    let result = read(client, scope).await;
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = client.batch_execute(end).await.map_err(Error::postgres);
    let schema = result?;
    ended?;
    Ok(schema)
}

async fn read(client: &Client, scope: &InspectScope) -> Result<Schema, Error> {
    let mut schema = Schema::default();
    for row in query(client, queries::NAMESPACES).await? {
        let name: String = get(&row, 0)?;
        if scope
            .namespaces
            .as_ref()
            .is_none_or(|wanted| wanted.contains(&name))
        {
            schema.namespaces.insert(name);
        }
    }
    for row in query(client, queries::EXTENSIONS).await? {
        let name: String = get(&row, 0)?;
        let extension = Extension {
            name: name.clone(),
            schema: Some(get(&row, 1)?),
            version: Some(get(&row, 2)?),
        };
        schema.extensions.insert(name, extension);
    }
    let namespaces: Vec<String> = schema.namespaces.iter().cloned().collect();
    let mut rows = Pipeline::new(
        client,
        &namespaces,
        &[
            queries::DOMAINS,
            queries::ENUMS,
            queries::TABLES,
            queries::COLUMNS,
            queries::CONSTRAINTS,
            queries::INDEXES,
            sequences::SEQUENCES,
        ],
    );
    domains::read(&mut rows, &mut schema).await?;
    for row in rows.next(queries::ENUMS).await? {
        let name = QualifiedName::new(get::<String>(&row, 0)?, get::<String>(&row, 1)?);
        let values = get(&row, 2)?;
        schema.enums.insert(name.clone(), EnumType { name, values });
    }

    let mut tables: HashMap<u32, Table> = HashMap::new();
    for row in rows.next(queries::TABLES).await? {
        let mut table = Table::new(QualifiedName::new(
            get::<String>(&row, 1)?,
            get::<String>(&row, 2)?,
        ));
        table.comment = get(&row, 3)?;
        tables.insert(get(&row, 0)?, table);
    }
    let attnames = read_columns(&mut rows, &mut tables).await?;
    read_constraints(&mut rows, &mut tables).await?;
    read_indexes(&mut rows, &mut tables, &attnames).await?;
    schema.tables = tables.into_values().map(|t| (t.name.clone(), t)).collect();
    sequences::read(&mut rows, &mut schema).await?;
    // Views, policies, routines and triggers are deparsed with every name qualified, as pg_dump
    // prints them; everything else above reads with `public` on the path. The path is set
    // between the two pipelines, so no query of one runs under the other's path.
    search_path(client, "").await?;
    let qualified = read_qualified(client, &namespaces, &mut schema).await;
    search_path(client, "public").await?;
    qualified?;
    Ok(schema)
}

/// Fills every table's columns in attribute order; returns each table's attnum → name map.
async fn read_columns(
    rows: &mut Pipeline<'_>,
    tables: &mut HashMap<u32, Table>,
) -> Result<HashMap<u32, BTreeMap<i16, String>>, Error> {
    let mut columns: HashMap<u32, BTreeMap<i16, Column>> = HashMap::new();
    // A schema repeats few types and defaults thousands of times; each text is parsed once.
    let mut types: HashMap<String, DataType> = HashMap::new();
    let mut defaults: HashMap<(DataType, String), Option<DefaultValue>> = HashMap::new();
    for row in rows.next(queries::COLUMNS).await? {
        let table: u32 = get(&row, 0)?;
        if !tables.contains_key(&table) {
            continue;
        }
        let name: String = get(&row, 2)?;
        let identity = match get::<String>(&row, 5)?.as_str() {
            "a" => Some(Identity::Always),
            "d" => Some(Identity::ByDefault),
            _ => None,
        };
        // A generated column's pg_attrdef holds its generation expression, not a default.
        let stored = get::<String>(&row, 6)? == "s";
        let data_type = column_type(&row, &mut types)?;
        let (default, generated) = match get::<Option<String>>(&row, 7)? {
            Some(text) if stored => (
                None,
                Some(Generated {
                    expression: canon::expression(DIALECT, &text),
                    stored,
                }),
            ),
            Some(text) => {
                let default = defaults
                    .entry((data_type.clone(), text))
                    .or_insert_with_key(|(data_type, text)| canon::default(DIALECT, data_type, text));
                (default.clone(), None)
            }
            None => (None, None),
        };
        let collation = column_collation(&row, &name)?;
        let identity_options = match (identity, get::<Option<i64>>(&row, 15)?) {
            (Some(_), Some(start)) => {
                let options = IdentityOptions {
                    start,
                    increment: get(&row, 16)?,
                    min: get(&row, 17)?,
                    max: get(&row, 18)?,
                    cache: get(&row, 19)?,
                    cycle: get(&row, 20)?,
                };
                data_type
                    .sequence_type()
                    .filter(|t| IdentityOptions::defaults(*t) != options)
                    .map(|_| options)
            }
            _ => None,
        };
        let column = Column {
            name,
            data_type,
            nullable: !get::<bool>(&row, 4)?,
            default,
            identity,
            identity_options,
            auto_increment: false,
            comment: get(&row, 8)?,
            charset: None,
            collation,
            generated,
        };
        columns.entry(table).or_default().insert(get(&row, 1)?, column);
    }
    let mut attnames = HashMap::new();
    for (oid, by_number) in columns {
        let names = by_number.iter().map(|(n, c)| (*n, c.name.clone())).collect();
        if let Some(table) = tables.get_mut(&oid) {
            table.columns = by_number.into_values().collect();
        }
        attnames.insert(oid, names);
    }
    Ok(attnames)
}

/// A collation other than the type's default. Only `pg_catalog`'s are modelled: collation names
/// hold dots themselves (`en_US.utf8`), so a schema-qualified one has no unambiguous text form.
fn column_collation(row: &Row, column: &str) -> Result<Option<String>, Error> {
    let schema: Option<String> = get(row, 12)?;
    let name: Option<String> = get(row, 13)?;
    match (schema, name) {
        (Some(schema), Some(name)) if schema == "pg_catalog" => Ok(Some(name)),
        (Some(schema), Some(name)) => Err(Error::Unsupported {
            object: format!("column {column}"),
            reason: format!(
                "its collation {schema}.{name} is outside pg_catalog (user-defined collations are not modelled)"
            ),
        }),
        _ => Ok(None),
    }
}

/// An enum-typed column is typed by the enum's qualified name, whatever `search_path` would print.
fn column_type(row: &Row, types: &mut HashMap<String, DataType>) -> Result<DataType, Error> {
    let enum_schema: Option<String> = get(row, 9)?;
    let enum_name: Option<String> = get(row, 10)?;
    if let (Some(schema), Some(name)) = (enum_schema, enum_name) {
        let named = DataType::Enum(QualifiedName::new(schema, name));
        return Ok(if get::<bool>(row, 11)? {
            DataType::Array(Box::new(named))
        } else {
            named
        });
    }
    let text: &str = get(row, 3)?;
    if let Some(known) = types.get(text) {
        return Ok(known.clone());
    }
    let data_type = canon::data_type(DIALECT, text);
    types.insert(text.to_owned(), data_type.clone());
    Ok(data_type)
}

async fn read_constraints(rows: &mut Pipeline<'_>, tables: &mut HashMap<u32, Table>) -> Result<(), Error> {
    for row in rows.next(queries::CONSTRAINTS).await? {
        let Some(table) = tables.get_mut(&get::<u32>(&row, 0)?) else {
            continue;
        };
        let name: String = get(&row, 1)?;
        let columns: Vec<String> = get(&row, 4)?;
        if !get::<bool>(&row, 13)? {
            table.not_valid.insert(name.clone());
        }
        match get::<String>(&row, 2)?.as_str() {
            "p" => table.primary_key = Some(PrimaryKey { name, columns }),
            "u" => {
                table
                    .uniques
                    .insert(name.clone(), UniqueConstraint { name, columns });
            }
            "f" => {
                let referenced_table = QualifiedName::new(get::<String>(&row, 5)?, get::<String>(&row, 6)?);
                let key = ForeignKey {
                    name: name.clone(),
                    columns,
                    referenced_table,
                    referenced_columns: get(&row, 7)?,
                    on_update: action(&get::<String>(&row, 8)?),
                    on_delete: action(&get::<String>(&row, 9)?),
                    options: ptah_schema::ForeignKeyOptions {
                        match_full: get(&row, 10)?,
                        deferrable: get(&row, 11)?,
                        initially_deferred: get(&row, 12)?,
                    },
                };
                table.foreign_keys.insert(name, key);
            }
            _ => {
                let def: String = get(&row, 3)?;
                let expression = canon::expression(DIALECT, check_body(&def));
                table
                    .checks
                    .insert(name.clone(), CheckConstraint { name, expression });
            }
        }
    }
    Ok(())
}

/// The boolean expression inside `CHECK (…)` as `pg_get_constraintdef` prints it.
fn check_body(def: &str) -> &str {
    let body = def.trim();
    let body = body.strip_suffix(" NOT VALID").unwrap_or(body);
    let body = body.strip_suffix(" NO INHERIT").unwrap_or(body);
    let body = body.strip_prefix("CHECK ").unwrap_or(body).trim();
    match body.strip_prefix('(').and_then(|b| b.strip_suffix(')')) {
        Some(inner) => inner.trim(),
        None => body,
    }
}

/// `pg_constraint.confupdtype`/`confdeltype` codes.
fn action(code: &str) -> ReferentialAction {
    match code {
        "r" => ReferentialAction::Restrict,
        "c" => ReferentialAction::Cascade,
        "n" => ReferentialAction::SetNull,
        "d" => ReferentialAction::SetDefault,
        _ => ReferentialAction::NoAction,
    }
}

async fn read_qualified(client: &Client, namespaces: &[String], schema: &mut Schema) -> Result<(), Error> {
    let mut rows = Pipeline::new(
        client,
        namespaces,
        &[
            partitions::PARTITIONING,
            queries::VIEWS,
            security::ROW_SECURITY,
            security::GRANTS,
            security::POLICIES,
            program::ROUTINES,
            program::TRIGGERS,
            aggregates::AGGREGATES,
            dependencies::UNMODELLED_DEPENDENCIES,
        ],
    );
    partitions::read(&mut rows, schema).await?;
    views::read(&mut rows, schema).await?;
    security::read(&mut rows, schema).await?;
    program::read(&mut rows, schema).await?;
    aggregates::read(&mut rows, schema).await?;
    dependencies::refuse_unmodelled(&mut rows).await
}

/// Sets the transaction's `search_path` (empty: the catalog's deparsers qualify every name).
pub(super) async fn search_path(client: &Client, path: &str) -> Result<(), Error> {
    client
        .execute("SELECT set_config('search_path', $1, true)", &[&path])
        .await
        .map(|_| ())
        .map_err(Error::postgres)
}

/// A query without parameters, sent typed (no prepare round trip).
async fn query(client: &Client, sql: &str) -> Result<Vec<Row>, Error> {
    client.query_typed(sql, &[]).await.map_err(Error::postgres)
}

fn get<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a Row, index: usize) -> Result<T, Error> {
    row.try_get(index).map_err(Error::postgres)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_bodies_lose_the_keyword_and_outer_parentheses() {
        assert_eq!(check_body("CHECK (amount >= 0::numeric)"), "amount >= 0::numeric");
        assert_eq!(
            check_body("CHECK ((a > 0) AND (b > 0)) NOT VALID"),
            "(a > 0) AND (b > 0)"
        );
    }

    #[test]
    fn action_codes_map_to_actions() {
        assert_eq!(action("a"), ReferentialAction::NoAction);
        assert_eq!(action("c"), ReferentialAction::Cascade);
        assert_eq!(action("n"), ReferentialAction::SetNull);
        assert_eq!(action("d"), ReferentialAction::SetDefault);
        assert_eq!(action("r"), ReferentialAction::Restrict);
    }
}
