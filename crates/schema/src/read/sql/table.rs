//! `CREATE TABLE` and table constraints.

use std::ops::ControlFlow;

use sqlparser::ast::IndexColumn;
use sqlparser::ast::{
    ColumnDef, ColumnOption, CommentDef, CreateTable, Expr, GeneratedAs, GeneratedExpressionMode,
    ReferentialAction as SqlAction, TableConstraint, visit_expressions,
};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Word};

use crate::model::{
    CheckConstraint, Column, DataType, Dialect, ForeignKey, Generated, Identity, PrimaryKey, QualifiedName,
    ReferentialAction, Table, UniqueConstraint,
};
use crate::names::serial_default;
use crate::normalize::{
    default_value, expression, mysql_charset_name, mysql_on_update_default, postgres_collation,
};
use crate::types::parse_type_with;

use super::super::check::PendingForeignKey;
use super::super::{Location, ReadError};
use super::Reader;
use super::mysql_index::{Key, plain_btree};

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
    pub(super) fn create_table(&mut self, create: CreateTable, at: Location) -> Result<(), ReadError> {
        let name = self.qualified(&create.name, &at)?;
        self.check_namespace(&name, &at)?;
        if self.schema.tables.contains_key(&name) {
            return if create.if_not_exists {
                Ok(())
            } else {
                Err(ReadError::Duplicate {
                    at,
                    what: format!("table {name}"),
                })
            };
        }
        if create.or_replace
            || create.temporary
            || create.unlogged
            || create.external
            || create.query.is_some()
            || create.like.is_some()
            || create.clone.is_some()
            || create.on_commit.is_some()
        {
            return Err(self.unsupported(&at, "this form of CREATE TABLE"));
        }
        let mut table = Table::new(name.clone());
        if let Some(comment) = &create.comment {
            table.comment = Some(comment_text(comment));
        }
        self.table_options(&mut table, &create.table_options, &at)?;
        self.schema.tables.insert(name.clone(), table);
        for column in create.columns {
            self.column(&name, column, &at)?;
        }
        for constraint in create.constraints {
            self.table_constraint(&name, constraint, &at)?;
        }
        // A column's character set or collation equal to the table's is the table's.
        if let Some(t) = self.schema.tables.get_mut(&name) {
            let (charset, collation) = (t.charset.clone(), t.collation.clone());
            for c in &mut t.columns {
                if c.charset.is_some() && c.charset == charset {
                    c.charset = None;
                }
                if c.collation.is_some() && c.collation == collation {
                    c.collation = None;
                }
            }
        }
        Ok(())
    }

    fn data_type(&self, text: &str, at: &Location) -> Result<DataType, ReadError> {
        let enums = &self.schema.enums;
        let resolve = |schema: Option<&str>, name: &str| {
            let q = QualifiedName::new(schema.unwrap_or("public"), name);
            enums.contains_key(&q).then_some(q)
        };
        parse_type_with(self.dialect, text, &resolve).map_err(|e| ReadError::Invalid {
            at: at.clone(),
            message: e.to_string(),
        })
    }

    fn column(&mut self, table: &QualifiedName, def: ColumnDef, at: &Location) -> Result<(), ReadError> {
        let at = self.at_ident(&def.name, at);
        let name = self.ident(&def.name);
        let type_text = def.data_type.to_string();
        let lower = type_text.to_ascii_lowercase();
        let serial = self.dialect == Dialect::Postgres
            && matches!(
                lower.as_str(),
                "serial" | "serial4" | "bigserial" | "serial8" | "smallserial" | "serial2"
            );
        let mysql_serial = self.dialect == Dialect::Mysql && lower == "serial";
        let mut column = Column {
            name: name.clone(),
            data_type: self.data_type(&type_text, &at)?,
            nullable: !(serial || mysql_serial),
            default: None,
            identity: None,
            identity_options: None,
            auto_increment: mysql_serial,
            comment: None,
            charset: None,
            collation: None,
            generated: None,
        };
        if serial {
            let seq = self.namer.serial_sequence(table, &name);
            column.default = Some(crate::model::DefaultValue::Expression(serial_default(
                table, &seq,
            )));
        }
        let mut deferred = Vec::new();
        let mut json_check = false;
        if mysql_serial {
            deferred.push(TableConstraint::Unique(unique_on(&def.name)));
        }
        let mut on_update = None;
        for option in def.options {
            let named = option.name.clone();
            match option.option {
                ColumnOption::OnUpdate(expr) if self.dialect == Dialect::Mysql => {
                    on_update = Some(expr.to_string())
                }
                ColumnOption::Null => column.nullable = true,
                ColumnOption::NotNull => column.nullable = false,
                ColumnOption::Default(expr) if column.default.is_none() => {
                    column.default = Some(default_value(self.dialect, &expr.to_string()));
                }
                ColumnOption::Comment(c) if self.dialect == Dialect::Mysql => column.comment = Some(c),
                ColumnOption::CharacterSet(n) if self.dialect == Dialect::Mysql => {
                    column.charset = Some(mysql_charset_name(&n.to_string().replace('`', "")));
                }
                ColumnOption::Collation(n) if self.dialect == Dialect::Mysql => {
                    column.collation = Some(mysql_charset_name(&n.to_string().replace('`', "")));
                }
                ColumnOption::Collation(n) => {
                    let parts: Vec<String> =
                        n.0.iter()
                            .map(|p| p.as_ident().map_or_else(|| p.to_string(), |i| i.value.clone()))
                            .collect();
                    column.collation = postgres_collation(&parts).map_err(|named| {
                        self.unsupported(
                            &at,
                            format!("COLLATE {named} (collations outside pg_catalog are not modelled)"),
                        )
                    })?;
                }
                ColumnOption::DialectSpecific(tokens)
                    if is_auto_increment(&tokens) && self.dialect == Dialect::Mysql =>
                {
                    column.auto_increment = true;
                }
                ColumnOption::Generated {
                    generated_as: g @ (GeneratedAs::Always | GeneratedAs::ByDefault),
                    sequence_options,
                    generation_expr: None,
                    ..
                } if self.dialect == Dialect::Postgres => {
                    let written = sequence_options.as_deref().unwrap_or_default();
                    column.identity_options = self.identity_options(&column.data_type, written, &at)?;
                    column.identity = Some(if g == GeneratedAs::Always {
                        Identity::Always
                    } else {
                        Identity::ByDefault
                    });
                    column.nullable = false;
                }
                ColumnOption::Generated {
                    generation_expr: Some(expr),
                    generation_expr_mode,
                    ..
                } => {
                    column.generated = Some(Generated {
                        expression: expression(self.dialect, &expr.to_string()),
                        // MySQL's default is VIRTUAL; PostgreSQL (before 18) has only STORED.
                        stored: self.dialect == Dialect::Postgres
                            || generation_expr_mode == Some(GeneratedExpressionMode::Stored),
                    });
                }
                ColumnOption::PrimaryKey(mut pk) => {
                    column.nullable = false;
                    pk.name = pk.name.or(named);
                    pk.columns = vec![IndexColumn::from(def.name.clone())];
                    deferred.push(TableConstraint::PrimaryKey(pk));
                }
                ColumnOption::Unique(mut u) => {
                    u.name = u.name.or(named);
                    u.columns = vec![IndexColumn::from(def.name.clone())];
                    deferred.push(TableConstraint::Unique(u));
                }
                ColumnOption::ForeignKey(mut fk) => {
                    fk.name = fk.name.or(named);
                    fk.columns = vec![def.name.clone()];
                    deferred.push(TableConstraint::ForeignKey(fk));
                }
                // MariaDB's JSON is `longtext` with this check; its catalog reader says `json`.
                ColumnOption::Check(c)
                    if self.dialect == Dialect::Mysql
                        && column.data_type
                            == (DataType::Other {
                                name: "longtext".into(),
                                params: vec![],
                            })
                        && expression(self.dialect, &c.expr.to_string())
                            == expression(
                                self.dialect,
                                &format!("json_valid(`{}`)", name.replace('`', "``")),
                            ) =>
                {
                    json_check = true;
                }
                ColumnOption::Check(mut c) => {
                    c.name = c.name.or(named);
                    let name = match c.name.as_ref() {
                        Some(n) => self.ident(n),
                        None => self.namer.check(table, Some(&name), true),
                    };
                    self.add_check(table, name, &c.expr, &at)?;
                }
                other => return Err(self.unsupported(&at, format!("column option {other}"))),
            }
        }
        if column.collation.is_some()
            && self.dialect == Dialect::Postgres
            && !column.data_type.is_collatable()
        {
            return Err(self.unsupported(
                &at,
                format!("COLLATE on column {name}: its type has no collation"),
            ));
        }
        if let Some(on_update) = on_update {
            let default = column.default.take();
            column.default = Some(mysql_on_update_default(&column.data_type, default, &on_update));
        }
        if json_check {
            column.data_type = DataType::Json;
            if column.charset.as_deref().is_none_or(|c| c == "utf8mb4")
                && column.collation.as_deref().is_none_or(|c| c == "utf8mb4_bin")
            {
                column.charset = None;
                column.collation = None;
            }
        }
        let t = self.table_mut(table, &at)?;
        if t.column(&name).is_some() {
            return Err(ReadError::Duplicate {
                at,
                what: format!("column {name} of {table}"),
            });
        }
        t.columns.push(column);
        for constraint in deferred {
            self.table_constraint(table, constraint, &at)?;
        }
        Ok(())
    }

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

    pub(super) fn table_constraint(
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

    fn add_check(
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

pub(super) fn comment_text(c: &CommentDef) -> String {
    match c {
        CommentDef::WithEq(s) | CommentDef::WithoutEq(s) => s.clone(),
    }
}

fn is_auto_increment(tokens: &[Token]) -> bool {
    matches!(
        tokens,
        [Token::Word(Word {
            keyword: Keyword::AUTO_INCREMENT,
            ..
        })]
    )
}

fn unique_on(column: &sqlparser::ast::Ident) -> sqlparser::ast::UniqueConstraint {
    sqlparser::ast::UniqueConstraint {
        name: None,
        index_name: None,
        index_type_display: sqlparser::ast::KeyOrIndexDisplay::None,
        index_type: None,
        columns: vec![IndexColumn::from(column.clone())],
        include: Vec::new(),
        index_options: Vec::new(),
        characteristics: None,
        nulls_distinct: sqlparser::ast::NullsDistinctOption::None,
    }
}
