//! A PostgreSQL domain's parts in canonical form, the same from a document and from the catalog.

use crate::model::Dialect;
use crate::types::{parse_type, render_type};

use super::{collapse_whitespace, expression};

/// The base type as the renderer spells it (`varchar(20)` and the catalog's
/// `character varying(20)` are one type; `public.citext` is `citext`).
pub fn domain_base(text: &str) -> String {
    match parse_type(Dialect::Postgres, text) {
        Ok(t) => render_type(Dialect::Postgres, &t),
        Err(_) => collapse_whitespace(text),
    }
}

/// A domain check's expression, without `CHECK` and its parentheses, in canonical form.
pub fn domain_check(text: &str) -> String {
    let body = text.trim();
    let body = body.strip_suffix("NOT VALID").map_or(body, str::trim_end);
    let body = match body.get(..5) {
        Some(word) if word.eq_ignore_ascii_case("CHECK") => body[5..].trim(),
        _ => body,
    };
    expression(Dialect::Postgres, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_written_and_catalog_forms_agree() {
        assert_eq!(domain_base("varchar(20)"), domain_base("character varying(20)"));
        assert_eq!(domain_base("public.citext"), domain_base("citext"));
        assert_eq!(
            domain_check("CHECK ((VALUE > (0)::numeric))"),
            domain_check("CHECK (VALUE > 0)")
        );
        assert_ne!(
            domain_check("CHECK (VALUE > 0)"),
            domain_check("CHECK (VALUE > 1)")
        );
    }
}
