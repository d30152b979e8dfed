//! A looser comparison form that also drops casts of plain columns to text.
//!
//! The catalog prints `lower(email)` over a `varchar` column as `lower((email)::text)`, and
//! `status <> 'x'` as `(status)::text <> 'x'::text`. The canonical text keeps such casts, since
//! over an integer or an enum they are the expression's meaning (`id::text = $1`, and `lower`
//! takes no enum) and the canonical text is what a plan renders. Two texts of the same object on
//! the same table that differ only in them mean the same, though, which lets the engine take the
//! live text without asking the server.

use std::ops::ControlFlow;

use sqlparser::ast::{DataType as SqlType, Expr, Value, visit_expressions_mut};

use crate::model::Dialect;

/// `text` (canonical) without the casts of column references to `text` or `varchar`, canonical
/// again; unparsable text comes back unchanged. Only for comparing two texts of one object.
pub fn without_column_text_casts(dialect: Dialect, text: &str) -> String {
    let Some(mut expr) = super::parse(dialect, text) else {
        return text.to_owned();
    };
    let _ = visit_expressions_mut(&mut expr, |e| {
        if let Expr::Cast { expr, data_type, .. } = e
            && matches!(expr.as_ref(), Expr::Identifier(_) | Expr::CompoundIdentifier(_))
            && is_text_type(data_type)
        {
            let inner = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
            *e = inner;
        }
        ControlFlow::<()>::Continue(())
    });
    super::canonical(dialect, expr)
}

fn is_text_type(t: &SqlType) -> bool {
    let name = t.to_string().to_ascii_lowercase();
    let base = name.split('(').next().unwrap_or("").trim();
    matches!(base, "text" | "character varying" | "varchar")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::expression;

    #[test]
    fn column_text_casts_go_and_nothing_else() {
        let pg = Dialect::Postgres;
        let loose = |t: &str| without_column_text_casts(pg, &expression(pg, t));
        assert_eq!(loose("lower((email)::text)"), loose("lower(email)"));
        assert_eq!(loose("((status)::text <> 'x'::text)"), loose("status <> 'x'"));
        assert_ne!(loose("(id)::bigint > 0"), loose("id > 0"));
        // The canonical text itself keeps them: they may be the expression's meaning.
        assert_eq!(
            expression(pg, "tenant_id::text = current_setting('t')"),
            "tenant_id::text = current_setting('t')"
        );
    }
}
