//! Equality of expression-bearing objects up to the casts of columns to text.
//!
//! The canonical text keeps a column's cast (`id::text = $1` means something over an integer),
//! and PostgreSQL's catalog adds `(name)::text` wherever a `varchar` column meets a text function
//! or literal. Two texts of one object that differ only in such casts mean the same, so the differ
//! compares them without ([`without_column_text_casts`]); with a database, the engine's probes
//! reconcile the rest. Exact equality is tried first, so unchanged objects parse nothing.

use crate::model::{Column, DefaultValue, Dialect, Domain, Index, IndexTarget, Policy};
use crate::normalize::without_column_text_casts;

fn loose(text: &str) -> String {
    without_column_text_casts(Dialect::Postgres, text)
}

/// Whether two canonical expressions differ at most in casts of columns to text.
pub(super) fn same_expression(a: &str, b: &str) -> bool {
    a == b || loose(a) == loose(b)
}

fn same_optional(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_expression(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// Whether two defaults are the same value or loosely the same expression.
pub(super) fn same_default(a: &Option<DefaultValue>, b: &Option<DefaultValue>) -> bool {
    match (a, b) {
        (Some(DefaultValue::Expression(a)), Some(DefaultValue::Expression(b))) => same_expression(a, b),
        _ => a == b,
    }
}

/// Whether two columns' generation is the same.
pub(super) fn same_generated(a: &Column, b: &Column) -> bool {
    match (&a.generated, &b.generated) {
        (Some(x), Some(y)) => x.stored == y.stored && same_expression(&x.expression, &y.expression),
        (x, y) => x == y,
    }
}

/// Whether two indexes are the same, expressions and predicates compared loosely.
pub(super) fn same_index(a: &Index, b: &Index) -> bool {
    if a == b {
        return true;
    }
    let loosened = |i: &Index| {
        let mut i = i.clone();
        for p in &mut i.parts {
            if let IndexTarget::Expression(e) = &mut p.target {
                *e = loose(e);
            }
        }
        i.predicate = i.predicate.as_deref().map(loose);
        i
    };
    loosened(a) == loosened(b)
}

/// Whether two domains are the same, checks and default compared loosely.
pub(super) fn same_domain(a: &Domain, b: &Domain) -> bool {
    if a == b {
        return true;
    }
    let checks_same = a.checks.len() == b.checks.len()
        && a.checks
            .iter()
            .all(|(n, x)| b.checks.get(n).is_some_and(|y| same_expression(x, y)));
    checks_same
        && same_default(&a.default, &b.default)
        && Domain {
            checks: b.checks.clone(),
            default: b.default.clone(),
            ..a.clone()
        } == *b
}

/// Whether two policies are the same, expressions compared loosely.
pub(super) fn same_policy(a: &Policy, b: &Policy) -> bool {
    if a == b {
        return true;
    }
    same_optional(a.using.as_deref(), b.using.as_deref())
        && same_optional(a.check.as_deref(), b.check.as_deref())
        && Policy {
            using: b.using.clone(),
            check: b.check.clone(),
            ..a.clone()
        } == *b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::expression;

    #[test]
    fn casts_of_columns_to_text_compare_loosely() {
        let pg = Dialect::Postgres;
        assert!(same_expression(
            &expression(pg, "lower((email)::text)"),
            &expression(pg, "lower(email)")
        ));
        assert!(!same_expression(
            &expression(pg, "lower(email)"),
            &expression(pg, "upper(email)")
        ));
    }
}
