//! The schema model: one shape for the desired schema (from `schema.hcl` or SQL DDL) and the live one
//! (from a catalog), so the differ compares like with like.
//!
//! Collections are ordered maps keyed by identity, so equal schemas serialize to equal bytes and
//! fingerprints do not depend on the order objects were declared or read. Column order is kept as
//! written because it is visible in the database.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

mod domain;
mod keyed;
mod mysql;
mod name;
mod partition;
mod program;
mod security;
mod sequence;
mod value;

pub use domain::Domain;
pub use keyed::Keyed;
pub use mysql::{Event, StoredRoutine, StoredRoutineKind, ViewOptions};
pub use name::QualifiedName;
pub use partition::{
    PartitionOf, inherit_partition_columns, is_partition_bound, is_partition_key, partition_bound,
    partition_key,
};
pub use program::{
    AGGREGATE_OPTIONS, Parallel, Routine, RoutineKind, RoutineOptions, Trigger, View, Volatility,
};
pub use security::{Grant, PUBLIC, Policy, PolicyCommand, Privilege, TableSecurity};
pub use sequence::{IdentityOptions, Sequence, SequenceOptions, SequenceOwner, SequenceType};
pub use value::{DefaultValue, Generated, Literal};

/// The SQL family a schema is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// PostgreSQL.
    Postgres,
    /// MySQL and MariaDB.
    Mysql,
}

/// A whole database's managed schema.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Schema {
    /// PostgreSQL schemas (namespaces) the document declares; empty on MySQL.
    pub namespaces: BTreeSet<String>,
    /// PostgreSQL extensions; created when missing, never dropped.
    pub extensions: BTreeMap<String, Extension>,
    /// PostgreSQL named enum types; MySQL enums live inline in [`DataType::InlineEnum`].
    #[serde(with = "keyed")]
    pub enums: BTreeMap<QualifiedName, EnumType>,
    /// Tables by name.
    #[serde(with = "keyed")]
    pub tables: BTreeMap<QualifiedName, Table>,
    /// PostgreSQL domains by name.
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub domains: BTreeMap<QualifiedName, Domain>,
    /// Views and materialized views by name. Absent from the JSON when empty, so the fingerprint of
    /// a schema without them is what it was before they were modelled.
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub views: BTreeMap<QualifiedName, View>,
    /// PostgreSQL functions and procedures, keyed by [`Routine::key`] (overloads are distinct).
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub routines: BTreeMap<QualifiedName, Routine>,
    /// Triggers, keyed by [`Trigger::key`].
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub triggers: BTreeMap<QualifiedName, Trigger>,
    /// PostgreSQL sequences that are not a serial column's implicit one.
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub sequences: BTreeMap<QualifiedName, Sequence>,
    /// MySQL: the options of views that do not keep the defaults, by view name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub view_options: BTreeMap<String, ViewOptions>,
    /// MySQL stored functions and procedures, keyed by [`StoredRoutine::key`].
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub stored_routines: BTreeMap<QualifiedName, StoredRoutine>,
    /// MySQL scheduled events by name.
    #[serde(default, with = "keyed", skip_serializing_if = "BTreeMap::is_empty")]
    pub events: BTreeMap<QualifiedName, Event>,
}

/// The one undeclared schema besides `public` an extension may be installed into (`plpgsql`
/// lives there, and older pg_dump versions write `WITH SCHEMA pg_catalog`).
pub const EXTENSION_CATALOG: &str = "pg_catalog";

/// A PostgreSQL extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extension {
    /// The extension name.
    pub name: String,
    /// The schema it is installed into, when pinned.
    pub schema: Option<String>,
    /// The version, when pinned.
    pub version: Option<String>,
}

/// A PostgreSQL `CREATE TYPE … AS ENUM`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnumType {
    /// The type's name.
    pub name: QualifiedName,
    /// The labels in their declared order (order is meaningful for comparisons in SQL).
    pub values: Vec<String>,
}

