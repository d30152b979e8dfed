//! MySQL's `function`, `procedure` and `event` blocks and a view's options:
//!
//! ```hcl
//! function "get_title" { parameters = "`p_id` int", returns = "varchar(100)", deterministic = true,
//!                        data_access = "READS SQL DATA", sql_security = INVOKER, comment = "…",
//!                        as = "BEGIN … END" }
//! procedure "film_in_stock" { parameters = "IN `p_film_id` int, OUT `n` int", as = "BEGIN … END" }
//! event "nightly" { schedule = "EVERY 1 DAY", starts = "2030-01-01 00:00:00", ends = "…",
//!                   preserve = true, status = "DISABLE", comment = "…", as = "DELETE …" }
//! view "v" { algorithm = MERGE, sql_security = INVOKER, check_option = CASCADED, as = "select …" }
//! ```
//!
//! Parameter lists and types are brought to the canonical form the SQL reader and the inspector
//! use, so a hand-written `IN p INT` compares equal to the catalog's ``IN `p` int``.

use hcl_edit::Span;
use hcl_edit::structure::Block;

use crate::model::{Event, QualifiedName, StoredRoutine, StoredRoutineKind, ViewOptions};
use crate::normalize::{mysql_data_access, mysql_parameters, mysql_type};

use super::super::ReadError;
use super::{Attrs, Reader};

impl Reader<'_> {
    /// A MySQL `function` or `procedure` block.
    pub(super) fn mysql_routine_block(
        &mut self,
        block: &Block,
        kind: StoredRoutineKind,
    ) -> Result<(), ReadError> {
        let name = self.label(block)?;
        let (mut attrs, blocks) = self.split("routine", &block.body)?;
        self.no_blocks(&blocks, "routine")?;
        let procedure = kind == StoredRoutineKind::Procedure;
        let written = self
            .optional_string(&mut attrs, "parameters")?
            .unwrap_or_default();
        let parameters = mysql_parameters(&written, procedure).map_err(|m| self.invalid(block.span(), m))?;
        let returns = self
            .optional_string(&mut attrs, "returns")?
            .map(|r| mysql_type(&r));
        if procedure == returns.is_some() {
            return Err(self.invalid(
                block.span(),
                format!("a function needs `returns` and a procedure has none ({name})"),
            ));
        }
        let deterministic = attrs
            .take("deterministic")
            .map(|a| self.boolean(&a.value))
            .transpose()?
            .unwrap_or(false);
        let data_access = self
            .optional_string(&mut attrs, "data_access")?
            .and_then(|d| mysql_data_access(&d));
        let security_invoker = self.sql_security(&mut attrs)?;
        let comment = self.optional_string(&mut attrs, "comment")?;
        let body = match attrs.take("as") {
            Some(a) => self.string(&a.value)?.trim().to_owned(),
            None => return Err(self.invalid(block.span(), format!("routine {name} needs `as`"))),
        };
        self.done(attrs)?;
        let routine = StoredRoutine {
            name,
            kind,
            parameters,
            returns,
            deterministic,
            data_access,
            security_invoker,
            comment,
            body,
        };
        self.insert_unique(block, routine.key(), |s| &mut s.stored_routines, routine)
    }

    /// A MySQL `event` block.
    pub(super) fn event_block(&mut self, block: &Block) -> Result<(), ReadError> {
        let name = self.label(block)?;
        if self.dialect != crate::model::Dialect::Mysql {
            return Err(self.unsupported(block.span(), "events on PostgreSQL".to_owned()));
        }
        let (mut attrs, blocks) = self.split("event", &block.body)?;
        self.no_blocks(&blocks, "event")?;
        let Some(schedule) = self.optional_string(&mut attrs, "schedule")? else {
            return Err(self.invalid(block.span(), format!("event {name} needs `schedule`")));
        };
        let event = Event {
            name: name.clone(),
            schedule: schedule.split_whitespace().collect::<Vec<_>>().join(" "),
            starts: self.optional_string(&mut attrs, "starts")?,
            ends: self.optional_string(&mut attrs, "ends")?,
            preserve: attrs
                .take("preserve")
                .map(|a| self.boolean(&a.value))
                .transpose()?
                .unwrap_or(false),
            status: self
                .optional_string(&mut attrs, "status")?
                .map(|s| s.to_ascii_uppercase())
                .filter(|s| s != "ENABLE"),
            comment: self.optional_string(&mut attrs, "comment")?,
            body: match attrs.take("as") {
                Some(a) => self.string(&a.value)?.trim().to_owned(),
                None => return Err(self.invalid(block.span(), format!("event {name} needs `as`"))),
            },
        };
        self.done(attrs)?;
        self.insert_unique(block, QualifiedName::new("", name), |s| &mut s.events, event)
    }

    /// A MySQL view block's `algorithm`, `sql_security` and `check_option`.
    pub(super) fn view_options(&mut self, attrs: &mut Attrs<'_>, view: &str) -> Result<(), ReadError> {
        let mut options = ViewOptions::default();
        if let Some(a) = attrs.take("algorithm") {
            let value = self.keyword(&a.value)?.to_ascii_uppercase();
            match value.as_str() {
                "UNDEFINED" => {}
                "MERGE" | "TEMPTABLE" => options.algorithm = Some(value),
                other => {
                    let message = format!("algorithm {other}: expected UNDEFINED, MERGE or TEMPTABLE");
                    return Err(self.invalid(a.value.span(), message));
                }
            }
        }
        options.security_invoker = self.sql_security(attrs)?;
        if let Some(a) = attrs.take("check_option") {
            let value = self.keyword(&a.value)?.to_ascii_uppercase();
            match value.as_str() {
                "NONE" => {}
                "CASCADED" | "LOCAL" => options.check_option = Some(value),
                other => {
                    let message = format!("check_option {other}: expected NONE, CASCADED or LOCAL");
                    return Err(self.invalid(a.value.span(), message));
                }
            }
        }
        if !options.is_default() {
            self.schema.view_options.insert(view.to_owned(), options);
        }
        Ok(())
    }

    /// `sql_security = DEFINER | INVOKER`: whether it is `INVOKER`.
    fn sql_security(&self, attrs: &mut Attrs<'_>) -> Result<bool, ReadError> {
        let Some(a) = attrs.take("sql_security") else {
            return Ok(false);
        };
        match self.keyword(&a.value)?.to_ascii_uppercase().as_str() {
            "DEFINER" => Ok(false),
            "INVOKER" => Ok(true),
            other => Err(self.invalid(
                a.value.span(),
                format!("sql_security {other}: expected DEFINER or INVOKER"),
            )),
        }
    }

    fn optional_string(&self, attrs: &mut Attrs<'_>, key: &str) -> Result<Option<String>, ReadError> {
        attrs.take(key).map(|a| self.string(&a.value)).transpose()
    }
}
