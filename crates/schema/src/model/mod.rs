//! The schema model: one shape for the desired schema (from `schema.hcl` or SQL DDL) and the live one
//! (from a catalog), so the differ compares like with like.
//!
//! Collections are ordered maps keyed by identity, so equal schemas serialize to equal bytes and
//! fingerprints do not depend on the order objects were declared or read. Column order is kept as
//! written because it is visible in the database.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

mod constraint;
mod domain;
mod index;
mod keyed;
mod mysql;
mod name;
mod partition;
mod program;
mod rename;
mod security;
mod sequence;
mod value;

pub use constraint::{
    CheckConstraint, ForeignKey, ForeignKeyOptions, PrimaryKey, ReferentialAction, UniqueConstraint,
};
pub use domain::Domain;
pub use index::{Index, IndexPart, IndexTarget};
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
pub use rename::{ColumnRename, RenameHints, TableRename};
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
    /// Declared rename hints (`renamed_from`, `-- ptah:renamed-from`); absent from the JSON when
    /// there are none, and never in a live schema.
    #[serde(default, skip_serializing_if = "RenameHints::is_empty")]
    pub renames: RenameHints,
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
    /// PostgreSQL: the CHECK and FOREIGN KEY constraints the server has not validated (`NOT
    /// VALID`: enforced on new rows, not proven on old ones), by name. Only a live table has any:
    /// a document declares constraints that hold.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub not_valid: BTreeSet<String>,
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
            not_valid: BTreeSet::new(),
        }
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column called `name`, looked for first at `position`: two readings of one table keep
    /// its columns in one order, so a walk over one table's columns finds the other's in one
    /// step instead of a scan per column.
    pub fn column_near(&self, position: usize, name: &str) -> Option<&Column> {
        match self.columns.get(position) {
            Some(c) if c.name == name => Some(c),
            _ => self.column(name),
        }
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
