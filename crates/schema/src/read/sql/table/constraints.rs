//! Table constraints (PRIMARY KEY, UNIQUE, FOREIGN KEY, CHECK) as `CREATE TABLE` and `ALTER
//! TABLE` declare them. Apart from the column reading because constraints also arrive on their
//! own (ALTER TABLE, partitions) and share the name claiming that indexes take part in.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, IndexColumn, ReferentialAction as SqlAction, TableConstraint, visit_expressions};

use crate::model::{
    CheckConstraint, Dialect, ForeignKey, PrimaryKey, QualifiedName, ReferentialAction, UniqueConstraint,
};
use crate::normalize::expression;
use crate::read::check::PendingForeignKey;
use crate::read::sql::Reader;
use crate::read::sql::mysql_index::{Key, plain_btree};
use crate::read::{Location, ReadError};

/// A plain index on exactly `columns`, in order: what InnoDB creates for a foreign key.
fn backs_foreign_key(index: &crate::model::Index, columns: &[String]) -> bool {
    !index.unique
        && index.predicate.is_none()
        && index
            .method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case("btree"))
        && index.parts.len() == columns.len()
        && index.parts.iter().zip(columns).all(|(p, c)| {
            !p.descending
                && p.prefix_length.is_none()
                && matches!(&p.target, crate::model::IndexTarget::Column(n) if n == c)
        })
}

fn action(a: Option<SqlAction>) -> ReferentialAction {
    match a {
        None | Some(SqlAction::NoAction) => ReferentialAction::NoAction,
        Some(SqlAction::Restrict) => ReferentialAction::Restrict,
        Some(SqlAction::Cascade) => ReferentialAction::Cascade,
        Some(SqlAction::SetNull) => ReferentialAction::SetNull,
        Some(SqlAction::SetDefault) => ReferentialAction::SetDefault,
    }
}

impl Reader {
    fn columns(
        &self,
        table: &QualifiedName,
        cols: &[IndexColumn],
        at: &Location,
    ) -> Result<Vec<String>, ReadError> {
        let t = self.schema.tables.get(table);
        cols.iter()
            .map(|c| match &c.column.expr {
                Expr::Identifier(i) if c.operator_class.is_none() && c.column.options.sort.is_none() => {
                    let name = self.ident(i);
                    match t.and_then(|t| t.column(&name)) {
                        Some(_) => Ok(name),
                        None => Err(ReadError::BadReference {
                            at: self.at_ident(i, at),
                            what: format!("column {name} of {table}"),
                        }),
                    }
                }
                other => Err(self.unsupported(at, format!("constraint part {other}"))),
            })
            .collect()
    }

    fn claim(&mut self, table: &QualifiedName, name: &str, at: &Location) -> Result<(), ReadError> {
        let t = self.table_mut(table, at)?;
        let taken = t.uniques.contains_key(name)
            || t.checks.contains_key(name)
            || t.foreign_keys.contains_key(name)
            || t.indexes.contains_key(name)
            || t.primary_key.as_ref().is_some_and(|p| p.name == name);
        if taken {
            return Err(ReadError::Duplicate {
                at: at.clone(),
                what: format!("constraint or index {name} on {table}"),
            });
        }
        self.namer.claim(table, name);
        Ok(())
    }

