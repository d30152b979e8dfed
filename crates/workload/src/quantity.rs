//! Kubernetes resource quantities by value: the API server rewrites `0.5` as `500m` and `1e3` as
//! `1k`, so a read-back is compared by amount, not by spelling.

/// The amount of `text` in units of 10⁻⁹, or `None` when it is not a quantity this parser reads
/// exactly (the caller then compares the text).
pub(crate) fn nanos(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_len);
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() || frac.contains('.') {
        return None;
    }
    let digits: i128 = format!("{whole}{frac}").parse().ok()?;
    let frac_len = u32::try_from(frac.len()).ok()?;
    // value = digits × 2^binary × 10^decimal / 10^frac_len, in nanos (decimal + 9).
    let (binary, decimal): (u32, i32) = match suffix {
        "Ki" => (10, 0),
        "Mi" => (20, 0),
        "Gi" => (30, 0),
        "Ti" => (40, 0),
        "Pi" => (50, 0),
        "Ei" => (60, 0),
        "n" => (0, -9),
        "u" => (0, -6),
        "m" => (0, -3),
        "" => (0, 0),
        "k" => (0, 3),
        "M" => (0, 6),
        "G" => (0, 9),
        "T" => (0, 12),
        "P" => (0, 15),
        "E" => (0, 18),
        exp if exp.starts_with(['e', 'E']) => (0, exp[1..].parse::<i32>().ok().filter(|e| e.abs() <= 18)?),
        _ => return None,
    };
    let mut value = digits.checked_mul(2i128.checked_pow(binary)?)?;
    let shift = decimal + 9 - i32::try_from(frac_len).ok()?;
    if shift >= 0 {
        value = value.checked_mul(10i128.checked_pow(shift.unsigned_abs())?)?;
    } else {
        let div = 10i128.checked_pow(shift.unsigned_abs())?;
        if value % div != 0 {
            return None;
        }
        value /= div;
    }
    Some(if negative { -value } else { value })
}

/// True when two quantity spellings name the same amount (or are the same text).
pub(crate) fn same(a: &str, b: &str) -> bool {
    a == b || matches!((nanos(a), nanos(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_amount_are_the_same() {
        for (a, b) in [
            ("0.5", "500m"),
            ("1e3", "1k"),
            ("1Ki", "1024"),
            ("256Mi", "268435456"),
            ("1.5Gi", "1536Mi"),
            ("250m", "0.25"),
            ("2", "2000m"),
            ("1E", "1e18"),
        ] {
            assert!(same(a, b), "{a} {b}");
        }
        for (a, b) in [("1", "1m"), ("1Ki", "1k"), ("512Mi", "500M"), ("x", "y")] {
            assert!(!same(a, b), "{a} {b}");
        }
        assert_eq!(nanos("1"), Some(1_000_000_000));
        assert_eq!(nanos("1.2.3"), None);
        assert_eq!(nanos(""), None);
        assert_eq!(nanos("1Qi"), None);
    }
}
