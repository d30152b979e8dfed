//! MySQL's `function`, `procedure` and `event` blocks and a view's options in canonical
//! `schema.hcl` (the forms `read::hcl` reads back; bodies are quoted exactly).

use std::fmt::Write as _;

use super::words::quote;
use crate::model::{Schema, ViewOptions};

/// Appends a view block's option attributes, when they are not the defaults.
pub(super) fn write_view_options(out: &mut String, options: Option<&ViewOptions>) {
    let Some(o) = options else { return };
    if let Some(a) = &o.algorithm {
        let _ = writeln!(out, "  algorithm = {a}");
    }
    if o.security_invoker {
        out.push_str("  sql_security = INVOKER\n");
    }
    if let Some(c) = &o.check_option {
        let _ = writeln!(out, "  check_option = {c}");
    }
}

/// Appends the stored routines and events of `schema`, each block followed by a blank line.
pub(super) fn write(out: &mut String, schema: &Schema) {
    for r in schema.stored_routines.values() {
        let kind = r.kind.keyword().to_ascii_lowercase();
        let _ = writeln!(out, "{kind} {} {{", quote(&r.name));
        let _ = writeln!(out, "  parameters = {}", quote(&r.parameters));
        if let Some(returns) = &r.returns {
            let _ = writeln!(out, "  returns = {}", quote(returns));
        }
        if r.deterministic {
            out.push_str("  deterministic = true\n");
        }
        if let Some(d) = &r.data_access {
            let _ = writeln!(out, "  data_access = {}", quote(d));
        }
        if r.security_invoker {
            out.push_str("  sql_security = INVOKER\n");
        }
        if let Some(c) = &r.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        let _ = writeln!(out, "  as = {}", quote(&r.body));
        out.push_str("}\n\n");
    }
    for e in schema.events.values() {
        let _ = writeln!(out, "event {} {{", quote(&e.name));
        let _ = writeln!(out, "  schedule = {}", quote(&e.schedule));
        if let Some(s) = &e.starts {
            let _ = writeln!(out, "  starts = {}", quote(s));
        }
        if let Some(s) = &e.ends {
            let _ = writeln!(out, "  ends = {}", quote(s));
        }
        if e.preserve {
            out.push_str("  preserve = true\n");
        }
        if let Some(s) = &e.status {
            let _ = writeln!(out, "  status = {}", quote(s));
        }
        if let Some(c) = &e.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        let _ = writeln!(out, "  as = {}", quote(&e.body));
        out.push_str("}\n\n");
    }
}
