//! PostgreSQL declarative partitioning, read from the statements' tokens (sqlparser parses none of
//! it): `CREATE TABLE … (…) PARTITION BY …`, `CREATE TABLE p PARTITION OF parent [(constraints)]
//! FOR VALUES …|DEFAULT [PARTITION BY …]`, `ALTER TABLE [ONLY] parent ATTACH PARTITION p FOR
//! VALUES …|DEFAULT`, `CREATE INDEX … ON ONLY parent …` and `ALTER INDEX parent_idx ATTACH
//! PARTITION p_idx`, as `pg_dump` (15) writes them and as a person does.
//!
//! `pg_dump` writes a partition as a plain `CREATE TABLE` with its columns and inherited checks,
//! attaches it afterwards, and gives it its copies of the parent's indexes and keys, each attached
//! to the parent's (`ALTER INDEX … ATTACH PARTITION`). The model holds none of what a partition
//! inherits (see [`crate::model::PartitionOf`]): an attached index or key is taken off the
//! partition, and [`settle`] gives each partition its parent's columns and takes off the checks
//! it has from its parent.

use sqlparser::ast::Statement;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::model::{
    PartitionOf, QualifiedName, Schema, Table, inherit_partition_columns, is_partition_bound,
    is_partition_key, partition_bound, partition_key,
};
use crate::normalize::sql_dialect;

use super::super::{Location, ReadError};
use super::Reader;
use super::tokens::{keyword, object_name, slice};

/// A partitioning statement, by its form.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// `CREATE TABLE … PARTITION BY …`: the index of `PARTITION`.
    Partitioned(usize),
    /// `CREATE TABLE name PARTITION OF …`: the index of the name.
    PartitionOf(usize),
    /// `ALTER TABLE [ONLY] parent ATTACH PARTITION …`.
    Attach,
    /// `ALTER TABLE … DETACH PARTITION …`.
    Detach,
    /// `ALTER INDEX parent ATTACH PARTITION child`.
    AttachIndex,
    /// `CREATE [UNIQUE] INDEX … ON ONLY …`: the index of `ONLY`.
    IndexOnOnly(usize),
}

/// Words between `CREATE` and `TABLE` that the reader passes on (sqlparser refuses the others).
const TABLE_PREFIXES: &[&str] = &["TEMPORARY", "TEMP", "UNLOGGED", "GLOBAL", "LOCAL"];

/// Which partitioning statement `tokens` is, if any.
pub(super) fn form(tokens: &[TokenWithSpan]) -> Option<Form> {
    let w = |i: usize| keyword(tokens.get(i));
    let at_depth_zero = |word: &str, next: &str| {
        let mut depth = 0usize;
        tokens.iter().enumerate().find_map(|(i, t)| {
            match &t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth = depth.saturating_sub(1),
                _ => {}
            }
            (depth == 0 && w(i).as_deref() == Some(word) && w(i + 1).as_deref() == Some(next)).then_some(i)
        })
    };
    match w(0).as_deref()? {
        "CREATE" => {
            let mut i = 1;
            while w(i).is_some_and(|k| TABLE_PREFIXES.contains(&k.as_str())) {
                i += 1;
            }
            match w(i).as_deref() {
                Some("TABLE") => {
                    i += 1;
                    if w(i).as_deref() == Some("IF") {
                        i += 3;
                    }
                    let name = i;
                    object_name(tokens, &mut i);
                    if w(i).as_deref() == Some("PARTITION") && w(i + 1).as_deref() == Some("OF") {
                        Some(Form::PartitionOf(name))
                    } else {
                        at_depth_zero("PARTITION", "BY").map(Form::Partitioned)
                    }
                }
                Some("INDEX" | "UNIQUE") => at_depth_zero("ON", "ONLY").map(|on| Form::IndexOnOnly(on + 1)),
                _ => None,
            }
        }
        "ALTER" => match w(1).as_deref()? {
            "TABLE" if at_depth_zero("ATTACH", "PARTITION").is_some() => Some(Form::Attach),
            "TABLE" if at_depth_zero("DETACH", "PARTITION").is_some() => Some(Form::Detach),
            "INDEX" if at_depth_zero("ATTACH", "PARTITION").is_some() => Some(Form::AttachIndex),
            _ => None,
        },
        _ => None,
    }
}

/// Gives each partition its parent's columns and takes off the checks it inherits (a dump writes
/// them into the partition's `CREATE TABLE`; PostgreSQL merges them on `ATTACH`).
pub(super) fn settle(schema: &mut Schema) {
    inherit_partition_columns(&mut schema.tables);
    let inherited: Vec<(QualifiedName, Vec<String>)> = schema
        .tables
        .values()
        .filter_map(|t| {
            let parent = schema.tables.get(&t.partition_of.as_ref()?.parent)?;
            let names = t
                .checks
                .values()
                .filter(|c| parent.checks.get(&c.name) == Some(c))
                .map(|c| c.name.clone())
                .collect();
            Some((t.name.clone(), names))
        })
        .collect();
    for (table, names) in inherited {
        if let Some(t) = schema.tables.get_mut(&table) {
            for n in names {
                t.checks.remove(&n);
            }
        }
    }
}

