//! MySQL/MariaDB stored programs the PostgreSQL-shaped model has no place for: view options,
//! stored functions and procedures, and scheduled events.
//!
//! They live in maps of their own on [`super::Schema`] (absent from the JSON when empty, so the
//! fingerprints of schemas without them are what they were). Every text is kept as the server
//! prints it (`information_schema`, `SHOW CREATE`), which is also what `mariadb-dump` writes, so
//! a dump and the database it came from compare as text. A `DEFINER` is never modelled: objects are
//! created as the applying user, as a restore by that user would.

use serde::{Deserialize, Serialize};

use super::keyed::Keyed;
use super::name::QualifiedName;

/// A MySQL view's options other than the defaults (`ALGORITHM=UNDEFINED`, `SQL SECURITY
/// DEFINER`, no check option). A view with only the defaults has no entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewOptions {
    /// `MERGE` or `TEMPTABLE`; `None` is `UNDEFINED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// `SQL SECURITY INVOKER` (the default is `DEFINER`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub security_invoker: bool,
    /// `CASCADED` or `LOCAL` (`WITH CHECK OPTION` alone is `CASCADED`); `None` is no check option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_option: Option<String>,
}

impl ViewOptions {
    /// Whether every option is the default, so that the view needs no entry.
    pub fn is_default(&self) -> bool {
        *self == ViewOptions::default()
    }
}

/// Whether a MySQL stored routine is a function or a procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoredRoutineKind {
    /// `CREATE FUNCTION`.
    Function,
    /// `CREATE PROCEDURE`.
    Procedure,
}

impl StoredRoutineKind {
    /// `FUNCTION` or `PROCEDURE`.
    pub fn keyword(self) -> &'static str {
        match self {
            StoredRoutineKind::Function => "FUNCTION",
            StoredRoutineKind::Procedure => "PROCEDURE",
        }
    }
}

/// A MySQL stored function or procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredRoutine {
    /// The routine's name.
    pub name: String,
    /// Function or procedure (they have separate namespaces on MySQL).
    pub kind: StoredRoutineKind,
    /// The parameter list in canonical form ([`crate::normalize::mysql_parameters`]): ``IN `a` int``
    /// for a procedure, `` `a` int`` for a function, comma-separated.
    pub parameters: String,
    /// A function's result type in canonical form; `None` for a procedure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
    /// `DETERMINISTIC`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deterministic: bool,
    /// `NO SQL`, `READS SQL DATA` or `MODIFIES SQL DATA`; `None` is the default `CONTAINS SQL`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_access: Option<String>,
    /// `SQL SECURITY INVOKER` (the default is `DEFINER`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub security_invoker: bool,
    /// The routine's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The body as written (`information_schema.ROUTINES.ROUTINE_DEFINITION`), trimmed.
    pub body: String,
}

impl StoredRoutine {
    /// The map key: `function f` or `procedure p`, because a function and a procedure may share a
    /// name.
    pub fn key(&self) -> QualifiedName {
        Self::key_for(self.kind, &self.name)
    }

    /// The map key of the routine of `kind` called `name`.
    pub fn key_for(kind: StoredRoutineKind, name: &str) -> QualifiedName {
        let kind = kind.keyword().to_ascii_lowercase();
        QualifiedName::new("", format!("{kind} {name}"))
    }
}

/// A MySQL scheduled event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The event's name.
    pub name: String,
    /// The schedule as `SHOW CREATE EVENT` prints it, `STARTS`/`ENDS` apart: `AT 'ts'` or
    /// `EVERY 1 DAY`, `EVERY '1:30' HOUR_MINUTE`.
    pub schedule: String,
    /// `STARTS 'ts'` of a recurring event. Compared only when declared: left out, the server
    /// takes the time of creation, which no document can know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts: Option<String>,
    /// `ENDS 'ts'` of a recurring event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends: Option<String>,
    /// `ON COMPLETION PRESERVE` (the default is `NOT PRESERVE`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preserve: bool,
    /// `DISABLE` or `DISABLE ON SLAVE`; `None` is the default `ENABLE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The event's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The body after `DO`, as written (`information_schema.EVENTS.EVENT_DEFINITION`), trimmed.
    pub body: String,
}

impl Event {
    /// Whether `live` is what `self` (the desired event) asks for: a `STARTS` left out matches
    /// any.
    pub fn matches(&self, live: &Event) -> bool {
        let starts = self.starts.is_none() || self.starts == live.starts;
        starts
            && Event {
                starts: live.starts.clone(),
                ..self.clone()
            } == *live
    }
}

impl Keyed for StoredRoutine {
    fn key(&self) -> QualifiedName {
        StoredRoutine::key(self)
    }
}

impl Keyed for Event {
    fn key(&self) -> QualifiedName {
        QualifiedName::new("", &self.name)
    }
}
