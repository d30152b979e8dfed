//! The `row_security`, `policy` and `grant` blocks of a table in canonical `schema.hcl`
//! (the shape is described in `crate::read::hcl`'s security module).

use std::fmt::Write as _;

use super::words::quote;
use crate::model::{PolicyCommand, Privilege, TableSecurity};

/// Appends the security blocks of one table, indented inside its `table` block.
pub(super) fn write(out: &mut String, s: &TableSecurity) {
    if s.row_security || s.force_row_security {
        let _ = writeln!(
            out,
            "  row_security {{\n    enabled = {}\n    force = {}\n  }}",
            s.row_security, s.force_row_security
        );
    }
    for p in s.policies.values() {
        let _ = writeln!(out, "  policy {} {{", quote(&p.name));
        if p.command != PolicyCommand::All {
            let _ = writeln!(out, "    for = {}", p.command.keyword());
        }
        if p.restrictive {
            out.push_str("    as = RESTRICTIVE\n");
        }
        if !p.roles.is_empty() {
            let roles: Vec<String> = p.roles.iter().map(|r| quote(r)).collect();
            let _ = writeln!(out, "    to = [{}]", roles.join(", "));
        }
        if let Some(e) = &p.using {
            let _ = writeln!(out, "    using = {}", quote(e));
        }
        if let Some(e) = &p.check {
            let _ = writeln!(out, "    check = {}", quote(e));
        }
        out.push_str("  }\n");
    }
    for (role, g) in &s.grants {
        let _ = writeln!(out, "  grant {} {{", quote(role));
        let _ = writeln!(out, "    privileges = {}", list(&g.privileges));
        if !g.grantable.is_empty() {
            let _ = writeln!(out, "    grantable = {}", list(&g.grantable));
        }
        out.push_str("  }\n");
    }
}

fn list<'a>(privileges: impl IntoIterator<Item = &'a Privilege>) -> String {
    let words: Vec<String> = privileges.into_iter().map(|p| quote(p.keyword())).collect();
    format!("[{}]", words.join(", "))
}
