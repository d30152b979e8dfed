//! The `view`, `materialized`, `function`, `procedure` and `trigger` blocks:
//!
//! ```hcl
//! view "active_users" { schema = schema.app, comment = "…", as = "SELECT …" }
//! materialized "totals" { schema = schema.app, as = "SELECT …" }
//! function "touch" { schema = schema.app, arguments = "", returns = "trigger",
//!                    language = "plpgsql", volatility = STABLE, strict = true,
//!                    security_definer = true, identity = "…", comment = "…", as = "BEGIN … END" }
//! trigger "users_touch" { schema = schema.app, on = table.users, as = "CREATE TRIGGER …" }
//! ```
//!
//! Functions, procedures and materialized views are PostgreSQL's; `identity` (the argument types
//! that tell overloads apart) defaults to `arguments`.

use hcl_edit::Span;
use hcl_edit::structure::Block;

use crate::model::{
    Dialect, Literal, Parallel, QualifiedName, Routine, RoutineKind, RoutineOptions, Trigger, View,
    Volatility,
};

use super::super::ReadError;
use super::Reader;

impl Reader<'_> {
    /// A `view` or `materialized` block.
    pub(super) fn view_block(&mut self, block: &Block, materialized: bool) -> Result<(), ReadError> {
        let name = self.label(block)?;
        if materialized && self.dialect != Dialect::Postgres {
            return Err(self.unsupported(block.span(), "materialized views on MySQL".to_owned()));
        }
        let (mut attrs, blocks) = self.split("view", &block.body)?;
        self.no_blocks(&blocks, "view")?;
        let schema = self.schema_ref(attrs.take("schema"))?;
        let definition = self.required(&mut attrs, block, "as")?;
        let comment = attrs.take("comment").map(|a| self.string(&a.value)).transpose()?;
        if self.dialect == Dialect::Mysql {
            self.view_options(&mut attrs, &name)?;
        }
        self.done(attrs)?;
        let view = View {
            name: QualifiedName::new(schema, name),
            materialized,
            definition: View::canonical_definition(&definition),
            comment,
        };
        self.insert_unique(block, view.name.clone(), |s| &mut s.views, view)
    }

    /// A `function`, `procedure` or (PostgreSQL) `aggregate` block.
    pub(super) fn routine_block(&mut self, block: &Block, kind: RoutineKind) -> Result<(), ReadError> {
        if self.dialect == Dialect::Mysql {
            let kind = match kind {
                RoutineKind::Procedure => crate::model::StoredRoutineKind::Procedure,
                _ => crate::model::StoredRoutineKind::Function,
            };
            return self.mysql_routine_block(block, kind);
        }
        let name = self.label(block)?;
        let (mut attrs, blocks) = self.split("routine", &block.body)?;
        self.no_blocks(&blocks, "routine")?;
        let schema = self.schema_ref(attrs.take("schema"))?;
        let arguments = attrs
            .take("arguments")
            .map(|a| self.string(&a.value))
            .transpose()?
            .unwrap_or_default();
        let identity_arguments = match attrs.take("identity") {
            Some(a) => self.string(&a.value)?,
            None => arguments.clone(),
        };
        let returns = attrs.take("returns").map(|a| self.string(&a.value)).transpose()?;
        if (kind == RoutineKind::Function) != returns.is_some() {
            return Err(self.invalid(
                block.span(),
                format!("a function needs `returns`; a procedure or aggregate has none ({name})"),
            ));
        }
        // An aggregate's catalog row says `internal`; its `as` is its options' text.
        let language = if kind == RoutineKind::Aggregate {
            "internal".to_owned()
        } else {
            self.required(&mut attrs, block, "language")?
        };
        let volatility = match attrs.take("volatility") {
            None => Volatility::Volatile,
            Some(a) => match self.keyword(&a.value)?.to_ascii_uppercase().as_str() {
                "VOLATILE" => Volatility::Volatile,
                "STABLE" => Volatility::Stable,
                "IMMUTABLE" => Volatility::Immutable,
                other => {
                    return Err(self.invalid(
                        a.value.span(),
                        format!("volatility {other}: expected VOLATILE, STABLE or IMMUTABLE"),
                    ));
                }
            },
        };
        let strict = attrs
            .take("strict")
            .map(|a| self.boolean(&a.value))
            .transpose()?
            .unwrap_or(false);
        let security_definer = attrs
            .take("security_definer")
            .map(|a| self.boolean(&a.value))
            .transpose()?
            .unwrap_or(false);
        let comment = attrs.take("comment").map(|a| self.string(&a.value)).transpose()?;
        let body = self.required(&mut attrs, block, "as")?;
        let options = self.routine_options(&mut attrs)?;
        self.done(attrs)?;
        let routine = Routine {
            name: QualifiedName::new(schema, name),
            kind,
            arguments,
            identity_arguments,
            returns,
            language: language.to_ascii_lowercase(),
            body,
            volatility,
            strict,
            security_definer,
            comment,
            options,
        };
        self.insert_unique(block, routine.key(), |s| &mut s.routines, routine)
    }

    /// `settings`, `parallel`, `leakproof`, `cost` and `rows` of a routine block.
    fn routine_options(&self, attrs: &mut super::Attrs<'_>) -> Result<RoutineOptions, ReadError> {
        let mut o = RoutineOptions::default();
        if let Some(a) = attrs.take("settings") {
            o.settings = self.strings(&a.value)?;
        }
        if let Some(a) = attrs.take("parallel") {
            o.parallel = match self.keyword(&a.value)?.to_ascii_uppercase().as_str() {
                "UNSAFE" => None,
                "SAFE" => Some(Parallel::Safe),
                "RESTRICTED" => Some(Parallel::Restricted),
                other => {
                    let why = format!("parallel {other}: expected SAFE, RESTRICTED or UNSAFE");
                    return Err(self.invalid(a.value.span(), why));
                }
            };
        }
        if let Some(a) = attrs.take("leakproof") {
            o.leakproof = self.boolean(&a.value)?;
        }
        for (key, default) in [("cost", 100.0), ("rows", 1000.0)] {
            let Some(a) = attrs.take(key) else { continue };
            let text = match self.literal(&a.value)? {
                Literal::Number(n) | Literal::String(n) if n.parse::<f32>().is_ok() => n,
                _ => return Err(self.invalid(a.value.span(), format!("`{key}` is a number"))),
            };
            let estimate = RoutineOptions::estimate(&text, default);
            if key == "cost" {
                o.cost = estimate;
            } else {
                o.rows = estimate;
            }
        }
        Ok(o)
    }

    /// A `trigger` block.
    pub(super) fn trigger_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        let (mut attrs, blocks) = self.split("trigger", &block.body)?;
        self.no_blocks(&blocks, "trigger")?;
        let schema = self.schema_ref(attrs.take("schema"))?;
        let Some(on) = attrs.take("on") else {
            return Err(self.invalid(block.span(), format!("trigger {name} needs `on = table.<name>`")));
        };
        let table = match self.reference(&on.value)?.as_slice() {
            [kind, table] if kind == "table" => QualifiedName::new(schema, table.clone()),
            _ => {
                return Err(self.invalid(
                    on.value.span(),
                    "expected a reference like table.users".to_owned(),
                ));
            }
        };
        if !self.schema.tables.contains_key(&table) {
            return Err(ReadError::BadReference {
                at: self.at(on.value.span()),
                what: format!("table {table}"),
            });
        }
        let definition = self.required(&mut attrs, block, "as")?;
        let comment = match attrs.take("comment") {
            Some(a) if self.dialect == Dialect::Postgres => Some(self.string(&a.value)?),
            Some(a) => return Err(self.unsupported(a.span(), "trigger comments on MySQL".to_owned())),
            None => None,
        };
        self.done(attrs)?;
        let trigger = Trigger {
            table,
            name,
            definition: Trigger::canonical_definition(&definition),
            comment,
        };
        self.insert_unique(block, trigger.key(), |s| &mut s.triggers, trigger)
    }

    fn required(&self, attrs: &mut super::Attrs<'_>, block: &Block, key: &str) -> Result<String, ReadError> {
        match attrs.take(key) {
            Some(a) => self.string(&a.value),
            None => Err(self.invalid(
                block.span(),
                format!("{} block needs `{key}`", block.ident.as_str()),
            )),
        }
    }

    pub(super) fn insert_unique<T>(
        &mut self,
        block: &Block,
        key: QualifiedName,
        map: impl FnOnce(&mut crate::model::Schema) -> &mut std::collections::BTreeMap<QualifiedName, T>,
        value: T,
    ) -> Result<(), ReadError> {
        let map = map(&mut self.schema);
        if map.contains_key(&key) {
            return Err(ReadError::Duplicate {
                at: self.at(block.span()),
                what: format!("{} {key}", block.ident.as_str()),
            });
        }
        map.insert(key, value);
        Ok(())
    }
}

