//! Literal date and time defaults as the catalogs print them.

use crate::model::{DataType, DefaultValue, Literal};

/// A literal default of a date or time column as the catalogs print it, so an author's spelling
/// and the catalog's compare equal: `T` becomes a space, a date alone given to a timestamp gets
/// `00:00:00`, a fraction loses its trailing zeros (MariaDB prints `.000` for `datetime(3)`), and
/// a zone offset of zero, or none, on a `with time zone` type is `+00` (PostgreSQL prints the
/// value in the session's zone, UTC unless the server is set otherwise; other offsets are kept
/// as written). Other values, and text that is not a date or time, come back unchanged.
pub fn temporal_default(data_type: &DataType, default: DefaultValue) -> DefaultValue {
    let DefaultValue::Literal(Literal::String(text)) = &default else {
        return default;
    };
    let canonical = match data_type {
        DataType::Timestamp { with_time_zone, .. } => timestamp_text(text, *with_time_zone),
        DataType::Time { with_time_zone, .. } => clock_text(text.trim(), *with_time_zone),
        _ => None,
    };
    match canonical {
        Some(t) => DefaultValue::Literal(Literal::String(t)),
        None => default,
    }
}

fn timestamp_text(text: &str, zoned: bool) -> Option<String> {
    let text = text.trim();
    let date = text.get(..10)?;
    let is_date = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !is_date {
        return None;
    }
    let rest = &text[10..];
    let clock = match rest.strip_prefix([' ', 'T']) {
        Some(clock) => clock_text(clock, zoned)?,
        None if rest.is_empty() => clock_text("00:00:00", zoned)?,
        None => return None,
    };
    Some(format!("{date} {clock}"))
}

/// `HH:MM:SS[.fraction][offset]` canonical, or `None` when it is not one.
fn clock_text(text: &str, zoned: bool) -> Option<String> {
    let split = text.find(['+', '-', 'Z', 'z']).unwrap_or(text.len());
    let (clock, offset) = text.split_at(split);
    let (whole, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let parts: Vec<&str> = whole.split(':').collect();
    let plain = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = matches!(parts.len(), 2 | 3) && parts.iter().all(|p| p.len() == 2 && plain(p));
    if !well_formed
        || (parts.len() == 2 && !fraction.is_empty())
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let fraction = fraction.trim_end_matches('0');
    // `10:30` is `10:30:00`.
    let mut out = if parts.len() == 2 {
        format!("{whole}:00")
    } else {
        whole.to_owned()
    };
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    let zero = |o: &str| {
        o.trim_start_matches(['+', '-'])
            .bytes()
            .all(|b| b == b'0' || b == b':')
    };
    match (zoned, offset) {
        (false, "") => {}
        (false, _) => return None,
        (true, o) if o.is_empty() || o.eq_ignore_ascii_case("z") || zero(o) => out.push_str("+00"),
        (true, o) => out.push_str(o),
    }
    Some(out)
}
