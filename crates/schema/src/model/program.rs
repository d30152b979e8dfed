//! The objects that hold code rather than rows: views, routines and triggers.
//!
//! Their bodies are compared as the server prints them. A definition read from a dump already is
//! that text; a hand-written one is brought to it by the engine before comparing (PostgreSQL
//! creates it once in a rolled-back transaction and reads it back), so the differ compares text.

use serde::{Deserialize, Serialize};

use super::keyed::Keyed;
use super::name::QualifiedName;

/// A view, or a PostgreSQL materialized view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct View {
    /// The view's name.
    pub name: QualifiedName,
    /// PostgreSQL `MATERIALIZED VIEW`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub materialized: bool,
    /// The query (`SELECT …`), as the server prints it: see [`View::canonical_definition`].
    pub definition: String,
    /// The view's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl View {
    /// A view's query without what never changes its meaning: surrounding whitespace, a trailing
    /// `;`, trailing spaces on lines, and blank lines.
    pub fn canonical_definition(text: &str) -> String {
        let text = text.trim();
        let text = text.strip_suffix(';').unwrap_or(text).trim_end();
        text.lines()
            .map(str::trim_end)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Whether a routine is a function or a procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutineKind {
    /// `CREATE FUNCTION`.
    Function,
    /// `CREATE PROCEDURE`.
    Procedure,
    /// `CREATE AGGREGATE`: [`Routine::body`] holds its options (`SFUNC = public.f,\n    STYPE =
    /// text`) as pg_dump prints them, see [`Routine::aggregate_definition`]; it has no result
    /// text of its own (`returns` is `None`) and its language is `internal`.
    Aggregate,
}

/// A function's volatility class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Volatility {
    /// `VOLATILE` (the default).
    #[default]
    Volatile,
    /// `STABLE`.
    Stable,
    /// `IMMUTABLE`.
    Immutable,
}

/// A PostgreSQL function or procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Routine {
    /// The routine's name (without arguments).
    pub name: QualifiedName,
    /// Function or procedure.
    pub kind: RoutineKind,
    /// The argument list as the catalog prints it (`pg_get_function_arguments`: names, modes,
    /// types and defaults).
    pub arguments: String,
    /// The argument types that identify the routine among its overloads
    /// (`pg_get_function_identity_arguments`).
    pub identity_arguments: String,
    /// What a function returns, as the catalog prints it (`pg_get_function_result`); `None` for a
    /// procedure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returns: Option<String>,
    /// The language (`plpgsql`, `sql`, …).
    pub language: String,
    /// The body between the dollar quotes, exactly as written.
    pub body: String,
    /// The volatility class.
    #[serde(default)]
    pub volatility: Volatility,
    /// `STRICT` (`RETURNS NULL ON NULL INPUT`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
    /// `SECURITY DEFINER`: the body runs with its owner's privileges.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub security_definer: bool,
    /// The routine's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Settings, parallel safety, leakproofness and planner estimates, where not the defaults.
    /// Absent from the JSON when all are defaults, so older fingerprints stay valid.
    #[serde(default, skip_serializing_if = "RoutineOptions::is_default")]
    pub options: RoutineOptions,
}

/// A PostgreSQL function's attributes beyond its body and volatility, as `pg_proc` holds them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RoutineOptions {
    /// `SET name = value` clauses as `proconfig` holds them (`search_path=public, pg_temp`), in
    /// declared order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// `PARALLEL SAFE` or `RESTRICTED`; `None` is the default, `UNSAFE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Parallel>,
    /// `LEAKPROOF`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub leakproof: bool,
    /// `COST n` when not the default 100, as [`RoutineOptions::estimate`] spells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<String>,
    /// `ROWS n` of a set-returning function when not the default 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<String>,
}

impl RoutineOptions {
    /// Whether every option is the default (nothing to write or compare).
    pub fn is_default(&self) -> bool {
        *self == RoutineOptions::default()
    }

    /// A planner estimate in one spelling: the `float4` the catalog keeps, printed shortest
    /// (`10`, `0.5`), or `None` when it is `default` or not a number.
    pub fn estimate(text: &str, default: f32) -> Option<String> {
        let value: f32 = text.trim().parse().ok()?;
        (value != default).then(|| value.to_string())
    }

    /// Whether a setting's value is a list of names the server quotes as identifiers
    /// (`GUC_LIST_QUOTE`), as in `search_path="$user", public`.
    pub fn quotes_names(setting: &str) -> bool {
        matches!(
            setting,
            "search_path"
                | "temp_tablespaces"
                | "session_preload_libraries"
                | "shared_preload_libraries"
                | "local_preload_libraries"
        )
    }
}