/// A table with everything that hangs off it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// The table's name.
    pub name: QualifiedName,
    /// Columns in table order.
    pub columns: Vec<Column>,
    /// The primary key, if any.
    pub primary_key: Option<PrimaryKey>,
    /// UNIQUE constraints by name.
    pub uniques: BTreeMap<String, UniqueConstraint>,
    /// CHECK constraints by name.
    pub checks: BTreeMap<String, CheckConstraint>,
    /// Foreign keys by name.
    pub foreign_keys: BTreeMap<String, ForeignKey>,
    /// Indexes by name (not the ones that back a PRIMARY KEY or UNIQUE constraint).
    pub indexes: BTreeMap<String, Index>,
    /// The table comment.
    pub comment: Option<String>,
    /// PostgreSQL: comments on the table's indexes, by index name. Kept apart from [`Index`], so a
    /// new comment is one `COMMENT ON INDEX`, never a rebuilt index.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub index_comments: BTreeMap<String, String>,
    /// MySQL: the table's default character set. Compared only when the document declares it
    /// (undeclared, a new table takes the database's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
    /// MySQL: the table's default collation, compared only when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// Reference rows the table owns, when declared.
    pub rows: Option<ReferenceRows>,
    /// PostgreSQL row-level security, policies and grants; absent from the JSON when empty.
    #[serde(default, skip_serializing_if = "TableSecurity::is_empty")]
    pub security: TableSecurity,
    /// PostgreSQL: the partition key of a partitioned table (`RANGE (created_at)`), as
    /// `pg_get_partkeydef` prints it. Absent from the JSON when unset, like every partitioning
    /// field, so the fingerprints of schemas without partitioning are what they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_by: Option<String>,
    /// PostgreSQL: the parent and bound of a partition, whose columns are its parent's ([`PartitionOf`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<PartitionOf>,
}

impl Table {
    /// An empty table called `name`.
    pub fn new(name: QualifiedName) -> Self {
        Table {
            name,
            columns: Vec::new(),
            primary_key: None,
            uniques: BTreeMap::new(),
            checks: BTreeMap::new(),
            foreign_keys: BTreeMap::new(),
            indexes: BTreeMap::new(),
            comment: None,
            index_comments: BTreeMap::new(),
            charset: None,
            collation: None,
            rows: None,
            security: TableSecurity::default(),
            partition_by: None,
            partition_of: None,
        }
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// A column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// The column name.
    pub name: String,
    /// Its canonical type.
    pub data_type: DataType,
    /// Whether NULL is allowed.
    pub nullable: bool,
    /// The default, if any.
    pub default: Option<DefaultValue>,
    /// A PostgreSQL identity (`GENERATED … AS IDENTITY`; serial columns are read as identities' cousins
    /// through their `nextval` default and kept as [`DefaultValue::Expression`]).
    pub identity: Option<Identity>,
    /// A PostgreSQL identity's sequence options where they are not its type's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_options: Option<IdentityOptions>,
    /// MySQL `AUTO_INCREMENT`.
    pub auto_increment: bool,
    /// The column comment.
    pub comment: Option<String>,
    /// MySQL: the column's character set where it is not the table's. Compared only when
    /// declared (a collation names its character set anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
    /// MySQL: the column's collation where it is not the table's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// A generated column's expression (`GENERATED ALWAYS AS (…) STORED|VIRTUAL`); such a column
    /// has no default. Absent from the JSON when `None`, so older fingerprints stay valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<Generated>,
}

impl DataType {
    /// The sequence type of an identity over this type (`smallint`, `integer`, `bigint`).
    pub fn sequence_type(&self) -> Option<SequenceType> {
        match self {
            DataType::Integer {
                bits: 16,
                unsigned: false,
            } => Some(SequenceType::Smallint),
            DataType::Integer {
                bits: 32,
                unsigned: false,
            } => Some(SequenceType::Integer),
            DataType::Integer {
                bits: 64,
                unsigned: false,
            } => Some(SequenceType::Bigint),
            _ => None,
        }
    }

