//! The names a server gives constraints and indexes declared without one, so a document read
//! here names them exactly as the catalog will report them. Both readers use [`Namer`].
//!
//! PostgreSQL (`makeObjectName` / `ChooseRelationName` / `ChooseConstraintName`):
//! `<table>_pkey`, `<table>_<cols>_key`, `<table>_<cols>_fkey`, `<table>_<col>_check` when the
//! expression mentions exactly one column (else `<table>_check`), `<table>_<cols>_idx` (an
//! expression part counts as `expr`), serial sequences `<table>_<col>_seq`. Column names are
//! joined with `_` (at most 63 bytes); the whole name is cut to 63 bytes by shortening the longer
//! of table and column part first; on a clash with a name already used in the schema the label
//! gets a number (`_key1`, `_key2`, …).
//!
//! MySQL/MariaDB: the primary key is `PRIMARY`; an unnamed unique or index is named after its
//! first column (`<col>`, then `<col>_2`, `<col>_3` … on a clash within the table); foreign keys
//! are `<table>_ibfk_<n>` counting from 1 per table; a CHECK written on a column is named after
//! the column (MariaDB), a table CHECK is `CONSTRAINT_<n>` counting from 1 per table.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Dialect, QualifiedName};

/// PostgreSQL's identifier limit in bytes (`NAMEDATALEN - 1`).
pub const PG_MAX_IDENTIFIER: usize = 63;

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub fn clip_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// PostgreSQL's `makeObjectName(name1, name2, label)`: `name1[_name2][_label]` within 63 bytes.
pub fn pg_object_name(name1: &str, name2: Option<&str>, label: &str) -> String {
    let overhead = if label.is_empty() { 0 } else { label.len() + 1 } + usize::from(name2.is_some());
    let avail = PG_MAX_IDENTIFIER.saturating_sub(overhead);
    let mut n1 = name1.len();
    let mut n2 = name2.map_or(0, str::len);
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    let mut out = clip_bytes(name1, n1).to_owned();
    if let Some(name2) = name2 {
        out.push('_');
        out.push_str(clip_bytes(name2, n2));
    }
    if !label.is_empty() {
        out.push('_');
        out.push_str(label);
    }
    out
}

/// PostgreSQL's column-name addition: names joined by `_`, stopping at 63 bytes.
pub fn pg_column_addition<S: AsRef<str>>(columns: &[S]) -> String {
    let mut out = String::new();
    for c in columns {
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(c.as_ref());
        if out.len() >= PG_MAX_IDENTIFIER {
            break;
        }
    }
    clip_bytes(&out, PG_MAX_IDENTIFIER).to_owned()
}

/// Hands out default names the way the server would, remembering names already used.
#[derive(Debug, Clone)]
pub struct Namer {
    dialect: Dialect,
    /// PostgreSQL: names per schema. MySQL: index names per table (keyed by the table's name).
    taken: BTreeMap<String, BTreeSet<String>>,
    /// MySQL constraint names per database (one database: one set).
    mysql_constraints: BTreeSet<String>,
    fk_counter: BTreeMap<QualifiedName, u32>,
    check_counter: BTreeMap<QualifiedName, u32>,
}

impl Namer {
    /// A namer for `dialect` with nothing taken.
    pub fn new(dialect: Dialect) -> Self {
        Namer {
            dialect,
            taken: BTreeMap::new(),
            mysql_constraints: BTreeSet::new(),
            fk_counter: BTreeMap::new(),
            check_counter: BTreeMap::new(),
        }
    }

    fn scope(&self, table: &QualifiedName) -> String {
        match self.dialect {
            Dialect::Postgres => table.schema.clone(),
            Dialect::Mysql => table.name.clone(),
        }
    }

    fn is_taken(&self, table: &QualifiedName, name: &str) -> bool {
        self.taken
            .get(&self.scope(table))
            .is_some_and(|s| s.contains(name))
    }

    /// Records an index or constraint name chosen by the author.
    pub fn claim(&mut self, table: &QualifiedName, name: &str) {
        let scope = self.scope(table);
        self.taken.entry(scope).or_default().insert(name.to_owned());
    }

    /// Records a MySQL foreign key or check name chosen by the author.
    pub fn claim_constraint(&mut self, table: &QualifiedName, name: &str) {
        match self.dialect {
            Dialect::Postgres => self.claim(table, name),
            Dialect::Mysql => {
                self.mysql_constraints.insert(name.to_owned());
                self.claim(table, name);
            }
        }
    }

    fn pg_choose(&mut self, table: &QualifiedName, name2: Option<&str>, label: &str) -> String {
        let mut candidate = pg_object_name(&table.name, name2, label);
        let mut n = 0u32;
        while self.is_taken(table, &candidate) {
            n += 1;
            candidate = pg_object_name(&table.name, name2, &format!("{label}{n}"));
        }
        self.claim(table, &candidate);
        candidate
    }

