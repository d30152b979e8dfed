//! The examples under `docs/examples` against the generated schemas: every valid example passes
//! the structural schema and every CEL rule; every invalid one is refused at the field it names.

#![allow(clippy::unwrap_used)]

mod common;

use std::{collections::BTreeSet, path::PathBuf};

use common::{cel_refusals, examples_dir, normalise, read_manifest, schema_of, schemas, structural_refusals};
use serde_json::Value;

fn kind_of(object: &Value) -> String {
    object["kind"].as_str().expect("manifest has a kind").to_owned()
}

fn yaml_files(dir: PathBuf) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// Header lines `# key: value` of an invalid example.
fn header(text: &str, key: &str) -> Option<String> {
    let prefix = format!("# {key}:");
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_owned()))
}

#[test]
fn every_kind_has_one_valid_example() {
    let kinds: BTreeSet<String> = schemas().into_keys().collect();
    let examples: BTreeSet<String> = yaml_files(examples_dir())
        .iter()
        .map(|p| kind_of(&read_manifest(p).1))
        .collect();
    assert_eq!(kinds, examples);
    assert_eq!(kinds.len(), 10);
}

#[test]
fn valid_examples_pass_schema_and_cel() {
    for path in yaml_files(examples_dir()) {
        let (_, object) = read_manifest(&path);
        let schema = schema_of(&kind_of(&object));
        let structural = structural_refusals(&schema, &object);
        assert!(structural.is_empty(), "{}: {structural:?}", path.display());
        let cel = cel_refusals(&schema, &object, None);
        assert!(cel.is_empty(), "{}: {cel:?}", path.display());
        // An unchanged update passes every transition rule too.
        let cel = cel_refusals(&schema, &object, Some(&object));
        assert!(cel.is_empty(), "{} (update to itself): {cel:?}", path.display());
    }
}

#[test]
fn valid_examples_deserialize_into_the_rust_types() {
    fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(object: &Value) -> Value {
        let typed: T = serde_json::from_value(object.clone()).unwrap();
        serde_json::to_value(typed).unwrap()
    }
    for path in yaml_files(examples_dir()) {
        let (_, object) = read_manifest(&path);
        let back = match kind_of(&object).as_str() {
            "PtahSchema" => round_trip::<ptah_api::PtahSchema>(&object),
            "PtahSchemaPlan" => round_trip::<ptah_api::PtahSchemaPlan>(&object),
            "PtahSchemaPlanChunk" => round_trip::<ptah_api::PtahSchemaPlanChunk>(&object),
            "PtahSchemaApproval" => round_trip::<ptah_api::PtahSchemaApproval>(&object),
            "PtahMigration" => round_trip::<ptah_api::PtahMigration>(&object),
            "PtahMigrationPlan" => round_trip::<ptah_api::PtahMigrationPlan>(&object),
            "PtahMigrationApproval" => round_trip::<ptah_api::PtahMigrationApproval>(&object),
            "PtahMigrationRunAcknowledgment" => {
                round_trip::<ptah_api::PtahMigrationRunAcknowledgment>(&object)
            }
            "PtahRealm" => round_trip::<ptah_api::PtahRealm>(&object),
            "PtahResultRecord" => round_trip::<ptah_api::PtahResultRecord>(&object),
            other => panic!("unexpected kind {other}"),
        };
        // What the types write back is still valid (defaults filled in are within bounds).
        let schema = schema_of(&kind_of(&object));
        assert!(
            structural_refusals(&schema, &back).is_empty(),
            "{}",
            path.display()
        );
        assert!(
            cel_refusals(&schema, &back, None).is_empty(),
            "{}",
            path.display()
        );
        assert_eq!(back["metadata"]["name"], object["metadata"]["name"]);
    }
}

#[test]
fn invalid_examples_are_refused_at_the_named_field() {
    let files = yaml_files(examples_dir().join("invalid"));
    assert!(files.len() >= 40, "only {} invalid examples", files.len());
    let mut kinds_covered = BTreeSet::new();
    let mut failures = Vec::new();
    for path in files {
        let (text, object) = read_manifest(&path);
        let name = path.display().to_string();
        let by = header(&text, "expect-by").unwrap_or_else(|| panic!("{name}: no expect-by"));
        let want_path = header(&text, "expect-path").unwrap_or_else(|| panic!("{name}: no expect-path"));
        let want_message = header(&text, "expect-message");
        let kind = kind_of(&object);
        kinds_covered.insert(kind.clone());
        let schema = schema_of(&kind);
        let old = header(&text, "old").map(|file| read_manifest(&examples_dir().join(file)).1);

        let structural = structural_refusals(&schema, &object);
        let cel = cel_refusals(&schema, &object, old.as_ref());
        let refusals = match by.as_str() {
            "schema" => {
                if !cel.is_empty() {
                    failures.push(format!("{name}: refused by CEL too: {cel:?}"));
                }
                structural
            }
            "cel" => {
                assert!(
                    structural.is_empty(),
                    "{name}: refused structurally too: {structural:?}"
                );
                if let Some(old) = &old {
                    // The same object is fine as a create: only the transition is refused.
                    if !cel_refusals(&schema, old, Some(old)).is_empty() {
                        failures.push(format!("{name}: the old object is itself refused"));
                    }
                }
                cel
            }
            other => panic!("{name}: unknown expect-by {other}"),
        };
        assert!(
            !refusals.is_empty(),
            "{name}: accepted, but must be refused at {want_path}"
        );
        let matching: Vec<_> = refusals
            .iter()
            .filter(|r| normalise(&r.path) == want_path)
            .collect();
        assert!(
            !matching.is_empty(),
            "{name}: refused, but not at {want_path:?}: {refusals:?}"
        );
        if let Some(message) = want_message {
            assert!(
                matching.iter().any(|r| r.message.contains(&message)),
                "{name}: no refusal at {want_path} says {message:?}: {matching:?}"
            );
        }
    }
    assert_eq!(
        kinds_covered.len(),
        10,
        "every kind has an invalid example: {kinds_covered:?}"
    );
}
