//! The `schema.hcl` reader: Ptah's subset of the Atlas schema language.
//!
//! Top-level blocks: `schema "name" {}`, `extension "name" { schema, version }`,
//! `enum "name" { schema, values }`, `domain "name" { … }`, `sequence "name" { … }` ([`sequence`]),
//! `table "name" { … }`, and the program objects `view`,
//! `materialized`, `function`, `procedure` and `trigger` ([`program`]). Inside a table: `schema`, `comment`,
//! `column "name" { type, null, default, identity { generated }, as { expr, type }, auto_increment,
//! comment }`,
//! `primary_key ["name"] { columns }`, `unique "name" { columns }`,
//! `index "name" { unique, columns | on { column | expr, desc, prefix }…, where, type }`,
//! `foreign_key "name" { columns, ref_columns, on_delete, on_update }`, `check "name" { expr }`
//! and `data { key = [column.x], rows = [{ x = 1, … }] }` for reference rows; on PostgreSQL
//! `partition_by = "RANGE (at)"`, or `partition_of = "schema.parent"` with `partition_bound =
//! "FOR VALUES …"` (a partition declares no columns: they are its parent's; module `partition`).
//!
//! References are kept as written, not evaluated: `schema.app`, `column.id`,
//! `table.customers.column.id`, `enum.state`. Types are `bigint`, `varchar(255)`,
//! `enum("a","b")`, `enum.state` or `sql("timestamp(3) with time zone")`; defaults are literals or
//! `sql("now()")`. Columns are NOT NULL unless `null = true`. On MySQL a `schema` block names the
//! one database and tables live in `""`. Any other block or attribute is refused.

use std::collections::BTreeMap;

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Attribute, Block, BlockLabel, Body};

use crate::model::{Dialect, EXTENSION_CATALOG, EnumType, Extension, QualifiedName, RoutineKind, Schema};
use crate::names::Namer;

use super::check::{PendingForeignKey, foreign_keys};
use super::{Location, ReadError};

pub use depth::MAX_NESTING;

mod depth;
mod mysql;
mod partition;
mod parts;
mod program;
mod rename;
mod security;
mod sequence;
mod table;
mod value;

/// Reads a `schema.hcl` document; one nested deeper than [`MAX_NESTING`], or holding a template
/// directive, is refused before it is parsed.
pub fn parse(dialect: Dialect, file: &str, text: &str) -> Result<Schema, ReadError> {
    match depth::check(text) {
        Ok(()) => {}
        Err(depth::Refusal::TooDeep(offset)) => {
            return Err(ReadError::NestingTooDeep {
                at: super::LineIndex::new(text).locate(file, text, offset),
                limit: MAX_NESTING,
            });
        }
        Err(depth::Refusal::Directive(offset)) => {
            return Err(ReadError::Unsupported {
                at: super::LineIndex::new(text).locate(file, text, offset),
                what: "template directives (`%{`; write a literal one as `%%{`)".to_owned(),
            });
        }
    }
    let body = hcl_edit::parser::parse_body(text).map_err(|e| ReadError::Syntax {
        at: Location {
            file: file.to_owned(),
            line: e.location().line(),
            column: e.location().column(),
        },
        message: e.message().to_owned(),
    })?;
    let mut reader = Reader {
        dialect,
        file,
        text,
        lines: super::LineIndex::new(text),
        schema: Schema::default(),
        namer: Namer::new(dialect),
        pending: Vec::new(),
        mysql_database: None,
    };
    reader.document(&body)?;
    crate::model::inherit_partition_columns(&mut reader.schema.tables);
    foreign_keys(&mut reader.schema, &reader.pending)?;
    super::check::canonical_forms(reader.dialect, &mut reader.schema);
    super::check::renames(&reader.schema, file)?;
    Ok(reader.schema)
}

/// The reading state.
pub(crate) struct Reader<'a> {
    pub dialect: Dialect,
    pub file: &'a str,
    pub text: &'a str,
    pub lines: super::LineIndex,
    pub schema: Schema,
    pub namer: Namer,
    pub pending: Vec<PendingForeignKey>,
    pub mysql_database: Option<String>,
}

/// A block's attributes by name, taken one by one; what is left is refused.
pub(crate) struct Attrs<'b> {
    pub block: String,
    map: BTreeMap<String, &'b Attribute>,
}

impl<'b> Attrs<'b> {
    /// Takes an attribute.
    pub fn take(&mut self, name: &str) -> Option<&'b Attribute> {
        self.map.remove(name)
    }
}