impl Reader {
    /// Reads one partitioning statement.
    pub(super) fn partition_statement(
        &mut self,
        form: Form,
        text: &str,
        mut tokens: Vec<TokenWithSpan>,
        at: Location,
    ) -> Result<(), ReadError> {
        match form {
            Form::Partitioned(split) => {
                let key = self.key(&after_by(text, &tokens, split), &at)?;
                let name_at = tokens.iter().position(|t| keyword(Some(t)).as_deref() == Some("TABLE"));
                let mut i = name_at.map_or(0, |i| i + 1);
                if keyword(tokens.get(i)).as_deref() == Some("IF") {
                    i += 3;
                }
                let name = self.qualified(&object_name(&tokens, &mut i), &at)?;
                let existed = self.schema.tables.contains_key(&name);
                tokens.truncate(split);
                self.parse_tokens(tokens, at.clone())?;
                if !existed && let Some(t) = self.schema.tables.get_mut(&name) {
                    t.partition_by = Some(key);
                }
                Ok(())
            }
            Form::PartitionOf(name_at) => self.create_partition(text, &tokens, name_at, at),
            Form::Attach => self.attach_partition(text, &tokens, at),
            Form::Detach => Err(self.unsupported(
                &at,
                "ALTER TABLE … DETACH PARTITION (a document declares its partitions; leave the table out of PARTITION OF instead)",
            )),
            Form::AttachIndex => self.attach_index(&tokens, at),
            Form::IndexOnOnly(only) => {
                // `ON ONLY` keeps the index off the partitions until theirs are attached; the
                // model's parent index is the partitioned index, whichever way it was built.
                tokens.remove(only);
                self.parse_tokens(tokens, at)
            }
        }
    }

    fn create_partition(
        &mut self,
        text: &str,
        tokens: &[TokenWithSpan],
        name_at: usize,
        at: Location,
    ) -> Result<(), ReadError> {
        let mut i = name_at;
        let name = self.qualified(&object_name(tokens, &mut i), &at)?;
        self.check_namespace(&name, &at)?;
        let if_not_exists = keyword(tokens.get(name_at.saturating_sub(1))).as_deref() == Some("EXISTS");
        if self.schema.tables.contains_key(&name) {
            return if if_not_exists {
                Ok(())
            } else {
                Err(ReadError::Duplicate {
                    at,
                    what: format!("table {name}"),
                })
            };
        }
        i += 2;
        let parent = self.qualified(&object_name(tokens, &mut i), &at)?;
        let columns = self.partitioned(&parent, &at)?.columns.clone();
        let mut constraints = None;
        if tokens.get(i).map(|t| &t.token) == Some(&Token::LParen) {
            let close = closing(tokens, i).ok_or_else(|| self.unsupported(&at, "unbalanced parentheses"))?;
            constraints = Some(slice(text, &tokens[i + 1..close]));
            i = close + 1;
        }
        let split = partition_by_at(tokens, i);
        let bound = partition_bound(&slice(text, &tokens[i..split]));
        if !is_partition_bound(&bound) {
            return Err(self.unsupported(
                &at,
                format!("partition bound {bound} (only the bound is modelled)"),
            ));
        }
        let mut table = Table::new(name.clone());
        table.columns = columns;
        table.partition_of = Some(PartitionOf { parent, bound });
        if split < tokens.len() {
            table.partition_by = Some(self.key(&after_by(text, tokens, split), &at)?);
        }
        self.schema.tables.insert(name.clone(), table);
        if let Some(list) = constraints {
            self.partition_constraints(&name, &list, &at)?;
        }
        Ok(())
    }

    /// The `(…)` of `PARTITION OF`: table constraints only (a column's own options there would
    /// make its columns differ from the parent's, which the model does not hold).
    fn partition_constraints(
        &mut self,
        table: &QualifiedName,
        list: &str,
        at: &Location,
    ) -> Result<(), ReadError> {
        let sql = sql_dialect(self.dialect);
        let refuse = || {
            self.unsupported(
                at,
                format!(
                    "({list}) in CREATE TABLE {table} PARTITION OF (only table constraints are read there: a partition's columns are its parent's)"
                ),
            )
        };
        let parsed = Parser::new(sql.as_ref())
            .with_recursion_limit(super::MAX_NESTING)
            .try_with_sql(&format!("CREATE TABLE t ({list})"))
            .and_then(|mut p| p.parse_statement())
            .map_err(|_| refuse())?;
        let Statement::CreateTable(create) = parsed else {
            return Err(refuse());
        };
        if !create.columns.is_empty() {
            return Err(refuse());
        }
        for c in create.constraints {
            self.table_constraint(table, c, at)?;
        }
        Ok(())
    }

