//! `CREATE TABLE`: the table, its columns and their inline constraints; table constraints are
//! in `constraints`.

use sqlparser::ast::IndexColumn;
use sqlparser::ast::{
    ColumnDef, ColumnOption, CommentDef, CreateTable, GeneratedAs, GeneratedExpressionMode, TableConstraint,
};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Word};

use crate::model::{Column, DataType, Dialect, Generated, Identity, QualifiedName, Table};
use crate::names::serial_default;
use crate::normalize::{
    default_value, expression, mysql_charset_name, mysql_on_update_default, postgres_collation,
};
use crate::types::parse_type_with;

use super::super::{Location, ReadError};
use super::Reader;

mod constraints;

impl Reader {
    pub(super) fn create_table(&mut self, create: CreateTable, at: Location) -> Result<(), ReadError> {
        let name = self.qualified(&create.name, &at)?;
        self.check_namespace(&name, &at)?;
        if self.schema.tables.contains_key(&name) {
            return if create.if_not_exists {
                // The statement is a no-op, its annotations with it.
                self.pending_renames.clear();
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
        self.take_renames(&name, &create.columns, &at)?;
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