    /// Whether a column of this type has a collation (and on MySQL a character set).
    pub fn is_collatable(&self) -> bool {
        match self {
            DataType::Char(_)
            | DataType::Varchar(_)
            | DataType::Text
            | DataType::InlineEnum(_)
            | DataType::InlineSet(_) => true,
            DataType::Array(inner) => inner.is_collatable(),
            DataType::Other { name, .. } => {
                matches!(name.as_str(), "tinytext" | "mediumtext" | "longtext" | "citext")
            }
            _ => false,
        }
    }
}

/// How a PostgreSQL identity column generates values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    /// `GENERATED ALWAYS AS IDENTITY`.
    Always,
    /// `GENERATED BY DEFAULT AS IDENTITY`.
    ByDefault,
}

/// A canonical, parameterized data type. Aliases are folded on reading (`int4` is `Int32`,
/// `character varying(255)` is `Varchar(Some(255))`), so comparing types is comparing values.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    /// Boolean (MySQL `tinyint(1)` / `bool`).
    Boolean,
    /// Integers by width in bits (8, 16, 24, 32, 64), signed or not (unsigned is MySQL only).
    Integer {
        /// 8, 16, 24, 32 or 64.
        bits: u8,
        /// MySQL `UNSIGNED`.
        unsigned: bool,
    },
    /// Exact decimal.
    Decimal {
        /// Total digits, when given.
        precision: Option<u32>,
        /// Digits after the point, when given.
        scale: Option<u32>,
    },
    /// 4-byte float (`real`, MySQL `float`).
    Float32,
    /// 8-byte float (`double precision`, MySQL `double`).
    Float64,
    /// Fixed-length text.
    Char(Option<u32>),
    /// Variable-length text with an optional limit.
    Varchar(Option<u32>),
    /// Unbounded text (MySQL: `text`; the tiny/medium/long variants are [`DataType::Other`]).
    Text,
    /// Binary data (`bytea`, MySQL `blob`).
    Binary,
    /// Calendar date.
    Date,
    /// Time of day.
    Time {
        /// Fractional-second digits, when given.
        precision: Option<u32>,
        /// PostgreSQL `with time zone`.
        with_time_zone: bool,
    },
    /// Timestamp (MySQL `datetime` is `Timestamp` with `mysql_datetime`).
    Timestamp {
        /// Fractional-second digits, when given.
        precision: Option<u32>,
        /// PostgreSQL `timestamptz`.
        with_time_zone: bool,
        /// MySQL `DATETIME` rather than `TIMESTAMP`.
        mysql_datetime: bool,
    },
    /// UUID.
    Uuid,
    /// JSON.
    Json,
    /// PostgreSQL `jsonb`.
    Jsonb,
    /// A PostgreSQL named enum type.
    Enum(QualifiedName),
    /// A MySQL inline `ENUM('a','b')`.
    InlineEnum(Vec<String>),
    /// A MySQL inline `SET('a','b')`: any combination of its members.
    InlineSet(Vec<String>),
    /// A PostgreSQL array of another type.
    Array(Box<DataType>),
    /// Any other type, by its lowercase name and parameters as the catalog spells them.
    Other {
        /// The lowercase type name.
        name: String,
        /// Its parameters, as written.
        params: Vec<String>,
    },
}

/// A PRIMARY KEY constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrimaryKey {
    /// The constraint name (PostgreSQL `<table>_pkey` by default; MySQL always `PRIMARY`).
    pub name: String,
    /// The key columns in order.
    pub columns: Vec<String>,
}

/// A UNIQUE constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniqueConstraint {
    /// The constraint name.
    pub name: String,
    /// The columns in order.
    pub columns: Vec<String>,
}

/// A CHECK constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckConstraint {
    /// The constraint name.
    pub name: String,
    /// The boolean expression, normalized.
    pub expression: String,
}