    fn attach_partition(
        &mut self,
        text: &str,
        tokens: &[TokenWithSpan],
        at: Location,
    ) -> Result<(), ReadError> {
        let mut i = 2;
        if keyword(tokens.get(i)).as_deref() == Some("ONLY") {
            i += 1;
        }
        let parent = self.qualified(&object_name(tokens, &mut i), &at)?;
        if keyword(tokens.get(i)).as_deref() != Some("ATTACH") {
            return Err(self.unsupported(&at, "ATTACH PARTITION with other ALTER TABLE actions"));
        }
        i += 2;
        let child = self.qualified(&object_name(tokens, &mut i), &at)?;
        let bound = partition_bound(&slice(text, &tokens[i..]));
        if !is_partition_bound(&bound) {
            return Err(self.unsupported(
                &at,
                format!("partition bound {bound} (only the bound is modelled)"),
            ));
        }
        self.partitioned(&parent, &at)?;
        let table = self.table_mut(&child, &at)?;
        if let Some(of) = &table.partition_of {
            return Err(ReadError::Duplicate {
                at,
                what: format!("partition {child} (already of {})", of.parent),
            });
        }
        table.partition_of = Some(PartitionOf { parent, bound });
        Ok(())
    }

    /// `ALTER INDEX parent ATTACH PARTITION child`: the child index (or the key it backs) is the
    /// partition's copy of the parent's, which the server makes; the model does not hold it.
    fn attach_index(&mut self, tokens: &[TokenWithSpan], at: Location) -> Result<(), ReadError> {
        let mut i = 2;
        let parent = self.qualified(&object_name(tokens, &mut i), &at)?;
        if keyword(tokens.get(i)).as_deref() != Some("ATTACH") {
            return Err(self.unsupported(&at, "ALTER INDEX … ATTACH PARTITION with other actions"));
        }
        i += 2;
        let child = self.qualified(&object_name(tokens, &mut i), &at)?;
        if i != tokens.len() {
            return Err(self.unsupported(&at, "ALTER INDEX … ATTACH PARTITION"));
        }
        // A sub-partition's index attaches to its parent's, itself attached (and taken off) before.
        if !self.attached_indexes.contains(&parent)
            && !self.schema.tables.values().any(|t| holds_index(t, &parent))
        {
            return Err(ReadError::BadReference {
                at,
                what: format!("index {parent}"),
            });
        }
        let holder = self.schema.tables.values_mut().find(|t| holds_index(t, &child));
        let Some(table) = holder else {
            return Err(ReadError::BadReference {
                at,
                what: format!("index {child}"),
            });
        };
        table.indexes.remove(&child.name);
        self.attached_indexes.insert(child.clone());
        table.uniques.remove(&child.name);
        if table.primary_key.as_ref().is_some_and(|p| p.name == child.name) {
            table.primary_key = None;
        }
        Ok(())
    }

    /// A partition key as written after `PARTITION BY`, canonical, or why it is refused.
    fn key(&self, text: &str, at: &Location) -> Result<String, ReadError> {
        let key = partition_key(text);
        if is_partition_key(&key) {
            Ok(key)
        } else {
            Err(self.unsupported(
                at,
                format!("PARTITION BY {key} (only RANGE|LIST|HASH (…) is modelled; storage options, USING and TABLESPACE are not)"),
            ))
        }
    }

    /// The partitioned table `parent`, or why a partition cannot name it.
    fn partitioned(&self, parent: &QualifiedName, at: &Location) -> Result<&Table, ReadError> {
        let table = self
            .schema
            .tables
            .get(parent)
            .ok_or_else(|| ReadError::BadReference {
                at: at.clone(),
                what: format!("table {parent}"),
            })?;
        if table.partition_by.is_none() {
            return Err(self.unsupported(at, format!("a partition of {parent}, which is not partitioned")));
        }
        Ok(table)
    }
}

/// Whether `table` holds the index (or the key index) called `index`, in its schema.
fn holds_index(table: &Table, index: &QualifiedName) -> bool {
    table.name.schema == index.schema
        && (table.indexes.contains_key(&index.name)
            || table.uniques.contains_key(&index.name)
            || table.primary_key.as_ref().is_some_and(|p| p.name == index.name))
}

/// The text after `PARTITION BY` (whose `PARTITION` is `tokens[split]`).
fn after_by(text: &str, tokens: &[TokenWithSpan], split: usize) -> String {
    slice(text, tokens.get(split + 2..).unwrap_or(&[]))
}

/// Where `PARTITION BY` starts at or after `from`, outside parentheses; the end if nowhere.
fn partition_by_at(tokens: &[TokenWithSpan], from: usize) -> usize {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(from) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ if depth == 0
                && keyword(Some(t)).as_deref() == Some("PARTITION")
                && keyword(tokens.get(i + 1)).as_deref() == Some("BY") =>
            {
                return i;
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The index of the parenthesis closing the one at `open`.
fn closing(tokens: &[TokenWithSpan], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}
