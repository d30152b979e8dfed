//! The `domain`, `view`, `materialized`, `function`, `procedure` and `trigger` blocks of canonical
//! `schema.hcl`. Definitions and bodies are quoted strings, escaped exactly, because they are
//! compared as text.

use std::fmt::Write as _;

use super::words::{literal, part, quote};
use crate::model::{DefaultValue, Dialect, Parallel, RoutineKind, RoutineOptions, Schema, Volatility};

/// Appends the domains of `schema` (PostgreSQL), each block followed by a blank line.
pub(super) fn write_domains(out: &mut String, schema: &Schema) {
    for d in schema.domains.values() {
        let _ = writeln!(out, "domain {} {{", quote(&d.name.name));
        let _ = writeln!(out, "  schema = schema{}", part(&d.name.schema));
        let _ = writeln!(out, "  type = {}", quote(&d.base));
        if let Some(c) = &d.collation {
            let _ = writeln!(out, "  collate = {}", quote(c));
        }
        match &d.default {
            Some(DefaultValue::Literal(l)) => {
                let _ = writeln!(out, "  default = {}", literal(l));
            }
            Some(DefaultValue::Expression(e)) => {
                let _ = writeln!(out, "  default = sql({})", quote(e));
            }
            None => {}
        }
        if d.not_null {
            out.push_str("  not_null = true\n");
        }
        if let Some(c) = &d.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        for (name, check) in &d.checks {
            let _ = writeln!(
                out,
                "  check {} {{\n    expr = {}\n  }}",
                quote(name),
                quote(check)
            );
        }
        out.push_str("}\n\n");
    }
}

/// Appends the program objects of `schema`, each block followed by a blank line.
pub(super) fn write(out: &mut String, dialect: Dialect, schema: &Schema) {
    let pg = dialect == Dialect::Postgres;
    if !pg {
        super::mysql::write(out, schema);
    }
    for r in schema.routines.values() {
        let kind = match r.kind {
            RoutineKind::Function => "function",
            RoutineKind::Procedure => "procedure",
            RoutineKind::Aggregate => "aggregate",
        };
        let _ = writeln!(out, "{kind} {} {{", quote(&r.name.name));
        let _ = writeln!(out, "  schema = schema{}", part(&r.name.schema));
        let _ = writeln!(out, "  arguments = {}", quote(&r.arguments));
        if r.identity_arguments != r.arguments {
            let _ = writeln!(out, "  identity = {}", quote(&r.identity_arguments));
        }
        if let Some(returns) = &r.returns {
            let _ = writeln!(out, "  returns = {}", quote(returns));
        }
        if r.kind != RoutineKind::Aggregate {
            let _ = writeln!(out, "  language = {}", quote(&r.language));
        }
        match r.volatility {
            Volatility::Volatile => {}
            Volatility::Stable => out.push_str("  volatility = STABLE\n"),
            Volatility::Immutable => out.push_str("  volatility = IMMUTABLE\n"),
        }
        if r.strict {
            out.push_str("  strict = true\n");
        }
        if r.security_definer {
            out.push_str("  security_definer = true\n");
        }
        write_options(out, &r.options);
        if let Some(c) = &r.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        let _ = writeln!(out, "  as = {}", quote(&r.body));
        out.push_str("}\n\n");
    }
    for v in schema.views.values() {
        let kind = if v.materialized { "materialized" } else { "view" };
        let _ = writeln!(out, "{kind} {} {{", quote(&v.name.name));
        if pg {
            let _ = writeln!(out, "  schema = schema{}", part(&v.name.schema));
        }
        if let Some(c) = &v.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        if !pg {
            super::mysql::write_view_options(out, schema.view_options.get(&v.name.name));
        }
        let _ = writeln!(out, "  as = {}", quote(&v.definition));
        out.push_str("}\n\n");
    }
    for t in schema.triggers.values() {
        let _ = writeln!(out, "trigger {} {{", quote(&t.name));
        if pg {
            let _ = writeln!(out, "  schema = schema{}", part(&t.table.schema));
        }
        let _ = writeln!(out, "  on = table{}", part(&t.table.name));
        if let Some(c) = &t.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        let _ = writeln!(out, "  as = {}", quote(&t.definition));
        out.push_str("}\n\n");
    }
}

/// A routine's non-default settings, parallel safety, leakproofness and estimates.
fn write_options(out: &mut String, o: &RoutineOptions) {
    if !o.settings.is_empty() {
        let quoted: Vec<String> = o.settings.iter().map(|s| quote(s)).collect();
        let _ = writeln!(out, "  settings = [{}]", quoted.join(", "));
    }
    match o.parallel {
        None => {}
        Some(Parallel::Safe) => out.push_str("  parallel = SAFE\n"),
        Some(Parallel::Restricted) => out.push_str("  parallel = RESTRICTED\n"),
    }
    if o.leakproof {
        out.push_str("  leakproof = true\n");
    }
    if let Some(c) = &o.cost {
        let _ = writeln!(out, "  cost = {}", quote(c));
    }
    if let Some(r) = &o.rows {
        let _ = writeln!(out, "  rows = {}", quote(r));
    }
}
