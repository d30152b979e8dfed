//! The streaming canonical JSON equals the canonical form of the `serde_json::Value` the same value
//! serializes to, for arbitrary JSON and for every serde shape (the reference path is
//! `canonical_json_value(&serde_json::to_value(v))`).

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use ptah_fingerprint::{Error, Fingerprint, Sha256, canonical_json, canonical_json_value};
use serde::Serialize;
use serde_json::Value;

fn reference<T: Serialize>(value: &T) -> Vec<u8> {
    canonical_json_value(&serde_json::to_value(value).expect("to_value")).expect("canonical")
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-c\u{1f600}\u{fb01}\"\\\\\n\u{1}]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-d\u{1f600}\u{fb01}]{0,3}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Unit,
    Newtype(String),
    Tuple(u8, Option<i32>),
    Struct { z: bool, a: Vec<char> },
}

#[derive(Debug, Clone, Serialize)]
struct Doc {
    zeta: Vec<Shape>,
    alpha: Option<f32>,
    by_number: BTreeMap<u32, String>,
    by_name: HashMap<String, Shape>,
    wide: i128,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    unit: (),
    pair: (u16, String),
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Unit),
        any::<String>().prop_map(Shape::Newtype),
        (any::<u8>(), any::<Option<i32>>()).prop_map(|(a, b)| Shape::Tuple(a, b)),
        (any::<bool>(), prop::collection::vec(any::<char>(), 0..4)).prop_map(|(z, a)| Shape::Struct { z, a }),
    ]
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        prop::collection::vec(shape(), 0..5),
        any::<Option<f32>>(),
        prop::collection::btree_map(any::<u32>(), any::<String>(), 0..4),
        prop::collection::hash_map("[a-z]{0,3}", shape(), 0..4),
        any::<i64>(),
        any::<Option<u8>>(),
        (any::<u16>(), any::<String>()),
    )
        .prop_map(|(zeta, alpha, by_number, by_name, wide, skipped, pair)| Doc {
            zeta,
            alpha,
            by_number,
            by_name,
            wide: i128::from(wide),
            skipped,
            unit: (),
            pair,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_json_streams_to_its_canonical_form(value in json()) {
        prop_assert_eq!(canonical_json(&value).expect("stream"), reference(&value));
        // The fingerprint hashes the same bytes, handed over in pieces.
        prop_assert_eq!(Fingerprint::of(&value).expect("fingerprint").hex(), Sha256::of(&reference(&value)).hex());
    }

    #[test]
    fn every_serde_shape_streams_like_its_value(value in doc()) {
        let streamed = canonical_json(&value).expect("stream");
        prop_assert_eq!(&streamed, &reference(&value));
        let fingerprint = Fingerprint::of(&value).expect("fingerprint");
        prop_assert_eq!(fingerprint, Fingerprint::of(&serde_json::to_value(&value).expect("value")).expect("fp"));
        // An outermost object out of order is hashed from where its members were written.
        prop_assert_eq!(fingerprint.hex(), Sha256::of(&streamed).hex());
    }
}

#[test]
fn a_non_finite_float_is_null_and_a_repeated_key_keeps_its_last_value() {
    #[derive(Serialize)]
    struct F {
        x: f64,
        y: f32,
    }
    let f = F {
        x: f64::NAN,
        y: f32::INFINITY,
    };
    assert_eq!(canonical_json(&f).expect("stream"), b"{\"x\":null,\"y\":null}");
    assert_eq!(canonical_json(&f).expect("stream"), reference(&f));

    struct Twice;
    impl Serialize for Twice {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("k", &1)?;
            m.serialize_entry("a", &0)?;
            m.serialize_entry("k", &2)?;
            m.end()
        }
    }
    assert_eq!(canonical_json(&Twice).expect("stream"), b"{\"a\":0,\"k\":2}");
    assert_eq!(canonical_json(&Twice).expect("stream"), reference(&Twice));
    // Out of order at the root, with the repeat: the fingerprint keeps the last value too.
    assert_eq!(
        Fingerprint::of(&Twice).expect("fingerprint").hex(),
        Sha256::of(b"{\"a\":0,\"k\":2}").hex()
    );
}

#[test]
fn keys_that_are_not_strings_or_scalars_are_refused() {
    let mut m = BTreeMap::new();
    m.insert(vec![1u8], 1);
    assert_eq!(
        canonical_json(&m),
        Err(Error::NotJson("key must be a string".to_owned()))
    );
    let mut b = BTreeMap::new();
    b.insert(true, 1);
    assert_eq!(canonical_json(&b).expect("bool keys"), reference(&b));
}