impl Reader<'_> {
    /// A `domain` block: `schema`, `type`, `collate`, `default`, `not_null`, `comment` and
    /// `check "name" { expr }` blocks, every part as the server prints it.
    pub(super) fn domain_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        if self.dialect != Dialect::Postgres {
            return Err(self.unsupported(block.span(), "domains on MySQL".to_owned()));
        }
        let (mut attrs, blocks) = self.split("domain", &block.body)?;
        let schema = self.schema_ref(attrs.take("schema"))?;
        let base = crate::normalize::domain_base(&self.required(&mut attrs, block, "type")?);
        let collation = attrs.take("collate").map(|a| self.string(&a.value)).transpose()?;
        let default = attrs
            .take("default")
            .map(|a| self.default(&a.value))
            .transpose()?;
        let not_null = attrs
            .take("not_null")
            .map(|a| self.boolean(&a.value))
            .transpose()?
            .unwrap_or(false);
        let comment = attrs.take("comment").map(|a| self.string(&a.value)).transpose()?;
        self.done(attrs)?;
        let mut checks = std::collections::BTreeMap::new();
        for b in blocks {
            if b.ident.as_str() != "check" {
                return Err(self.unsupported(b.span(), format!("block `{}` in domain", b.ident.as_str())));
            }
            let check = self.label(b)?;
            let (mut inner, nested) = self.split("check", &b.body)?;
            self.no_blocks(&nested, "check")?;
            let expr = self.required(&mut inner, b, "expr")?;
            self.done(inner)?;
            checks.insert(check, crate::normalize::domain_check(&expr));
        }
        let domain = crate::model::Domain {
            name: QualifiedName::new(schema, name),
            base,
            collation,
            default,
            not_null,
            checks,
            comment,
        };
        self.insert_unique(block, domain.name.clone(), |s| &mut s.domains, domain)
    }
}
