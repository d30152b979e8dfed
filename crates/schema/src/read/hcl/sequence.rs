//! The `sequence` block (PostgreSQL):
//!
//! ```hcl
//! sequence "order_no" {
//!   schema = schema.shop, type = integer, start = 1000, increment = 1, min_value = 1,
//!   max_value = 99999999, cache = 20, cycle = false, owned_by = table.orders.column.number,
//!   comment = "…"
//! }
//! ```
//!
//! Left out, an option takes PostgreSQL's default for the type and direction; the owner is a
//! column of a table in the sequence's own schema, as PostgreSQL requires.

use hcl_edit::Span;
use hcl_edit::structure::Block;

use crate::model::{Dialect, QualifiedName, SequenceOptions, SequenceOwner, SequenceType};

use super::super::ReadError;
use super::Reader;

impl Reader<'_> {
    /// A `sequence` block.
    pub(super) fn sequence_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        if self.dialect != Dialect::Postgres {
            return Err(self.unsupported(block.span(), "sequences on MySQL".to_owned()));
        }
        let (mut attrs, blocks) = self.split("sequence", &block.body)?;
        self.no_blocks(&blocks, "sequence")?;
        let schema = self.schema_ref(attrs.take("schema"))?;
        let mut options = SequenceOptions::default();
        if let Some(a) = attrs.take("type") {
            let named = self.keyword(&a.value)?;
            options.data_type = Some(SequenceType::parse(&named).ok_or_else(|| {
                self.invalid(
                    a.value.span(),
                    format!("sequence type {named}: expected smallint, integer or bigint"),
                )
            })?);
        }
        let mut number = |key: &str| attrs.take(key).map(|a| self.integer(&a.value)).transpose();
        options.start = number("start")?;
        options.increment = number("increment")?;
        options.min = number("min_value")?;
        options.max = number("max_value")?;
        options.cache = number("cache")?;
        if options.increment == Some(0) {
            return Err(self.invalid(block.span(), format!("sequence {name}: increment must not be 0")));
        }
        options.cycle = attrs
            .take("cycle")
            .map(|a| self.boolean(&a.value))
            .transpose()?
            .unwrap_or(false);
        let owned_by = match attrs.take("owned_by") {
            None => None,
            Some(a) => match self.reference(&a.value)?.as_slice() {
                [t, table, c, column] if t == "table" && c == "column" => {
                    let table = QualifiedName::new(schema.clone(), table.clone());
                    if self
                        .schema
                        .tables
                        .get(&table)
                        .and_then(|t| t.column(column))
                        .is_none()
                    {
                        return Err(ReadError::BadReference {
                            at: self.at(a.value.span()),
                            what: format!("column {column} of {table}"),
                        });
                    }
                    Some(SequenceOwner {
                        table,
                        column: column.clone(),
                    })
                }
                _ => {
                    return Err(self.invalid(
                        a.value.span(),
                        "expected a reference like table.orders.column.id".to_owned(),
                    ));
                }
            },
        };
        let comment = attrs.take("comment").map(|a| self.string(&a.value)).transpose()?;
        self.done(attrs)?;
        let mut sequence = options.resolve(QualifiedName::new(schema, name));
        sequence.owned_by = owned_by;
        sequence.comment = comment;
        self.insert_unique(block, sequence.name.clone(), |s| &mut s.sequences, sequence)
    }
}
