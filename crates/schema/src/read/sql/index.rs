//! `CREATE [UNIQUE] INDEX`, MySQL's inline `INDEX`/`KEY`, and PostgreSQL's `COMMENT ON INDEX`.

use sqlparser::ast::{
    BinaryOperator, CreateIndex, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, IndexColumn,
    IndexType, ObjectName, ObjectNamePart, OrderBySort, Value,
};

use crate::model::{Dialect, Index, IndexPart, IndexTarget, QualifiedName};
use crate::normalize::expression;

use super::super::{Location, ReadError};
use super::Reader;

impl Reader {
    /// `COMMENT ON INDEX schema.index`: the index is found among its schema's tables.
    pub(super) fn index_comment(
        &mut self,
        name: &ObjectName,
        comment: Option<String>,
        at: Location,
    ) -> Result<(), ReadError> {
        let q = self.qualified(name, &at)?;
        let table = self
            .schema
            .tables
            .values_mut()
            .find(|t| t.name.schema == q.schema && t.indexes.contains_key(&q.name));
        let Some(table) = table else {
            return Err(ReadError::BadReference {
                at,
                what: format!("index {q} (only indexes declared with CREATE INDEX take a comment)"),
            });
        };
        match comment {
            Some(c) => table.index_comments.insert(q.name, c),
            None => table.index_comments.remove(&q.name),
        };
        Ok(())
    }

    pub(super) fn create_index(&mut self, create: CreateIndex, at: Location) -> Result<(), ReadError> {
        if self.dialect == Dialect::Mysql && !create.index_options.is_empty() {
            return self.mysql_create_index(create, at);
        }
        let postgres = self.dialect == Dialect::Postgres;
        if !create.index_options.is_empty()
            || !create.alter_options.is_empty()
            || (!postgres
                && (!create.include.is_empty() || create.nulls_distinct.is_some() || !create.with.is_empty()))
        {
            return Err(self.unsupported(&at, "CREATE INDEX options (INCLUDE, NULLS DISTINCT, WITH, …)"));
        }
        let table = self.qualified(&create.table_name, &at)?;
        self.table_mut(&table, &at)?;
        let name = match &create.name {
            None => None,
            Some(n) => match n.0.last() {
                Some(ObjectNamePart::Identifier(i))
                    if n.0.len() == 1 || self.dialect == Dialect::Postgres =>
                {
                    Some(self.ident(i))
                }
                _ => return Err(self.unsupported(&at, format!("index name {n}"))),
            },
        };
        if let Some(n) = &name
            && create.if_not_exists
            && self
                .schema
                .tables
                .get(&table)
                .is_some_and(|t| t.indexes.contains_key(n))
        {
            return Ok(());
        }
        let mut index = self.index_body(&table, name, create.using.as_ref(), &create.columns, &at)?;
        index.unique = create.unique;
        for column in &create.include {
            let (target, _) = self.index_target(&table, &Expr::Identifier(column.clone()), &at)?;
            if let IndexTarget::Column(c) = target {
                index.include.push(c);
            }
        }
        index.nulls_not_distinct = create.nulls_distinct == Some(false);
        index.storage = storage_parameters(&create.with)
            .map_err(|what| self.unsupported(&at, format!("index storage parameter {what}")))?;
        if let Some(predicate) = &create.predicate {
            if self.dialect != Dialect::Postgres {
                return Err(self.unsupported(&at, "partial index on MySQL"));
            }
            index.predicate = Some(expression(self.dialect, &predicate.to_string()));
        }
        self.insert_index(&table, index, &at)
    }

    pub(super) fn inline_index(
        &mut self,
        table: &QualifiedName,
        name: Option<&Ident>,
        using: Option<&IndexType>,
        columns: &[IndexColumn],
        at: &Location,
    ) -> Result<(), ReadError> {
        let name = name.map(|n| self.ident(n));
        let index = self.index_body(table, name, using, columns, at)?;
        self.insert_index(table, index, at)
    }

    fn insert_index(&mut self, table: &QualifiedName, index: Index, at: &Location) -> Result<(), ReadError> {
        let t = self.table_mut(table, at)?;
        let taken = t.indexes.contains_key(&index.name)
            || t.uniques.contains_key(&index.name)
            || t.primary_key.as_ref().is_some_and(|p| p.name == index.name);
        if taken {
            return Err(ReadError::Duplicate {
                at: at.clone(),
                what: format!("index {}", index.name),
            });
        }
        t.indexes.insert(index.name.clone(), index);
        Ok(())
    }

