//! Property tests: canonical JSON is a fixed point, parses back to the same value and never panics.

use proptest::prelude::*;
use ptah_fingerprint::{Digest, Fingerprint, canonical_json_value};
use serde_json::{Map, Value};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Numbers compare by value: canonical form may respell `1.0` as `1`.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
            (Some(x), Some(y), _, _) => x == y,
            (_, _, Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    #[test]
    fn canonical_form_parses_back_to_the_same_value(v in json_value()) {
        let bytes = canonical_json_value(&v).expect("finite values are canonicalisable");
        let back: Value = serde_json::from_slice(&bytes).expect("canonical JSON is JSON");
        prop_assert!(same_json(&v, &back), "{v} became {back}");
    }

    #[test]
    fn canonical_form_is_a_fixed_point(v in json_value()) {
        let once = canonical_json_value(&v).expect("canonical");
        let back: Value = serde_json::from_slice(&once).expect("json");
        prop_assert_eq!(&canonical_json_value(&back).expect("canonical"), &once);
        prop_assert!(!once.contains(&b'\n'), "no raw newline: strings escape it and no whitespace is added");
    }

    #[test]
    fn pretty_printing_does_not_change_the_fingerprint(v in json_value()) {
        let pretty = serde_json::to_string_pretty(&v).expect("pretty");
        let reparsed: Value = serde_json::from_str(&pretty).expect("json");
        prop_assert_eq!(Fingerprint::of(&v).expect("fp"), Fingerprint::of(&reparsed).expect("fp"));
    }

    #[test]
    fn parsing_garbage_never_panics(s in any::<String>()) {
        let parsed = s.parse::<Digest>();
        if let Ok(d) = parsed {
            prop_assert_eq!(d.to_string(), s);
        }
    }
}
