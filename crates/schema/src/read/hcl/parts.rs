//! `index` and `data` blocks inside a table.

use std::collections::BTreeMap;

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Block;

use crate::model::{
    DataType, ForeignKeyOptions, IdentityOptions, Index, IndexPart, IndexTarget, ReferenceRows,
    SequenceOptions, Table,
};
use crate::normalize::expression;

use super::super::ReadError;
use super::Reader;

impl Reader<'_> {
    /// An `index` block, with its comment (PostgreSQL).
    pub(super) fn index(&self, table: &Table, block: &Block) -> Result<(Index, Option<String>), ReadError> {
        let name = self.label(block)?;
        let (mut attrs, inner) = self.split("index", &block.body)?;
        let unique = match attrs.take("unique") {
            Some(a) => self.boolean(&a.value)?,
            None => false,
        };
        let mut parts = Vec::new();
        if let Some(a) = attrs.take("columns") {
            for c in self.columns(table, Some(a), block)? {
                parts.push(IndexPart {
                    target: IndexTarget::Column(c),
                    descending: false,
                    prefix_length: None,
                    opclass: None,
                    nulls_first: None,
                });
            }
        }
        for b in inner {
            if b.ident.as_str() != "on" || !b.labels.is_empty() {
                return Err(
                    self.unsupported(b.span(), format!("block `{}` in index {name}", b.ident.as_str()))
                );
            }
            let (mut on, nested) = self.split("on", &b.body)?;
            self.no_blocks(&nested, "on")?;
            let target = match (on.take("column"), on.take("expr")) {
                (Some(c), None) => IndexTarget::Column(self.column_ref(table, &c.value)?),
                (None, Some(e)) => IndexTarget::Expression(expression(self.dialect, &self.string(&e.value)?)),
                _ => {
                    return Err(self.invalid(
                        b.span(),
                        "`on` needs exactly one of `column` or `expr`".to_owned(),
                    ));
                }
            };
            let descending = match on.take("desc") {
                Some(a) => self.boolean(&a.value)?,
                None => false,
            };
            let prefix_length = match on.take("prefix") {
                Some(a) => Some(self.count(&a.value)?),
                None => None,
            };
            let opclass = match on.take("opclass") {
                Some(a) => Some(self.string(&a.value)?),
                None => None,
            };
            let nulls_first = match on.take("nulls") {
                Some(a) => match self.keyword(&a.value)?.to_ascii_uppercase().as_str() {
                    "FIRST" => Some(true),
                    "LAST" => Some(false),
                    other => {
                        return Err(self.invalid(a.span(), format!("`nulls` is FIRST or LAST, not {other}")));
                    }
                },
                None => None,
            };
            self.done(on)?;
            parts.push(IndexPart {
                target,
                descending,
                prefix_length,
                opclass,
                nulls_first: IndexPart::nulls_order(descending, nulls_first),
            });
        }
        if parts.is_empty() {
            return Err(self.invalid(
                block.span(),
                format!("index {name} needs `columns` or `on` blocks"),
            ));
        }
        let predicate = match attrs.take("where") {
            Some(a) => Some(expression(self.dialect, &self.string(&a.value)?)),
            None => None,
        };
        let method = match attrs.take("type") {
            Some(a) => Some(self.keyword(&a.value)?.to_ascii_lowercase()).filter(|m| m != "btree"),
            None => None,
        };
        let comment = match attrs.take("comment") {
            Some(a) => Some(self.string(&a.value)?),
            None => None,
        };
        let include = match attrs.take("include") {
            Some(a) => self.columns(table, Some(a), block)?,
            None => Vec::new(),
        };
        let nulls_not_distinct = match attrs.take("nulls_distinct") {
            Some(a) => !self.boolean(&a.value)?,
            None => false,
        };
        let mut storage = match attrs.take("storage") {
            Some(a) => self.strings(&a.value)?,
            None => Vec::new(),
        };
        storage.sort();
        self.done(attrs)?;
        let index = Index {
            name,
            unique,
            parts,
            predicate,
            method,
            include,
            nulls_not_distinct,
            storage,
        };
        Ok((index, comment))
    }

    /// An `identity` block's `start`, `increment`, `min`, `max`, `cache` and `cycle`, resolved
    /// for the column's type (`None` when they are its defaults).
    pub(super) fn identity_options(
        &self,
        attrs: &mut super::Attrs<'_>,
        data_type: &DataType,
        block: &Block,
    ) -> Result<Option<IdentityOptions>, ReadError> {
        let mut written = SequenceOptions::default();
        for (key, slot) in [
            ("start", &mut written.start),
            ("increment", &mut written.increment),
            ("min", &mut written.min),
            ("max", &mut written.max),
            ("cache", &mut written.cache),
        ] {
            if let Some(a) = attrs.take(key) {
                *slot = Some(self.integer(&a.value)?);
            }
        }
        if let Some(a) = attrs.take("cycle") {
            written.cycle = self.boolean(&a.value)?;
        }
        if written == SequenceOptions::default() {
            return Ok(None);
        }
        if written.increment == Some(0) {
            return Err(self.invalid(block.span(), "an identity's increment is never 0".to_owned()));
        }
        let Some(kind) = data_type.sequence_type() else {
            return Err(self.invalid(
                block.span(),
                "an identity column is smallint, integer or bigint".to_owned(),
            ));
        };
        Ok(IdentityOptions::resolve(&written, kind))
    }

    /// A `foreign_key` block's `match = FULL`, `deferrable` and `initially_deferred` (PostgreSQL).
    pub(super) fn foreign_key_options(
        &self,
        attrs: &mut super::Attrs<'_>,
    ) -> Result<ForeignKeyOptions, ReadError> {
        let mut o = ForeignKeyOptions::default();
        if let Some(a) = attrs.take("match") {
            o.match_full = match self.keyword(&a.value)?.to_ascii_uppercase().as_str() {
                "FULL" => true,
                "SIMPLE" => false,
                other => {
                    return Err(
                        self.invalid(a.value.span(), format!("match {other}: expected FULL or SIMPLE"))
                    );
                }
            };
        }
        if let Some(a) = attrs.take("initially_deferred") {
            o.initially_deferred = self.boolean(&a.value)?;
        }
        if let Some(a) = attrs.take("deferrable") {
            o.deferrable = self.boolean(&a.value)?;
        }
        // As the server has it: a key deferred at first is deferrable.
        o.deferrable |= o.initially_deferred;
        Ok(o)
    }

    pub(super) fn data(&self, table: &Table, block: &Block) -> Result<ReferenceRows, ReadError> {
        let (mut attrs, inner) = self.split("data", &block.body)?;
        self.no_blocks(&inner, "data")?;
        let key = self.columns(table, attrs.take("key"), block)?;
        let Some(rows_attr) = attrs.take("rows") else {
            return Err(self.invalid(block.span(), "data needs `rows`".to_owned()));
        };
        self.done(attrs)?;
        let Expression::Array(items) = &rows_attr.value else {
            return Err(self.invalid(rows_attr.value.span(), "expected a list of objects".to_owned()));
        };
        let mut rows = Vec::new();
        for item in items.iter() {
            let Expression::Object(object) = item else {
                return Err(self.invalid(item.span(), "expected an object".to_owned()));
            };
            let mut row = BTreeMap::new();
            for (k, v) in object.iter() {
                let column = match k {
                    hcl_edit::expr::ObjectKey::Ident(i) => i.as_str().to_owned(),
                    hcl_edit::expr::ObjectKey::Expression(e) => self.string(e)?,
                };
                if table.column(&column).is_none() {
                    return Err(ReadError::BadReference {
                        at: self.at(v.expr().span()),
                        what: format!("column {column} of {}", table.name),
                    });
                }
                if row.insert(column.clone(), self.literal(v.expr())?).is_some() {
                    return Err(ReadError::Duplicate {
                        at: self.at(v.expr().span()),
                        what: format!("value for {column}"),
                    });
                }
            }
            if let Some(missing) = key.iter().find(|k| !row.contains_key(*k)) {
                return Err(self.invalid(item.span(), format!("row has no value for key column {missing}")));
            }
            rows.push(row);
        }
        let key_of = |r: &BTreeMap<String, crate::model::Literal>| {
            key.iter().map(|k| r.get(k).cloned()).collect::<Vec<_>>()
        };
        rows.sort_by_key(key_of);
        if rows.windows(2).any(|w| key_of(&w[0]) == key_of(&w[1])) {
            return Err(ReadError::Duplicate {
                at: self.at(rows_attr.value.span()),
                what: "a row key".to_owned(),
            });
        }
        Ok(ReferenceRows { key, rows })
    }
}
