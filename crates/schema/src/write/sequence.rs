//! The `sequence` blocks of canonical `schema.hcl`: an option is written only where it is not what
//! PostgreSQL would choose from the type and direction, so reading the block back resolves to the
//! same sequence.

use std::fmt::Write as _;

use super::words::{part, quote};
use crate::model::{Schema, SequenceOptions, SequenceType};

/// Appends the sequences of `schema` (PostgreSQL), each block followed by a blank line.
pub(super) fn write_sequences(out: &mut String, schema: &Schema) {
    for s in schema.sequences.values() {
        let _ = writeln!(out, "sequence {} {{", quote(&s.name.name));
        let _ = writeln!(out, "  schema = schema{}", part(&s.name.schema));
        if s.data_type != SequenceType::Bigint {
            let _ = writeln!(out, "  type = {}", s.data_type.sql());
        }
        let defaults = SequenceOptions {
            data_type: Some(s.data_type),
            increment: Some(s.increment),
            ..SequenceOptions::default()
        }
        .resolve(s.name.clone());
        let numbers = [
            ("increment", 1, s.increment),
            ("min_value", defaults.min, s.min),
            ("max_value", defaults.max, s.max),
            ("start", if s.increment > 0 { s.min } else { s.max }, s.start),
            ("cache", 1, s.cache),
        ];
        for (key, default, value) in numbers {
            if value != default {
                let _ = writeln!(out, "  {key} = {value}");
            }
        }
        if s.cycle {
            out.push_str("  cycle = true\n");
        }
        if let Some(o) = &s.owned_by {
            let _ = writeln!(
                out,
                "  owned_by = table{}.column{}",
                part(&o.table.name),
                part(&o.column)
            );
        }
        if let Some(c) = &s.comment {
            let _ = writeln!(out, "  comment = {}", quote(c));
        }
        out.push_str("}\n\n");
    }
}
