//! The model serializes deterministically and round-trips through JSON.

use ptah_schema::{Column, DataType, QualifiedName, Schema, Table};

fn sample() -> Schema {
    let mut schema = Schema::default();
    for name in ["b", "a"] {
        let mut table = Table::new(QualifiedName::new("public", name));
        table.columns.push(Column {
            name: "id".into(),
            data_type: DataType::Integer {
                bits: 64,
                unsigned: false,
            },
            nullable: false,
            default: None,
            identity: None,
            identity_options: None,
            auto_increment: false,
            comment: None,
            charset: None,
            collation: None,
            generated: None,
        });
        schema.tables.insert(table.name.clone(), table);
    }
    schema
}

#[test]
fn round_trips_through_json_and_keeps_its_fingerprint() {
    let schema = sample();
    let json = serde_json::to_string(&schema).expect("serialize");
    let back: Schema = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(back, schema);
    assert_eq!(back.fingerprint(), schema.fingerprint());
    assert!(
        json.find("\"a\"").expect("a") < json.find("\"b\"").expect("b"),
        "tables in key order: {json}"
    );
}

#[test]
fn fingerprint_changes_with_content() {
    let mut other = sample();
    other
        .tables
        .values_mut()
        .for_each(|t| t.columns[0].nullable = true);
    assert_ne!(other.fingerprint(), sample().fingerprint());
}

#[test]
fn a_table_listed_twice_is_refused() {
    let json = serde_json::to_value(sample()).expect("serialize");
    let mut tables = json["tables"].as_array().expect("list").clone();
    tables.push(tables[0].clone());
    let mut doc = json.clone();
    doc["tables"] = serde_json::Value::Array(tables);
    let err = serde_json::from_value::<Schema>(doc).expect_err("duplicate");
    assert!(err.to_string().contains("declared twice"), "{err}");
}
