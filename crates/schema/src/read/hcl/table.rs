//! `table` blocks and everything inside them.

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Block;

use crate::model::{
    CheckConstraint, Column, ColumnRename, DataType, Dialect, ForeignKey, Generated, Identity, PrimaryKey,
    QualifiedName, ReferentialAction, Table, TableRename, UniqueConstraint,
};
use crate::normalize::{expression, mysql_charset_name, postgres_collation};

use super::super::ReadError;
use super::super::check::PendingForeignKey;
use super::{Attrs, Reader};

impl Reader<'_> {
    fn table_name(&self, block: &Block) -> Result<QualifiedName, ReadError> {
        let name = self.label(block)?;
        let schema_attr = block.body.attributes().find(|a| a.key.as_str() == "schema");
        Ok(QualifiedName::new(self.schema_ref(schema_attr)?, name))
    }

    /// Registers a table's name so references to it resolve in any order.
    pub(super) fn declare_table(&mut self, block: &Block) -> Result<(), ReadError> {
        let q = self.table_name(block)?;
        if self.schema.tables.contains_key(&q) {
            return Err(ReadError::Duplicate {
                at: self.at(block.span()),
                what: format!("table {q}"),
            });
        }
        self.schema.tables.insert(q.clone(), Table::new(q));
        Ok(())
    }

    pub(super) fn table_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let q = self.table_name(block)?;
        let owner = format!("table {q}");
        let (mut attrs, blocks) = self.split(&owner, &block.body)?;
        attrs.take("schema");
        let mut table = Table::new(q.clone());
        if let Some(a) = attrs.take("comment") {
            table.comment = Some(self.string(&a.value)?);
        }
        table.charset = self.charset_attr(&mut attrs, "charset", &owner)?;
        table.collation = self.charset_attr(&mut attrs, "collate", &owner)?;
        if let Some(from) = self.renamed_from(&mut attrs, &owner)? {
            self.schema.renames.tables.push(TableRename {
                table: q.clone(),
                from,
            });
        }
        self.partitioning(&mut table, &mut attrs, block)?;
        self.done(attrs)?;
        for b in blocks.iter().filter(|b| b.ident.as_str() == "column") {
            if table.partition_of.is_some() {
                return Err(self.unsupported(
                    b.span(),
                    format!("column in partition {q} (a partition's columns are its parent's)"),
                ));
            }
            let (column, from) = self.column(&q, b)?;
            if table.column(&column.name).is_some() {
                return Err(ReadError::Duplicate {
                    at: self.at(b.span()),
                    what: format!("column {} of {q}", column.name),
                });
            }
            if let Some(from) = from {
                let (table, column) = (q.clone(), column.name.clone());
                self.schema
                    .renames
                    .columns
                    .push(ColumnRename { table, column, from });
            }
            table.columns.push(column);
        }
        for b in &blocks {
            let taken = |t: &Table, n: &str| {
                t.uniques.contains_key(n)
                    || t.indexes.contains_key(n)
                    || t.checks.contains_key(n)
                    || t.foreign_keys.contains_key(n)
                    || t.primary_key.as_ref().is_some_and(|p| p.name == n)
            };
            let at = self.at(b.span());
            let duplicate = |n: &str| ReadError::Duplicate {
                at: at.clone(),
                what: format!("constraint or index {n} on {q}"),
            };
            match b.ident.as_str() {
                "column" => {}
                "primary_key" => {
                    let (mut attrs, inner) = self.split("primary_key", &b.body)?;
                    self.no_blocks(&inner, "primary_key")?;
                    let columns = self.columns(&table, attrs.take("columns"), b)?;
                    self.done(attrs)?;
                    if table.primary_key.is_some() {
                        return Err(ReadError::Duplicate {
                            at: self.at(b.span()),
                            what: format!("primary key of {q}"),
                        });
                    }
                    let name = match self.labels(b).as_slice() {
                        [] => self.namer.primary_key(&q),
                        [n] => n.clone(),
                        _ => {
                            return Err(
                                self.invalid(b.span(), "primary_key takes at most one label".to_owned())
                            );
                        }
                    };
                    if taken(&table, &name) {
                        return Err(duplicate(&name));
                    }
                    self.namer.claim(&q, &name);
                    table.primary_key = Some(PrimaryKey { name, columns });
                }
                "unique" => {
                    let name = self.label(b)?;
                    let (mut attrs, inner) = self.split("unique", &b.body)?;
                    self.no_blocks(&inner, "unique")?;
                    let columns = self.columns(&table, attrs.take("columns"), b)?;
                    self.done(attrs)?;
                    if taken(&table, &name) {
                        return Err(duplicate(&name));
                    }
                    self.namer.claim(&q, &name);
                    table
                        .uniques
                        .insert(name.clone(), UniqueConstraint { name, columns });
                }
                "check" => {
                    let name = self.label(b)?;
                    let (mut attrs, inner) = self.split("check", &b.body)?;
                    self.no_blocks(&inner, "check")?;
                    let Some(e) = attrs.take("expr") else {
                        return Err(self.invalid(b.span(), "check needs `expr`".to_owned()));
                    };
                    let text = self.string(&e.value)?;
                    self.done(attrs)?;
                    if taken(&table, &name) {
                        return Err(duplicate(&name));
                    }
                    table.checks.insert(
                        name.clone(),
                        CheckConstraint {
                            name,
                            expression: expression(self.dialect, &text),
                        },
                    );
                }
                "foreign_key" => {
                    let fk = self.foreign_key(&table, b)?;
                    if taken(&table, &fk.name) {
                        return Err(duplicate(&fk.name));
                    }
                    self.pending.push(PendingForeignKey {
                        table: q.clone(),
                        name: fk.name.clone(),
                        at: self.at(b.span()),
                    });
                    table.foreign_keys.insert(fk.name.clone(), fk);
                }
                "index" => {
                    let (index, comment) = self.index(&table, b)?;
                    if taken(&table, &index.name) {
                        return Err(duplicate(&index.name));
                    }
                    if let Some(c) = comment {
                        table.index_comments.insert(index.name.clone(), c);
                    }
                    table.indexes.insert(index.name.clone(), index);
                }
                "data" => {
                    if table.rows.is_some() {
                        return Err(ReadError::Duplicate {
                            at: self.at(b.span()),
                            what: format!("data of {q}"),
                        });
                    }
                    table.rows = Some(self.data(&table, b)?);
                }
                "row_security" | "policy" | "grant" => self.security_block(&mut table, b)?,
                other => return Err(self.unsupported(b.span(), format!("block `{other}` in {owner}"))),
            }
        }
        self.schema.tables.insert(q, table);
        Ok(())
    }

    /// A `column` block, with the old name its `renamed_from` declares.
    fn column(&self, table: &QualifiedName, block: &Block) -> Result<(Column, Option<String>), ReadError> {
        let name = self.label(block)?;
        let (mut attrs, blocks) = self.split("column", &block.body)?;
        let Some(t) = attrs.take("type") else {
            return Err(self.invalid(block.span(), format!("column {name} needs `type`")));
        };
        let data_type = self.data_type(&table.schema, &t.value)?;
        let nullable = match attrs.take("null") {
            Some(a) => self.boolean(&a.value)?,
            None => false,
        };
        let default = match attrs.take("default") {
            Some(a) => Some(self.default(&a.value)?),
            None => None,
        };
        let auto_increment = match attrs.take("auto_increment") {
            Some(a) => self.boolean(&a.value)?,
            None => false,
        };
        let comment = match attrs.take("comment") {
            Some(a) => Some(self.string(&a.value)?),
            None => None,
        };
        let owner = format!("column {name}");
        let charset = self.charset_attr(&mut attrs, "charset", &owner)?;
        let collation = self.column_collation(&mut attrs, &owner, &data_type)?;
        let renamed_from = self.renamed_from(&mut attrs, &owner)?;
        self.done(attrs)?;
        let mut identity = None;
        let mut identity_options = None;
        let mut generated = None;
        for b in blocks {
            if b.ident.as_str() == "as" && generated.is_none() && b.labels.is_empty() {
                generated = Some(self.generated(b, &name)?);
                continue;
            }
            if b.ident.as_str() != "identity" || identity.is_some() || !b.labels.is_empty() {
                return Err(
                    self.unsupported(b.span(), format!("block `{}` in column {name}", b.ident.as_str()))
                );
            }
            let (mut attrs, inner) = self.split("identity", &b.body)?;
            self.no_blocks(&inner, "identity")?;
            identity = Some(match attrs.take("generated") {
                None => Identity::ByDefault,
                Some(a) => match self.keyword(&a.value)?.as_str() {
                    "ALWAYS" => Identity::Always,
                    "BY_DEFAULT" => Identity::ByDefault,
                    other => {
                        return Err(
                            self.invalid(a.value.span(), format!("unknown identity generation {other}"))
                        );
                    }
                },
            });
            identity_options = self.identity_options(&mut attrs, &data_type, b)?;
            self.done(attrs)?;
        }
        let column = Column {
            name,
            data_type,
            nullable,
            default,
            identity,
            identity_options,
            auto_increment,
            comment,
            charset,
            collation,
            generated,
        };
        Ok((column, renamed_from))
    }

    /// `as { expr = "…", type = STORED|VIRTUAL }`: a generated column, as Atlas writes it.
    fn generated(&self, block: &Block, column: &str) -> Result<Generated, ReadError> {
        let (mut attrs, inner) = self.split("as", &block.body)?;
        self.no_blocks(&inner, "as")?;
        let Some(expr) = attrs.take("expr") else {
            return Err(self.invalid(block.span(), format!("generated column {column} needs `expr`")));
        };
        let expression = expression(self.dialect, &self.string(&expr.value)?);
        let stored = match attrs.take("type") {
            None => self.dialect == Dialect::Postgres,
            Some(a) => match self.keyword(&a.value)?.as_str() {
                "STORED" => true,
                "VIRTUAL" if self.dialect == Dialect::Mysql => false,
                other => {
                    return Err(self.invalid(
                        a.value.span(),
                        format!(
                            "generated column {column}: type {other} (use STORED{})",
                            match self.dialect {
                                Dialect::Mysql => " or VIRTUAL",
                                Dialect::Postgres => "",
                            }
                        ),
                    ));
                }
            },
        };
        self.done(attrs)?;
        Ok(Generated { expression, stored })
    }

    /// A column reference of this table (`column.x`).
    pub(super) fn column_ref(&self, table: &Table, expr: &Expression) -> Result<String, ReadError> {
        match self.reference(expr)?.as_slice() {
            [kind, name] if kind == "column" => match table.column(name) {
                Some(_) => Ok(name.clone()),
                None => Err(ReadError::BadReference {
                    at: self.at(expr.span()),
                    what: format!("column {name} of {}", table.name),
                }),
            },
            _ => Err(self.invalid(expr.span(), "expected column.<name>".to_owned())),
        }
    }

    pub(super) fn columns(
        &self,
        table: &Table,
        attr: Option<&hcl_edit::structure::Attribute>,
        block: &Block,
    ) -> Result<Vec<String>, ReadError> {
        let Some(attr) = attr else {
            return Err(self.invalid(block.span(), format!("{} needs `columns`", block.ident.as_str())));
        };
        match &attr.value {
            Expression::Array(a) if !a.is_empty() => a.iter().map(|e| self.column_ref(table, e)).collect(),
            other => Err(self.invalid(
                other.span(),
                "expected a non-empty list of column references".to_owned(),
            )),
        }
    }

    fn action(&self, attr: Option<&hcl_edit::structure::Attribute>) -> Result<ReferentialAction, ReadError> {
        let Some(a) = attr else {
            return Ok(ReferentialAction::NoAction);
        };
        Ok(match self.keyword(&a.value)?.as_str() {
            "NO_ACTION" => ReferentialAction::NoAction,
            "RESTRICT" => ReferentialAction::Restrict,
            "CASCADE" => ReferentialAction::Cascade,
            "SET_NULL" => ReferentialAction::SetNull,
            "SET_DEFAULT" => ReferentialAction::SetDefault,
            other => return Err(self.invalid(a.value.span(), format!("unknown referential action {other}"))),
        })
    }

    fn foreign_key(&self, table: &Table, block: &Block) -> Result<ForeignKey, ReadError> {
        let name = self.label(block)?;
        let (mut attrs, inner) = self.split("foreign_key", &block.body)?;
        self.no_blocks(&inner, "foreign_key")?;
        let columns = self.columns(table, attrs.take("columns"), block)?;
        let Some(refs) = attrs.take("ref_columns") else {
            return Err(self.invalid(block.span(), "foreign_key needs `ref_columns`".to_owned()));
        };
        let Expression::Array(items) = &refs.value else {
            return Err(self.invalid(
                refs.value.span(),
                "expected a list of column references".to_owned(),
            ));
        };
        let mut target: Option<QualifiedName> = None;
        let mut referenced_columns = Vec::new();
        for e in items.iter() {
            let (q, column) = match self.reference(e)?.as_slice() {
                [k, c] if k == "column" => (table.name.clone(), c.clone()),
                [t, tn, k, c] if t == "table" && k == "column" => {
                    (self.table_by_name(&table.name.schema, tn, e)?, c.clone())
                }
                _ => return Err(self.invalid(e.span(), "expected table.<name>.column.<name>".to_owned())),
            };
            if target.as_ref().is_some_and(|t| *t != q) {
                return Err(self.invalid(e.span(), "ref_columns must all be in one table".to_owned()));
            }
            target = Some(q);
            referenced_columns.push(column);
        }
        let Some(referenced_table) = target else {
            return Err(self.invalid(refs.value.span(), "ref_columns is empty".to_owned()));
        };
        let on_delete = self.action(attrs.take("on_delete"))?;
        let on_update = self.action(attrs.take("on_update"))?;
        let options = self.foreign_key_options(&mut attrs)?;
        self.done(attrs)?;
        Ok(ForeignKey {
            name,
            columns,
            referenced_table,
            referenced_columns,
            on_delete,
            on_update,
            options,
        })
    }

    fn table_by_name(&self, schema: &str, name: &str, expr: &Expression) -> Result<QualifiedName, ReadError> {
        let local = QualifiedName::new(schema, name);
        if self.schema.tables.contains_key(&local) {
            return Ok(local);
        }
        let mut found = self.schema.tables.keys().filter(|q| q.name == name);
        match (found.next(), found.next()) {
            (Some(q), None) => Ok(q.clone()),
            (Some(_), Some(_)) => Err(self.invalid(expr.span(), format!("table.{name} is ambiguous"))),
            (None, _) => Err(ReadError::BadReference {
                at: self.at(expr.span()),
                what: format!("table {name}"),
            }),
        }
    }

    /// A column's `collate`: a MySQL collation, or a PostgreSQL one from `pg_catalog`.
    fn column_collation(
        &self,
        attrs: &mut Attrs<'_>,
        owner: &str,
        data_type: &DataType,
    ) -> Result<Option<String>, ReadError> {
        if self.dialect == Dialect::Mysql {
            return self.charset_attr(attrs, "collate", owner);
        }
        let Some(a) = attrs.take("collate") else {
            return Ok(None);
        };
        if !data_type.is_collatable() {
            return Err(self.unsupported(a.span(), format!("collate on {owner}: its type has no collation")));
        }
        let text = self.string(&a.value)?;
        postgres_collation(std::slice::from_ref(&text)).map_err(|named| {
            self.unsupported(
                a.span(),
                format!("collation {named} in {owner} (only pg_catalog's are modelled)"),
            )
        })
    }

    /// A MySQL `charset` or `collate` attribute (PostgreSQL has neither).
    fn charset_attr(
        &self,
        attrs: &mut Attrs<'_>,
        key: &str,
        owner: &str,
    ) -> Result<Option<String>, ReadError> {
        let Some(a) = attrs.take(key) else {
            return Ok(None);
        };
        if self.dialect != Dialect::Mysql {
            return Err(self.unsupported(a.span(), format!("attribute `{key}` in {owner} (MySQL only)")));
        }
        Ok(Some(mysql_charset_name(&self.string(&a.value)?)))
    }
}