    pub(in crate::read::sql) fn table_constraint(
        &mut self,
        table: &QualifiedName,
        constraint: TableConstraint,
        at: &Location,
    ) -> Result<(), ReadError> {
        self.table_mut(table, at)?;
        match constraint {
            TableConstraint::PrimaryKey(pk)
                if pk.include.is_empty()
                    && pk.index_options.is_empty()
                    && pk.characteristics.is_none()
                    && pk.index_name.is_none() =>
            {
                let columns = self.columns(table, &pk.columns, at)?;
                let name = match (&pk.name, self.dialect) {
                    (_, Dialect::Mysql) => "PRIMARY".to_owned(),
                    (Some(n), _) => self.ident(n),
                    (None, _) => self.namer.primary_key(table),
                };
                self.claim(table, &name, at)?;
                let t = self.table_mut(table, at)?;
                if t.primary_key.is_some() {
                    return Err(ReadError::Duplicate {
                        at: at.clone(),
                        what: format!("primary key of {table}"),
                    });
                }
                for c in t.columns.iter_mut().filter(|c| columns.contains(&c.name)) {
                    c.nullable = false;
                }
                t.primary_key = Some(PrimaryKey { name, columns });
            }
            TableConstraint::Unique(mut u)
                if self.dialect == Dialect::Mysql
                    && (u.index_type.is_some() || !u.index_options.is_empty())
                    && plain_btree(u.index_type.as_ref(), &u.index_options) =>
            {
                u.index_type = None;
                u.index_options.clear();
                return self.table_constraint(table, TableConstraint::Unique(u), at);
            }
            TableConstraint::Unique(u)
                if self.dialect == Dialect::Mysql
                    && u.include.is_empty()
                    && u.characteristics.is_none()
                    && (u.index_type.is_some() || !u.index_options.is_empty()) =>
            {
                let name = u.name.as_ref().or(u.index_name.as_ref());
                let key = Key {
                    name,
                    using: u.index_type.as_ref(),
                    options: &u.index_options,
                    columns: &u.columns,
                    unique: true,
                };
                self.mysql_keyed_index(table, key, at)?;
            }
            TableConstraint::Unique(u)
                if u.include.is_empty()
                    && u.index_options.is_empty()
                    && u.characteristics.is_none()
                    && u.index_type.is_none() =>
            {
                let columns = self.columns(table, &u.columns, at)?;
                let name = match u.name.as_ref().or(u.index_name.as_ref()) {
                    Some(n) => self.ident(n),
                    None => self.namer.unique(table, &columns),
                };
                self.claim(table, &name, at)?;
                self.table_mut(table, at)?
                    .uniques
                    .insert(name.clone(), UniqueConstraint { name, columns });
            }
            TableConstraint::ForeignKey(fk)
                if fk.index_name.is_none()
                    && (self.dialect == Dialect::Postgres
                        || (fk.characteristics.is_none() && fk.match_kind.is_none())) =>
            {
                let options = self.foreign_key_options(&fk, at)?;
                let cols: Vec<IndexColumn> = fk.columns.iter().cloned().map(IndexColumn::from).collect();
                let columns = self.columns(table, &cols, at)?;
                let name = match &fk.name {
                    Some(n) => self.ident(n),
                    None => self.namer.foreign_key(table, &columns),
                };
                if self.dialect == Dialect::Mysql {
                    // The index InnoDB made for this key (its name, exactly its columns): the
                    // catalog reader hides it, and so does this one (`mysqldump` writes it out).
                    let t = self.table_mut(table, at)?;
                    if t.indexes
                        .get(&name)
                        .is_some_and(|i| backs_foreign_key(i, &columns))
                    {
                        t.indexes.remove(&name);
                    }
                }
                self.claim(table, &name, at)?;
                let referenced_table = self.qualified(&fk.foreign_table, at)?;
                let referenced_columns = fk.referred_columns.iter().map(|c| self.ident(c)).collect();
                let key = ForeignKey {
                    name: name.clone(),
                    columns,
                    referenced_table,
                    referenced_columns,
                    on_delete: action(fk.on_delete),
                    on_update: action(fk.on_update),
                    options,
                };
                self.table_mut(table, at)?.foreign_keys.insert(name.clone(), key);
                self.pending.push(PendingForeignKey {
                    table: table.clone(),
                    name,
                    at: at.clone(),
                });
            }
            TableConstraint::Check(c) if !c.no_inherit && c.enforced.is_none() => {
                let name = match &c.name {
                    Some(n) => self.ident(n),
                    None => {
                        let only = self.only_column(table, &c.expr);
                        self.namer.check(table, only.as_deref(), false)
                    }
                };
                self.add_check(table, name, &c.expr, at)?;
            }
            TableConstraint::Index(i)
                if self.dialect == Dialect::Mysql && i.index_options.is_empty() && i.index_type.is_none() =>
            {
                self.inline_index(table, i.name.as_ref(), None, &i.columns, at)?;
            }
            TableConstraint::Index(i) if self.dialect == Dialect::Mysql => {
                let key = Key {
                    name: i.name.as_ref(),
                    using: i.index_type.as_ref(),
                    options: &i.index_options,
                    columns: &i.columns,
                    unique: false,
                };
                self.mysql_keyed_index(table, key, at)?;
            }
            // mysqldump writes FULLTEXT indexes inside CREATE TABLE; the model's method names them.
            TableConstraint::FulltextOrSpatial(c) if self.dialect == Dialect::Mysql && c.fulltext => {
                let fulltext = sqlparser::ast::IndexType::Custom(sqlparser::ast::Ident::new("FULLTEXT"));
                self.inline_index(table, c.opt_index_name.as_ref(), Some(&fulltext), &c.columns, at)?;
            }
            other => return Err(self.unsupported(at, format!("constraint {other}"))),
        }
        Ok(())
    }

    pub(super) fn add_check(
        &mut self,
        table: &QualifiedName,
        name: String,
        expr: &Expr,
        at: &Location,
    ) -> Result<(), ReadError> {
        self.claim(table, &name, at)?;
        let expression = expression(self.dialect, &expr.to_string());
        self.table_mut(table, at)?
            .checks
            .insert(name.clone(), CheckConstraint { name, expression });
        Ok(())
    }

    /// The one column an expression mentions, if it mentions exactly one (PostgreSQL check names).
    fn only_column(&self, table: &QualifiedName, expr: &Expr) -> Option<String> {
        let t = self.schema.tables.get(table)?;
        let mut seen: Vec<String> = Vec::new();
        let _ = visit_expressions(expr, |e| {
            if let Expr::Identifier(i) = e {
                let n = self.ident(i);
                if t.column(&n).is_some() && !seen.contains(&n) {
                    seen.push(n);
                }
            }
            ControlFlow::<()>::Continue(())
        });
        match seen.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }
}
