//! The one seam between catalog text and canonical model values: every type, default and expression
//! the engine reads goes through here, so live and desired objects compare equal.

use ptah_schema::{DataType, DefaultValue, Dialect, Literal, normalize};

/// The canonical type of a catalog type text (`format_type` on PostgreSQL, `COLUMN_TYPE` on MySQL);
/// text the type reader cannot parse is kept whole as [`DataType::Other`], never dropped.
pub(crate) fn data_type(dialect: Dialect, text: &str) -> DataType {
    ptah_schema::types::parse_type(dialect, text).unwrap_or_else(|_| DataType::Other {
        name: text.to_owned(),
        params: Vec::new(),
    })
}

/// The canonical text of a catalog expression (CHECK body, index expression or predicate).
pub(crate) fn expression(dialect: Dialect, text: &str) -> String {
    normalize::expression(dialect, text)
}

/// The canonical default of a catalog default text for a column of `data_type` (a date or time
/// literal as [`normalize::temporal_default`] spells it); `None` when it is SQL NULL, which is
/// the same as no default.
pub(crate) fn default(dialect: Dialect, data_type: &DataType, text: &str) -> Option<DefaultValue> {
    match normalize::default_value(dialect, text) {
        DefaultValue::Literal(Literal::Null) => None,
        other => Some(normalize::temporal_default(data_type, other)),
    }
}

/// A reference-row value as the model holds it, given the column's canonical type.
pub(crate) fn value(data_type: Option<&DataType>, text: Option<String>) -> Literal {
    let Some(text) = text else {
        return Literal::Null;
    };
    match data_type {
        Some(DataType::Boolean) => match text.as_str() {
            "t" | "true" | "1" => Literal::Bool(true),
            "f" | "false" | "0" => Literal::Bool(false),
            _ => Literal::String(text),
        },
        Some(DataType::Integer { .. } | DataType::Decimal { .. } | DataType::Float32 | DataType::Float64) => {
            Literal::Number(normalize::canonical_number(&text))
        }
        _ => Literal::String(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_column_type() {
        assert_eq!(
            value(Some(&DataType::Boolean), Some("t".into())),
            Literal::Bool(true)
        );
        assert_eq!(
            value(Some(&DataType::Boolean), Some("0".into())),
            Literal::Bool(false)
        );
        let decimal = DataType::Decimal {
            precision: Some(10),
            scale: Some(2),
        };
        assert_eq!(
            value(Some(&decimal), Some("3.10".into())),
            Literal::Number("3.1".into())
        );
        assert_eq!(
            value(Some(&DataType::Text), Some("x".into())),
            Literal::String("x".into())
        );
        assert_eq!(value(None, None), Literal::Null);
    }
}