/// A function's parallel safety other than the default (`UNSAFE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Parallel {
    /// `PARALLEL SAFE`.
    Safe,
    /// `PARALLEL RESTRICTED`.
    Restricted,
}

/// The options of `CREATE AGGREGATE` the model holds, in the order pg_dump prints them; the
/// others (moving-aggregate `MSFUNC`…, ordered-set `HYPOTHETICAL`, the old `BASETYPE` form) are
/// refused by the SQL reader and listed as not managed by inspection.
pub const AGGREGATE_OPTIONS: &[&str] = &[
    "SFUNC",
    "STYPE",
    "SSPACE",
    "INITCOND",
    "FINALFUNC",
    "FINALFUNC_EXTRA",
    "FINALFUNC_MODIFY",
    "COMBINEFUNC",
    "SERIALFUNC",
    "DESERIALFUNC",
    "SORTOP",
    "PARALLEL",
];

impl Routine {
    /// An aggregate's definition from its options (`("SFUNC", Some("public.f"))`, a flag such as
    /// `FINALFUNC_EXTRA` without a value), each already in the catalog's spelling: ordered as
    /// [`AGGREGATE_OPTIONS`] and joined as pg_dump joins them, so a dump's text reads as is.
    pub fn aggregate_definition(options: &[(String, Option<String>)]) -> String {
        let mut sorted: Vec<&(String, Option<String>)> = options.iter().collect();
        sorted.sort_by_key(|(key, _)| AGGREGATE_OPTIONS.iter().position(|k| k == key));
        sorted
            .iter()
            .map(|(key, value)| match value {
                Some(v) => format!("{key} = {v}"),
                None => key.clone(),
            })
            .collect::<Vec<_>>()
            .join(",\n    ")
    }

    /// The map key: the name with its identity arguments, `schema.f(integer, text)`, because
    /// overloads are distinct objects.
    pub fn key(&self) -> QualifiedName {
        QualifiedName::new(
            self.name.schema.clone(),
            format!("{}({})", self.name.name, self.identity_arguments),
        )
    }
}

/// A trigger on a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trigger {
    /// The table it fires on.
    pub table: QualifiedName,
    /// The trigger's name (unique per table on PostgreSQL, per database on MySQL).
    pub name: String,
    /// The whole `CREATE TRIGGER` statement as the server prints it (PostgreSQL
    /// `pg_get_triggerdef` with every name qualified; MySQL rebuilt from `information_schema`).
    pub definition: String,
    /// PostgreSQL: the trigger's comment (`COMMENT ON TRIGGER … ON …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl Trigger {
    /// A trigger statement without what never changes its meaning: surrounding whitespace and
    /// trailing `;` (a MySQL body read up to the end of a file keeps its last delimiter, and
    /// HCL drops it). Idempotent, so every reader can apply it.
    pub fn canonical_definition(text: &str) -> String {
        text.trim_start()
            .trim_end_matches(|c: char| c == ';' || c.is_whitespace())
            .to_owned()
    }

    /// The map key: the table's namespace and `table.trigger`.
    pub fn key(&self) -> QualifiedName {
        QualifiedName::new(
            self.table.schema.clone(),
            format!("{}.{}", self.table.name, self.name),
        )
    }
}

impl Keyed for View {
    fn key(&self) -> QualifiedName {
        self.name.clone()
    }
}

impl Keyed for Routine {
    fn key(&self) -> QualifiedName {
        Routine::key(self)
    }
}

impl Keyed for Trigger {
    fn key(&self) -> QualifiedName {
        Trigger::key(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_definition_drops_layout_only() {
        assert_eq!(
            View::canonical_definition("\n SELECT t.a,\n    t.b   \n\n   FROM public.t;\n"),
            "SELECT t.a,\n    t.b\n   FROM public.t"
        );
        assert_ne!(
            View::canonical_definition("SELECT a FROM t"),
            View::canonical_definition("SELECT b FROM t")
        );
    }

    #[test]
    fn overloads_have_distinct_keys() {
        let f = |args: &str| Routine {
            name: QualifiedName::new("public", "f"),
            kind: RoutineKind::Function,
            arguments: args.to_owned(),
            identity_arguments: args.to_owned(),
            returns: Some("integer".to_owned()),
            language: "sql".to_owned(),
            body: "SELECT 1".to_owned(),
            volatility: Volatility::Immutable,
            strict: false,
            security_definer: false,
            comment: None,
            options: RoutineOptions::default(),
        };
        assert_ne!(f("integer").key(), f("text").key());
        assert_eq!(f("integer").key().name, "f(integer)");
    }
}