    fn index_body(
        &mut self,
        table: &QualifiedName,
        name: Option<String>,
        using: Option<&IndexType>,
        columns: &[IndexColumn],
        at: &Location,
    ) -> Result<Index, ReadError> {
        let mut parts = Vec::new();
        for c in columns {
            let postgres = self.dialect == Dialect::Postgres;
            if (!postgres && (c.operator_class.is_some() || c.column.options.nulls_first.is_some()))
                || c.column.with_fill.is_some()
            {
                return Err(self.unsupported(at, format!("index part {c}")));
            }
            let descending = match &c.column.options.sort {
                None | Some(OrderBySort::Asc) => false,
                Some(OrderBySort::Desc) => true,
                Some(other) => return Err(self.unsupported(at, format!("index order {other:?}"))),
            };
            let (target, prefix_length) = self.index_target(table, &c.column.expr, at)?;
            let opclass = c.operator_class.as_ref().map(|o| self.opclass(o));
            parts.push(IndexPart {
                target,
                descending,
                prefix_length,
                opclass,
                nulls_first: IndexPart::nulls_order(descending, c.column.options.nulls_first),
            });
        }
        let method = match using {
            None => None,
            Some(m) => {
                let m = m.to_string().to_ascii_lowercase();
                (m != "btree").then_some(m)
            }
        };
        let name = match name {
            Some(n) => {
                self.namer.claim(table, &n);
                n
            }
            None => {
                let labels: Vec<String> = parts
                    .iter()
                    .map(|p| match &p.target {
                        IndexTarget::Column(c) => c.clone(),
                        IndexTarget::Expression(_) => "expr".to_owned(),
                    })
                    .collect();
                self.namer.index(table, &labels)
            }
        };
        Ok(Index {
            name,
            unique: false,
            parts,
            predicate: None,
            method,
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        })
    }

    /// An operator class as `pg_index` names it back: bare in `pg_catalog`, qualified elsewhere.
    fn opclass(&self, name: &ObjectName) -> String {
        let parts: Vec<String> = name
            .0
            .iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) => self.ident(i),
                other => other.to_string(),
            })
            .collect();
        match parts.as_slice() {
            [schema, name] if schema == "pg_catalog" => name.clone(),
            _ => parts.join("."),
        }
    }

    fn index_target(
        &self,
        table: &QualifiedName,
        expr: &Expr,
        at: &Location,
    ) -> Result<(IndexTarget, Option<u32>), ReadError> {
        let t = self.schema.tables.get(table);
        let known = |name: &str| t.is_some_and(|t| t.column(name).is_some());
        match expr {
            Expr::Identifier(i) => {
                let name = self.ident(i);
                if !known(&name) {
                    return Err(ReadError::BadReference {
                        at: self.at_ident(i, at),
                        what: format!("column {name} of {table}"),
                    });
                }
                Ok((IndexTarget::Column(name), None))
            }
            Expr::Nested(inner) => Ok((
                IndexTarget::Expression(expression(self.dialect, &inner.to_string())),
                None,
            )),
            Expr::Function(f) if self.dialect == Dialect::Mysql => {
                // `col(10)`: a prefix length, when `col` is a column and the argument a number.
                if let ([ObjectNamePart::Identifier(i)], FunctionArguments::List(list)) =
                    (f.name.0.as_slice(), &f.args)
                    && let [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] =
                        list.args.as_slice()
                    && let Value::Number(n, _) = &v.value
                    && known(&self.ident(i))
                {
                    let length = n.parse().map_err(|_| ReadError::Invalid {
                        at: at.clone(),
                        message: format!("bad prefix length {n}"),
                    })?;
                    return Ok((IndexTarget::Column(self.ident(i)), Some(length)));
                }
                Ok((
                    IndexTarget::Expression(expression(self.dialect, &expr.to_string())),
                    None,
                ))
            }
            other => Ok((
                IndexTarget::Expression(expression(self.dialect, &other.to_string())),
                None,
            )),
        }
    }
}

/// `WITH (fillfactor = '70', deduplicate_items = off)` as `pg_class.reloptions` holds it
/// (`deduplicate_items=off`, `fillfactor=70`), sorted by name so writing order does not matter.
/// Err: the parameter as written, when it is not `name = value`.
fn storage_parameters(with: &[Expr]) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(with.len());
    for e in with {
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = e
        else {
            return Err(e.to_string());
        };
        let Expr::Identifier(key) = left.as_ref() else {
            return Err(e.to_string());
        };
        let value = match right.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(s) => s.clone(),
                Value::Number(n, _) => n.clone(),
                Value::Boolean(b) => if *b { "true" } else { "false" }.to_owned(),
                _ => return Err(e.to_string()),
            },
            Expr::Identifier(i) => i.value.to_lowercase(),
            _ => return Err(e.to_string()),
        };
        out.push(format!("{}={value}", key.value.to_lowercase()));
    }
    out.sort();
    Ok(out)
}