/// What a foreign key does when the referenced row changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferentialAction {
    /// `NO ACTION` (the default).
    #[default]
    NoAction,
    /// `RESTRICT`.
    Restrict,
    /// `CASCADE`.
    Cascade,
    /// `SET NULL`.
    SetNull,
    /// `SET DEFAULT`.
    SetDefault,
}

/// A (possibly composite) FOREIGN KEY.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    /// The constraint name.
    pub name: String,
    /// Referencing columns, in order.
    pub columns: Vec<String>,
    /// The referenced table.
    pub referenced_table: QualifiedName,
    /// Referenced columns, in the same order.
    pub referenced_columns: Vec<String>,
    /// ON DELETE.
    pub on_delete: ReferentialAction,
    /// ON UPDATE.
    pub on_update: ReferentialAction,
    /// PostgreSQL `MATCH FULL` and deferral; absent from the JSON when all are defaults.
    #[serde(default, skip_serializing_if = "ForeignKeyOptions::is_default")]
    pub options: ForeignKeyOptions,
}

/// A PostgreSQL foreign key's options other than its actions, as `pg_constraint` keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ForeignKeyOptions {
    /// `MATCH FULL` (`confmatchtype = 'f'`): a row with some key columns NULL must have all NULL.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub match_full: bool,
    /// `DEFERRABLE` (`condeferrable`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deferrable: bool,
    /// `INITIALLY DEFERRED` (`condeferred`); only a deferrable key has it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub initially_deferred: bool,
}

impl ForeignKeyOptions {
    /// Whether every option is the default (`MATCH SIMPLE NOT DEFERRABLE`).
    pub fn is_default(&self) -> bool {
        *self == ForeignKeyOptions::default()
    }
}

/// An index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// The index name.
    pub name: String,
    /// Whether it is UNIQUE.
    pub unique: bool,
    /// The indexed parts in order.
    pub parts: Vec<IndexPart>,
    /// PostgreSQL partial-index predicate, normalized.
    pub predicate: Option<String>,
    /// The access method when not the default (`btree`), e.g. `gin`, `hash`.
    pub method: Option<String>,
    /// PostgreSQL `INCLUDE (…)`: columns stored in the index but not part of its key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// PostgreSQL 15 `NULLS NOT DISTINCT` on a unique index.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nulls_not_distinct: bool,
    /// PostgreSQL storage parameters (`WITH (fillfactor=70)`) as `pg_class.reloptions` holds
    /// them, `name=value`, sorted by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<String>,
}

/// One element of an index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexPart {
    /// A column or an expression.
    pub target: IndexTarget,
    /// DESC order.
    pub descending: bool,
    /// MySQL prefix length in characters.
    pub prefix_length: Option<u32>,
    /// PostgreSQL operator class when not the type's default (`text_pattern_ops`); qualified
    /// when it lives outside `pg_catalog`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opclass: Option<String>,
    /// PostgreSQL `NULLS FIRST` (`true`) or `NULLS LAST` (`false`), only where it is not the
    /// default for the direction (last ascending, first descending): one spelling per order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nulls_first: Option<bool>,
}

impl IndexPart {
    /// The explicit nulls order a part needs, from what was written: `None` where it is the
    /// direction's default, so `ASC NULLS LAST` and `ASC` read alike.
    pub fn nulls_order(descending: bool, nulls_first: Option<bool>) -> Option<bool> {
        nulls_first.filter(|first| *first != descending)
    }
}

/// What an index part indexes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexTarget {
    /// A column by name.
    Column(String),
    /// An expression, normalized.
    Expression(String),
}

/// Rows a table owns, identified by key columns. Values reach plans but never status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReferenceRows {
    /// The columns that identify a row (usually the primary key).
    pub key: Vec<String>,
    /// The rows, each a map from column to value, ordered by key.
    pub rows: Vec<BTreeMap<String, Literal>>,
}

impl Keyed for Table {
    fn key(&self) -> QualifiedName {
        self.name.clone()
    }
}

impl Keyed for EnumType {
    fn key(&self) -> QualifiedName {
        self.name.clone()
    }
}