impl<'a> Reader<'a> {
    pub fn at(&self, span: Option<std::ops::Range<usize>>) -> Location {
        self.lines
            .locate(self.file, self.text, span.map_or(0, |s| s.start))
    }

    pub fn unsupported(&self, span: Option<std::ops::Range<usize>>, what: String) -> ReadError {
        ReadError::Unsupported {
            at: self.at(span),
            what,
        }
    }

    pub fn invalid(&self, span: Option<std::ops::Range<usize>>, message: String) -> ReadError {
        ReadError::Invalid {
            at: self.at(span),
            message,
        }
    }

    /// Splits a body into attributes (duplicates refused) and blocks.
    pub fn split<'b>(&self, owner: &str, body: &'b Body) -> Result<(Attrs<'b>, Vec<&'b Block>), ReadError> {
        let mut map = BTreeMap::new();
        for attr in body.attributes() {
            let key = attr.key.as_str().to_owned();
            if map.insert(key.clone(), attr).is_some() {
                return Err(ReadError::Duplicate {
                    at: self.at(attr.span()),
                    what: format!("attribute {key}"),
                });
            }
        }
        Ok((
            Attrs {
                block: owner.to_owned(),
                map,
            },
            body.blocks().collect(),
        ))
    }

    /// Refuses whatever attribute is left.
    pub fn done(&self, attrs: Attrs<'_>) -> Result<(), ReadError> {
        match attrs.map.into_iter().next() {
            None => Ok(()),
            Some((key, attr)) => {
                Err(self.unsupported(attr.span(), format!("attribute `{key}` in {}", attrs.block)))
            }
        }
    }

    /// The block's labels as strings.
    pub fn labels(&self, block: &Block) -> Vec<String> {
        block
            .labels
            .iter()
            .map(|l| match l {
                BlockLabel::Ident(i) => i.as_str().to_owned(),
                BlockLabel::String(s) => s.value().clone(),
            })
            .collect()
    }

    /// The block's single label.
    pub fn label(&self, block: &Block) -> Result<String, ReadError> {
        match self.labels(block).as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(self.invalid(
                block.span(),
                format!("block `{}` needs exactly one label", block.ident.as_str()),
            )),
        }
    }

    /// Refuses any nested block.
    pub fn no_blocks(&self, blocks: &[&Block], owner: &str) -> Result<(), ReadError> {
        match blocks.first() {
            None => Ok(()),
            Some(b) => Err(self.unsupported(b.span(), format!("block `{}` in {owner}", b.ident.as_str()))),
        }
    }

    /// The schema a `schema = schema.x` attribute names (`public` / `""` when absent).
    pub fn schema_ref(&self, attr: Option<&Attribute>) -> Result<String, ReadError> {
        let Some(attr) = attr else {
            return Ok(match self.dialect {
                Dialect::Postgres => "public".to_owned(),
                Dialect::Mysql => String::new(),
            });
        };
        let path = self.reference(&attr.value)?;
        match path.as_slice() {
            [kind, name] if kind == "schema" => match self.dialect {
                Dialect::Postgres if name == "public" || self.schema.namespaces.contains(name) => {
                    Ok(name.clone())
                }
                Dialect::Mysql if self.mysql_database.as_ref() == Some(name) => Ok(String::new()),
                _ => Err(ReadError::BadReference {
                    at: self.at(attr.value.span()),
                    what: format!("schema {name}"),
                }),
            },
            _ => Err(self.invalid(
                attr.value.span(),
                "expected a reference like schema.app".to_owned(),
            )),
        }
    }

    fn document(&mut self, body: &Body) -> Result<(), ReadError> {
        if let Some(attr) = body.attributes().next() {
            return Err(self.unsupported(
                attr.span(),
                format!("top-level attribute `{}`", attr.key.as_str()),
            ));
        }
        let blocks: Vec<&Block> = body.blocks().collect();
        // Schemas first, then types and extensions, then tables: references may point forward.
        for b in &blocks {
            match b.ident.as_str() {
                "schema" => self.schema_block(b)?,
                "enum" | "extension" | "domain" | "table" | "view" | "materialized" | "function"
                | "procedure" | "trigger" | "sequence" | "event" => {}
                "aggregate" if self.dialect == Dialect::Postgres => {}
                other => return Err(self.unsupported(b.span(), format!("block `{other}`"))),
            }
        }
        for b in &blocks {
            match b.ident.as_str() {
                "enum" => self.enum_block(b)?,
                "extension" => self.extension_block(b)?,
                "domain" => self.domain_block(b)?,
                _ => {}
            }
        }
        let tables: Vec<&Block> = blocks
            .iter()
            .copied()
            .filter(|b| b.ident.as_str() == "table")
            .collect();
        for b in &tables {
            self.declare_table(b)?;
        }
        // A partition takes its parent's columns, so parents are read first.
        for b in partition::parents_first(self, &tables) {
            self.table_block(b)?;
        }
        for b in &blocks {
            match b.ident.as_str() {
                "view" => self.view_block(b, false)?,
                "materialized" => self.view_block(b, true)?,
                "sequence" => self.sequence_block(b)?,
                "function" => self.routine_block(b, RoutineKind::Function)?,
                "procedure" => self.routine_block(b, RoutineKind::Procedure)?,
                "aggregate" => self.routine_block(b, RoutineKind::Aggregate)?,
                "trigger" => self.trigger_block(b)?,
                "event" => self.event_block(b)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn schema_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        let (attrs, blocks) = self.split("schema", &block.body)?;
        self.done(attrs)?;
        self.no_blocks(&blocks, "schema")?;
        let duplicate = match self.dialect {
            Dialect::Postgres => !self.schema.namespaces.insert(name.clone()),
            Dialect::Mysql => self.mysql_database.replace(name.clone()).is_some(),
        };
        if duplicate {
            return Err(ReadError::Duplicate {
                at: self.at(block.span()),
                what: format!("schema {name}"),
            });
        }
        Ok(())
    }

    fn enum_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        if self.dialect != Dialect::Postgres {
            return Err(self.unsupported(
                block.span(),
                "enum blocks on MySQL (use type = enum(\"a\", …))".to_owned(),
            ));
        }
        let (mut attrs, blocks) = self.split("enum", &block.body)?;
        self.no_blocks(&blocks, "enum")?;
        let schema = self.schema_ref(attrs.take("schema"))?;
        let values = match attrs.take("values") {
            Some(a) => self.strings(&a.value)?,
            None => return Err(self.invalid(block.span(), format!("enum {name} needs `values`"))),
        };
        self.done(attrs)?;
        let q = QualifiedName::new(schema, name);
        if self.schema.enums.contains_key(&q) {
            return Err(ReadError::Duplicate {
                at: self.at(block.span()),
                what: format!("enum {q}"),
            });
        }
        self.schema.enums.insert(q.clone(), EnumType { name: q, values });
        Ok(())
    }

    fn extension_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        if self.dialect != Dialect::Postgres {
            return Err(self.unsupported(block.span(), "extension blocks on MySQL".to_owned()));
        }
        let (mut attrs, blocks) = self.split("extension", &block.body)?;
        self.no_blocks(&blocks, "extension")?;
        let schema = match attrs.take("schema") {
            Some(a) => Some(match self.reference(&a.value)?.as_slice() {
                [kind, name] if kind == "schema" && name == EXTENSION_CATALOG => name.clone(),
                _ => self.schema_ref(Some(a))?,
            }),
            None => None,
        };
        let version = match attrs.take("version") {
            Some(a) => Some(self.string(&a.value)?),
            None => None,
        };
        self.done(attrs)?;
        if self.schema.extensions.contains_key(&name) {
            return Err(ReadError::Duplicate {
                at: self.at(block.span()),
                what: format!("extension {name}"),
            });
        }
        self.schema.extensions.insert(
            name.clone(),
            Extension {
                name,
                schema,
                version,
            },
        );
        Ok(())
    }

    /// Evaluates nothing: returns a traversal's path (`table.customers.column.id` → 4 names).
    pub fn reference(&self, expr: &Expression) -> Result<Vec<String>, ReadError> {
        use hcl_edit::expr::TraversalOperator;
        let bad = || self.invalid(expr.span(), "expected a reference such as column.id".to_owned());
        let Expression::Traversal(t) = expr else {
            return Err(bad());
        };
        let Expression::Variable(root) = &t.expr else {
            return Err(bad());
        };
        let mut path = vec![root.as_str().to_owned()];
        for op in &t.operators {
            match op.value() {
                TraversalOperator::GetAttr(i) => path.push(i.as_str().to_owned()),
                TraversalOperator::Index(Expression::String(s)) => path.push(s.value().clone()),
                _ => return Err(bad()),
            }
        }
        Ok(path)
    }
}
