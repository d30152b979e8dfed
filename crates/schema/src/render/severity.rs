//! Type-change classification: which changes can lose data (narrowing) and which need an explicit
//! conversion on PostgreSQL.

use crate::model::DataType;
use crate::plan::Severity;

/// Whether converting `from` to `to` can lose or reject existing values because the new type holds
/// less: a shorter or bounded string, a smaller or differently signed integer, fewer decimal digits,
/// fewer fractional seconds, a float to a smaller float or an integer, fewer enum labels.
pub fn is_narrowing(from: &DataType, to: &DataType) -> bool {
    use DataType as T;
    match (from, to) {
        (
            T::Integer {
                bits: a,
                unsigned: ua,
            },
            T::Integer {
                bits: b,
                unsigned: ub,
            },
        ) => b < a || ua != ub,
        (
            T::Decimal {
                precision: pa,
                scale: sa,
            },
            T::Decimal {
                precision: pb,
                scale: sb,
            },
        ) => less(*pb, *pa) || less(*sb, *sa) || integer_digits(*pb, *sb) < integer_digits(*pa, *sa),
        (T::Decimal { .. } | T::Float32 | T::Float64, T::Integer { .. }) => true,
        (T::Float64, T::Float32) => true,
        (T::Float32 | T::Float64, T::Decimal { .. }) => true,
        (T::Integer { bits, .. }, T::Decimal { precision, scale }) => {
            integer_digits(*precision, *scale) < u64::from(*bits) * 3 / 10 + 1
        }
        (a, b) if text_limit(a).is_some() && text_limit(b).is_some() => {
            less(text_limit(b).flatten(), text_limit(a).flatten())
        }
        (T::Time { precision: a, .. }, T::Time { precision: b, .. })
        | (T::Timestamp { precision: a, .. }, T::Timestamp { precision: b, .. }) => less(*b, *a),
        (T::Timestamp { .. }, T::Date | T::Time { .. }) => true,
        (T::InlineEnum(a), T::InlineEnum(b)) | (T::InlineSet(a), T::InlineSet(b)) => {
            a.iter().any(|v| !b.contains(v))
        }
        (T::Array(a), T::Array(b)) => is_narrowing(a, b),
        _ => false,
    }
}

/// The severity of changing a column's type.
pub(crate) fn type_change(from: &DataType, to: &DataType) -> (Severity, &'static str) {
    if is_narrowing(from, to) {
        (
            Severity::Destructive,
            "narrows the column type: existing values can be truncated or rejected",
        )
    } else {
        (
            Severity::Warning,
            "changes the column type: the table is rewritten and values converted",
        )
    }
}

/// Whether PostgreSQL needs `USING` to convert `from` to `to` (no assignment cast between them).
pub(crate) fn needs_using(from: &DataType, to: &DataType) -> bool {
    let family = |t: &DataType| match t {
        DataType::Integer { .. } | DataType::Decimal { .. } | DataType::Float32 | DataType::Float64 => 1,
        DataType::Char(_) | DataType::Varchar(_) | DataType::Text => 2,
        _ => 0,
    };
    // Every type converts to a string type by its text form.
    !(family(to) == 2 || (family(from) != 0 && family(from) == family(to)))
}

/// Whether a type holds text, with its limit (`None` inside for unbounded).
fn text_limit(t: &DataType) -> Option<Option<u32>> {
    match t {
        DataType::Char(n) | DataType::Varchar(n) => Some(*n),
        DataType::Text => Some(None),
        _ => None,
    }
}

/// `new < old` where `None` means unbounded.
fn less(new: Option<u32>, old: Option<u32>) -> bool {
    match (new, old) {
        (Some(n), Some(o)) => n < o,
        (Some(_), None) => true,
        _ => false,
    }
}

/// Digits before the point; unbounded when the precision is not given.
fn integer_digits(precision: Option<u32>, scale: Option<u32>) -> u64 {
    match precision {
        Some(p) => u64::from(p.saturating_sub(scale.unwrap_or(0))),
        None => u64::MAX,
    }
}
