//! Partitioning in `schema.hcl` (PostgreSQL): `partition_by = "RANGE (created_at)"` on a
//! partitioned table; `partition_of = "app.events"` and `partition_bound = "FOR VALUES FROM (…)
//! TO (…)"` (or `"DEFAULT"`) on a partition, which declares no columns (they are its parent's).

use hcl_edit::Span;
use hcl_edit::structure::Block;

use crate::model::{
    Dialect, PartitionOf, QualifiedName, Table, is_partition_bound, is_partition_key, partition_bound,
    partition_key,
};

use super::super::ReadError;
use super::{Attrs, Reader};

/// The table blocks with every partition after its parent (then in document order).
pub(super) fn parents_first<'b>(reader: &Reader<'_>, tables: &[&'b Block]) -> Vec<&'b Block> {
    let named: Vec<(&Block, QualifiedName, Option<QualifiedName>)> = tables
        .iter()
        .map(|b| {
            let name = reader.label(b).unwrap_or_default();
            let schema = b
                .body
                .attributes()
                .find(|a| a.key.as_str() == "schema")
                .and_then(|a| reader.schema_ref(Some(a)).ok())
                .unwrap_or_default();
            (*b, QualifiedName::new(schema, name), parent_of(reader, b))
        })
        .collect();
    let mut placed: Vec<&QualifiedName> = Vec::new();
    let mut out = Vec::with_capacity(named.len());
    let mut remaining: Vec<usize> = (0..named.len()).collect();
    while !remaining.is_empty() {
        let waits = |i: &usize| {
            named[*i].2.as_ref().is_some_and(|p| {
                !placed.contains(&p) && remaining.iter().any(|j| named[*j].1 == *p && j != i)
            })
        };
        let ready: Vec<usize> = remaining.iter().copied().filter(|i| !waits(i)).collect();
        // A cycle of partitions is an error the reader reports on the first of them.
        let ready = if ready.is_empty() {
            remaining.clone()
        } else {
            ready
        };
        for i in &ready {
            out.push(named[*i].0);
            placed.push(&named[*i].1);
        }
        remaining.retain(|i| !ready.contains(i));
    }
    out
}

/// The `partition_of` a table block names, if any.
fn parent_of(reader: &Reader<'_>, block: &Block) -> Option<QualifiedName> {
    let attr = block
        .body
        .attributes()
        .find(|a| a.key.as_str() == "partition_of")?;
    let text = reader.string(&attr.value).ok()?;
    let (schema, name) = text.split_once('.')?;
    Some(QualifiedName::new(schema, name))
}

impl Reader<'_> {
    /// Reads a table's `partition_by`, `partition_of` and `partition_bound`.
    pub(super) fn partitioning(
        &self,
        table: &mut Table,
        attrs: &mut Attrs<'_>,
        block: &Block,
    ) -> Result<(), ReadError> {
        let by = attrs.take("partition_by");
        let of = attrs.take("partition_of");
        let bound = attrs.take("partition_bound");
        if self.dialect == Dialect::Mysql {
            if let Some(a) = of.or(bound) {
                return Err(self.unsupported(a.span(), "partition_of on MySQL".to_owned()));
            }
            // MySQL's whole clause, as `schema inspect` writes it (`normalize::MysqlPartitioning`).
            if let Some(a) = by {
                let clause = self.string(&a.value)?;
                if !clause.to_ascii_uppercase().starts_with("PARTITION BY ") {
                    let message = "partition_by is \"PARTITION BY RANGE|LIST|HASH|KEY (…) …\"".to_owned();
                    return Err(self.invalid(a.value.span(), message));
                }
                table.partition_by = Some(clause);
            }
            return Ok(());
        }
        if let Some(a) = by {
            let key = partition_key(&self.string(&a.value)?);
            if !is_partition_key(&key) {
                return Err(self.invalid(
                    a.value.span(),
                    "partition_by is \"RANGE|LIST|HASH (…)\"".to_owned(),
                ));
            }
            table.partition_by = Some(key);
        }
        match (of, bound) {
            (None, None) => Ok(()),
            (Some(of), Some(bound)) => {
                let Some(parent) = parent_of(self, block) else {
                    return Err(
                        self.invalid(of.value.span(), "partition_of takes \"schema.table\"".to_owned())
                    );
                };
                let Some(columns) = self
                    .schema
                    .tables
                    .get(&parent)
                    .map(|p| (p.partition_by.is_some(), p.columns.clone()))
                else {
                    return Err(ReadError::BadReference {
                        at: self.at(of.value.span()),
                        what: format!("table {parent}"),
                    });
                };
                if !columns.0 {
                    return Err(self.invalid(
                        of.value.span(),
                        format!("{parent} has no partition_by: it has no partitions"),
                    ));
                }
                let text = partition_bound(&self.string(&bound.value)?);
                if !is_partition_bound(&text) {
                    return Err(self.invalid(
                        bound.value.span(),
                        "partition_bound is \"FOR VALUES …\" or \"DEFAULT\"".to_owned(),
                    ));
                }
                table.columns = columns.1;
                table.partition_of = Some(PartitionOf { parent, bound: text });
                Ok(())
            }
            (Some(a), None) | (None, Some(a)) => Err(self.invalid(
                a.span(),
                "partition_of and partition_bound go together".to_owned(),
            )),
        }
    }
}