    fn mysql_index(&mut self, table: &QualifiedName, first: &str) -> String {
        let mut candidate = first.to_owned();
        let mut n = 1u32;
        while self.is_taken(table, &candidate) || candidate.eq_ignore_ascii_case("PRIMARY") {
            n += 1;
            candidate = format!("{first}_{n}");
        }
        self.claim(table, &candidate);
        candidate
    }

    /// The primary key's name.
    pub fn primary_key(&mut self, table: &QualifiedName) -> String {
        match self.dialect {
            Dialect::Postgres => self.pg_choose(table, None, "pkey"),
            Dialect::Mysql => "PRIMARY".to_owned(),
        }
    }

    /// An unnamed UNIQUE constraint's name.
    pub fn unique<S: AsRef<str>>(&mut self, table: &QualifiedName, columns: &[S]) -> String {
        match self.dialect {
            Dialect::Postgres => {
                let addition = pg_column_addition(columns);
                self.pg_choose(table, Some(&addition), "key")
            }
            Dialect::Mysql => {
                let first = columns.first().map_or("", AsRef::as_ref).to_owned();
                self.mysql_index(table, &first)
            }
        }
    }

    /// An unnamed index's name; `columns` holds `expr` for expression parts on PostgreSQL.
    pub fn index<S: AsRef<str>>(&mut self, table: &QualifiedName, columns: &[S]) -> String {
        match self.dialect {
            Dialect::Postgres => {
                let addition = pg_column_addition(columns);
                self.pg_choose(table, Some(&addition), "idx")
            }
            Dialect::Mysql => {
                let first = columns.first().map_or("", AsRef::as_ref).to_owned();
                self.mysql_index(table, &first)
            }
        }
    }

    /// An unnamed foreign key's name.
    pub fn foreign_key<S: AsRef<str>>(&mut self, table: &QualifiedName, columns: &[S]) -> String {
        match self.dialect {
            Dialect::Postgres => {
                let addition = pg_column_addition(columns);
                self.pg_choose(table, Some(&addition), "fkey")
            }
            Dialect::Mysql => loop {
                let n = self.fk_counter.entry(table.clone()).or_insert(0);
                *n += 1;
                let candidate = format!("{}_ibfk_{n}", table.name);
                if self.mysql_constraints.insert(candidate.clone()) {
                    break candidate;
                }
            },
        }
    }

    /// An unnamed CHECK's name. `column` is the column a column-level check is written on (MySQL)
    /// or the only column the expression mentions (PostgreSQL).
    pub fn check(&mut self, table: &QualifiedName, column: Option<&str>, column_level: bool) -> String {
        match self.dialect {
            Dialect::Postgres => self.pg_choose(table, column, "check"),
            Dialect::Mysql => match column {
                Some(c) if column_level && !self.is_taken(table, c) => {
                    self.claim(table, c);
                    c.to_owned()
                }
                _ => loop {
                    let n = self.check_counter.entry(table.clone()).or_insert(0);
                    *n += 1;
                    let candidate = format!("CONSTRAINT_{n}");
                    if !self.is_taken(table, &candidate) {
                        self.claim(table, &candidate);
                        break candidate;
                    }
                },
            },
        }
    }

    /// PostgreSQL's sequence for a serial column (`<table>_<col>_seq`), claimed.
    pub fn serial_sequence(&mut self, table: &QualifiedName, column: &str) -> String {
        self.pg_choose(table, Some(column), "seq")
    }
}

/// The `nextval` default a PostgreSQL serial column reads back with, normalized: the sequence is
/// schema-qualified unless it lives in `public` (the default `search_path`).
pub fn serial_default(table: &QualifiedName, sequence: &str) -> String {
    let seq = crate::types::quote_pg_ident(sequence);
    if table.schema.is_empty() || table.schema == "public" {
        format!("nextval('{}')", seq.replace('\'', "''"))
    } else {
        let schema = crate::types::quote_pg_ident(&table.schema);
        format!("nextval('{schema}.{}')", seq.replace('\'', "''"))
    }
}

/// The name of the check that proves a column NOT NULL before `SET NOT NULL`: reserved, so the
/// differ never reads one left behind as a constraint to drop ([`is_not_null_check`]).
pub const NOT_NULL_CHECK_PREFIX: &str = "ptah_nn_";

/// Whether a live CHECK constraint is such a helper.
pub fn is_not_null_check(name: &str) -> bool {
    name.starts_with(NOT_NULL_CHECK_PREFIX)
}

/// The helper check's name for `column`, within PostgreSQL's 63 bytes.
pub fn not_null_check(column: &str) -> String {
    let mut name = format!("{NOT_NULL_CHECK_PREFIX}{column}");
    while name.len() > 63 {
        name.pop();
    }
    name
}
