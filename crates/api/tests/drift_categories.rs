//! The drift vocabulary: `DriftCategory::ALL` is every variant the CRD enumerates, wire names are
//! serde's, and the executor conversion maps the renamed row categories and refuses unknown names.
//! (That every category the executor emits converts is tested against the executor's own list in
//! `crates/engine/tests/drift_categories.rs`.)

mod common;

use std::collections::BTreeSet;

use ptah_api::schema::{DriftCategory, DriftSeverity, MAX_DRIFT_FINDINGS};
use serde_json::Value;

fn crd_enum(pointer: &str) -> Vec<String> {
    let schemas = common::schemas();
    let values = schemas["PtahSchema"]
        .pointer(pointer)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("{pointer} is an enum"));
    values
        .iter()
        .map(|v| v.as_str().expect("string enum value").to_owned())
        .collect()
}

const CATEGORY: &str =
    "/properties/status/properties/target/properties/driftFindings/items/properties/category/enum";

#[test]
fn all_is_exactly_the_crd_enum_in_wire_order() {
    let crd = crd_enum(CATEGORY);
    let all: Vec<String> = DriftCategory::ALL.iter().map(|c| c.as_str().to_owned()).collect();
    assert_eq!(all, crd, "ALL must list every variant, as the CRD does");
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted, "ALL is in wire-name order");
    assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), 62);
    assert!(
        all.len() <= MAX_DRIFT_FINDINGS,
        "a full list of categories is never truncated"
    );
}

#[test]
fn as_str_is_the_serde_wire_name_and_round_trips() {
    for c in DriftCategory::ALL {
        assert_eq!(
            serde_json::to_value(c).expect("serializes"),
            Value::String(c.as_str().to_owned())
        );
        assert_eq!(c.to_string(), c.as_str());
        let back: DriftCategory =
            serde_json::from_value(Value::String(c.as_str().to_owned())).expect("parses");
        assert_eq!(back, c);
        assert_eq!(DriftCategory::from_executor(c.as_str()), Some(c), "{c}");
    }
}

#[test]
fn the_executor_row_categories_are_the_reference_data_rows() {
    assert_eq!(
        DriftCategory::from_executor("rows_inserted"),
        Some(DriftCategory::DataRowsInserted)
    );
    assert_eq!(
        DriftCategory::from_executor("rows_updated"),
        Some(DriftCategory::DataRowsUpdated)
    );
    assert_eq!(
        DriftCategory::from_executor("rows_deleted"),
        Some(DriftCategory::DataRowsDeleted)
    );
    for (name, want) in [
        ("namespaces_added", DriftCategory::NamespacesAdded),
        ("enums_modified", DriftCategory::EnumsModified),
        ("table_comments_modified", DriftCategory::TableCommentsModified),
        ("table_options_modified", DriftCategory::TableOptionsModified),
        ("indexes_modified", DriftCategory::IndexesModified),
        ("constraints_modified", DriftCategory::ConstraintsModified),
        ("domains_added", DriftCategory::DomainsAdded),
        ("domains_modified", DriftCategory::DomainsModified),
        ("domains_removed", DriftCategory::DomainsRemoved),
        ("sequences_added", DriftCategory::SequencesAdded),
        ("sequences_modified", DriftCategory::SequencesModified),
        ("sequences_removed", DriftCategory::SequencesRemoved),
        ("grants_added", DriftCategory::GrantsAdded),
        ("grants_removed", DriftCategory::GrantsRemoved),
        ("rls_enabled_tables_added", DriftCategory::RlsEnabledTablesAdded),
        ("rls_force_removed", DriftCategory::RlsForceRemoved),
        ("rls_policies_modified", DriftCategory::RlsPoliciesModified),
        ("views_added", DriftCategory::ViewsAdded),
        ("views_modified", DriftCategory::ViewsModified),
        ("views_removed", DriftCategory::ViewsRemoved),
        ("triggers_added", DriftCategory::TriggersAdded),
        ("triggers_modified", DriftCategory::TriggersModified),
        ("triggers_removed", DriftCategory::TriggersRemoved),
    ] {
        assert_eq!(DriftCategory::from_executor(name), Some(want), "{name}");
    }
}

#[test]
fn unknown_or_misspelt_categories_do_not_convert() {
    for name in [
        "",
        "private_schema_name",
        "Tables_Added",
        "tablesAdded",
        "TablesAdded",
        "tables_added ",
        "rows_inserted\n",
        "rows_modified",
    ] {
        assert_eq!(DriftCategory::from_executor(name), None, "{name:?}");
    }
}

#[test]
fn executor_severities_convert_and_match_the_crd_enum() {
    let crd = crd_enum(
        "/properties/status/properties/target/properties/driftFindings/items/properties/severity/enum",
    );
    assert_eq!(crd, ["safe", "info", "warning", "error", "destructive"]);
    for name in &crd {
        let parsed: DriftSeverity = serde_json::from_value(Value::String(name.clone())).expect("parses");
        assert_eq!(DriftSeverity::from_executor(name), Some(parsed), "{name}");
    }
    assert_eq!(DriftSeverity::from_executor("critical"), None);
    assert_eq!(DriftSeverity::from_executor("Safe"), None);
}
