//! A restore script's preamble and the drops a dump writes before each program.
//!
//! MySQL: `DROP DATABASE|SCHEMA [IF EXISTS] x`, `CREATE DATABASE|SCHEMA [IF NOT EXISTS] x …`, `USE
//! x` and `ALTER DATABASE [x] …` are skipped and reported when `x` is the database the document
//! describes: the first database a script names is that one (its name is not compared with the
//! URL's, so a dump of `sakila` plans onto a copy under any name). A statement naming another
//! database is refused ([`ReadError::OtherDatabase`]): a document describes one database.
//!
//! PostgreSQL: `DROP SCHEMA IF EXISTS x [CASCADE]` of a schema the document has not declared
//! (yet) is skipped: a script that creates `x` next starts from nothing, which is what a plan
//! compares against anyway. Dropping a schema declared before is refused.
//!
//! MySQL `DROP FUNCTION|PROCEDURE|EVENT|TRIGGER [IF EXISTS] x` (a dump writes one before every
//! routine and event) is skipped when `x` is not declared yet, and refused when it is.

use sqlparser::ast::ObjectName;
use sqlparser::tokenizer::Token;

use crate::model::{QualifiedName, StoredRoutine, StoredRoutineKind};

use super::super::super::{IgnoreReason, Location, ReadError};
use super::super::Reader;

/// Words that start an `ALTER DATABASE` option, so no name stands before them.
const DATABASE_OPTIONS: &[&str] = &[
    "DEFAULT",
    "CHARACTER",
    "CHARSET",
    "COLLATE",
    "COMMENT",
    "UPGRADE",
    "READ",
];

impl Reader {
    /// `USE x`, `CREATE|DROP|ALTER DATABASE|SCHEMA x …`.
    pub(in super::super) fn mysql_database(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = super::lex::blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        c.i = 0;
        let (verb, _) = c.word_at();
        let verb = verb.unwrap_or_default();
        c.i += 1;
        let statement = if verb == "USE" {
            verb.clone()
        } else {
            let (kind, _) = c.word_at();
            c.i += 1;
            format!("{verb} {}", kind.unwrap_or_default())
        };
        if c.word_at().0.as_deref() == Some("IF") {
            c.i += if verb == "CREATE" { 3 } else { 2 };
        }
        let name = match c.peek() {
            Some(Token::Word(w))
                if !(w.quote_style.is_none()
                    && verb == "ALTER"
                    && DATABASE_OPTIONS.contains(&w.value.to_ascii_uppercase().as_str())) =>
            {
                Some(w.value.clone())
            }
            _ if verb == "ALTER" => None,
            _ => return Err(self.unsupported(&at, format!("{statement} without a database name"))),
        };
        if let Some(name) = name {
            match &self.target_database {
                None => self.target_database = Some(name),
                Some(target) if *target == name => {}
                Some(target) => {
                    return Err(ReadError::OtherDatabase {
                        at,
                        statement,
                        named: name,
                        target: target.clone(),
                    });
                }
            }
        }
        self.ignore(at, IgnoreReason::TargetDatabase, text);
        Ok(())
    }

    /// `DROP FUNCTION|PROCEDURE|EVENT|TRIGGER [IF EXISTS] x`.
    pub(in super::super) fn mysql_drop(&mut self, text: &str, at: Location) -> Result<(), ReadError> {
        let code = super::lex::blank_conditionals(text);
        let mut c = self.cursor(&code)?;
        let (kind, _) = c.word_at();
        let kind = kind.unwrap_or_default();
        c.i += 1;
        let if_exists = c.word_at().0.as_deref() == Some("IF");
        if if_exists {
            c.i += 2;
        }
        let (name, name_at) = self.name(&mut c, &at)?;
        let declared = match kind.as_str() {
            "FUNCTION" | "PROCEDURE" => {
                let routine_kind = if kind == "FUNCTION" {
                    StoredRoutineKind::Function
                } else {
                    StoredRoutineKind::Procedure
                };
                let key = StoredRoutine::key_for(routine_kind, &name.name);
                self.schema.stored_routines.contains_key(&key)
            }
            "EVENT" => self
                .schema
                .events
                .contains_key(&QualifiedName::new("", &name.name)),
            _ => self.schema.triggers.values().any(|t| t.name == name.name),
        };
        if declared {
            let what =
                format!("DROP {kind} of {name}, declared before it (a document declares, it does not drop)");
            return Err(self.unsupported(&name_at, what));
        }
        if !if_exists {
            return Err(ReadError::BadReference {
                at: name_at,
                what: format!("{} {name}", kind.to_ascii_lowercase()),
            });
        }
        self.ignore(at, IgnoreReason::UndeclaredDrop, text);
        Ok(())
    }

    /// PostgreSQL `DROP SCHEMA IF EXISTS x [CASCADE]`.
    pub(in super::super) fn drop_schema_if_exists(
        &mut self,
        names: &[ObjectName],
        at: Location,
    ) -> Result<(), ReadError> {
        for name in names {
            let schema = match name.0.as_slice() {
                [part] => part.as_ident().map(|i| self.ident(i)),
                _ => None,
            };
            let Some(schema) = schema else {
                return Err(self.unsupported(&at, format!("DROP SCHEMA {name}")));
            };
            if self.schema.namespaces.contains(&schema) {
                let what = format!(
                    "DROP SCHEMA of {schema}, declared before it (a document declares, it does not drop)"
                );
                return Err(self.unsupported(&at, what));
            }
        }
        let listed: Vec<String> = names.iter().map(ToString::to_string).collect();
        self.ignore(
            at,
            IgnoreReason::TargetDatabase,
            &format!("DROP SCHEMA IF EXISTS {}", listed.join(", ")),
        );
        Ok(())
    }
}
