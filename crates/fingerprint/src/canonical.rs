//! Canonical JSON after RFC 8785 (JCS), so one document always hashes to one identity.
//!
//! The rules: object members sorted by the UTF-16 code units of their names, no insignificant
//! whitespace, strings with the minimal escaping of RFC 8785, floats in ECMAScript's shortest
//! form (`1.0` is `1`, `1e21` stays exponential, `-0` is `0`). One deliberate departure: integers
//! that fit `i64`/`u64` are written exactly instead of being rounded through a double, because
//! sizes and versions above 2^53 must not collide.

use std::io::Write as _;

use serde::Serialize;
use serde_json::{Map, Number, Value};

use crate::Error;
use crate::scalar::{ecmascript_number, write_string};

/// The canonical JSON bytes of any serializable value, written straight from `Serialize`
/// (the same bytes as [`canonical_json_value`] of its `serde_json::Value`).
pub fn canonical_json<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, Error> {
    crate::stream::to_canonical(value)
}

/// The canonical JSON bytes of a JSON value.
pub fn canonical_json_value(value: &Value) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    write_value(&mut out, value)?;
    Ok(out)
}

fn write_value(out: &mut Vec<u8>, value: &Value) -> Result<(), Error> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => write_number(out, n)?,
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item)?;
            }
            out.push(b']');
        }
        Value::Object(map) => write_object(out, map)?,
    }
    Ok(())
}

fn write_object(out: &mut Vec<u8>, map: &Map<String, Value>) -> Result<(), Error> {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    // JCS orders by UTF-16 code units, which differs from byte order only above the BMP.
    members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    out.push(b'{');
    for (i, (key, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, key);
        out.push(b':');
        write_value(out, value)?;
    }
    out.push(b'}');
    Ok(())
}

fn write_number(out: &mut Vec<u8>, n: &Number) -> Result<(), Error> {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        let f = n.as_f64().ok_or_else(|| Error::NonFiniteNumber(n.to_string()))?;
        out.extend_from_slice(ecmascript_number(f)?.as_bytes());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn canon(v: Value) -> String {
        String::from_utf8(canonical_json_value(&v).expect("canonical")).expect("utf8")
    }

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        let v: Value =
            serde_json::from_str(r#"{ "b": [1, 2, {"z": null, "a": true}], "a": "x" }"#).expect("parse");
        assert_eq!(canon(v), r#"{"a":"x","b":[1,2,{"a":true,"z":null}]}"#);
    }

    #[test]
    fn orders_keys_by_utf16_code_units() {
        // U+1F600 is D83D DE00 in UTF-16, which sorts before U+FB01; in UTF-8 it sorts after.
        let v = json!({"\u{fb01}": 1, "\u{1f600}": 2});
        assert_eq!(canon(v), "{\"\u{1f600}\":2,\"\u{fb01}\":1}");
    }

    #[test]
    fn escapes_minimally() {
        let v = json!("q\"b\\n\n\u{1}é</");
        assert_eq!(canon(v), "\"q\\\"b\\\\n\\n\\u0001é</\"");
    }

    #[test]
    fn numbers_take_ecmascript_forms() {
        let cases = [
            (1.0, "1"),
            (-0.0, "0"),
            (0.5, "0.5"),
            (123.456, "123.456"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (-2.5e300, "-2.5e+300"),
        ];
        for (f, want) in cases {
            assert_eq!(ecmascript_number(f).expect("finite"), want, "for {f:e}");
        }
    }

    #[test]
    fn integers_stay_exact_beyond_two_to_the_53() {
        assert_eq!(canon(json!(u64::MAX)), "18446744073709551615");
        assert_eq!(canon(json!(i64::MIN)), "-9223372036854775808");
    }

    #[test]
    fn non_string_keys_are_refused() {
        let mut m = std::collections::BTreeMap::new();
        m.insert(vec![1u8], 1);
        assert!(matches!(canonical_json(&m), Err(Error::NotJson(_))));
    }
}
