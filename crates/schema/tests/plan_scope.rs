//! Plan options and properties: protected tables, exclude scope, fingerprints, determinism.

use std::collections::BTreeMap;

use proptest::prelude::*;
use ptah_schema::diff::DiffCategory;
use ptah_schema::{
    Column, DataType, DefaultValue, Dialect, EnumType, ForeignKey, Identity, Index, IndexPart, IndexTarget,
    Literal, PlanError, PlanOptions, PrimaryKey, QualifiedName, ReferenceRows, ReferentialAction, Schema,
    Table, UniqueConstraint, plan,
};

fn col(name: &str, nullable: bool) -> Column {
    Column {
        name: name.into(),
        data_type: DataType::Text,
        nullable,
        default: None,
        identity: None,
        identity_options: None,
        auto_increment: false,
        comment: None,
        charset: None,
        collation: None,
        generated: None,
    }
}

fn table(schema: &str, name: &str, cols: &[&str]) -> Table {
    let mut t = Table::new(QualifiedName::new(schema, name));
    t.columns = cols.iter().map(|c| col(c, true)).collect();
    t
}

fn schema(tables: Vec<Table>) -> Schema {
    let mut s = Schema::default();
    for t in tables {
        s.tables.insert(t.name.clone(), t);
    }
    s
}

fn protect(names: &[&str]) -> PlanOptions {
    PlanOptions {
        protected_tables: names.iter().map(|n| (*n).into()).collect(),
        ..PlanOptions::default()
    }
}

#[test]
fn protected_tables_refuse_drops_alters_and_row_changes() {
    let actual = schema(vec![
        table("public", "Ledger", &["a"]),
        table("public", "other", &["a"]),
    ]);
    // Dropping it.
    let desired = schema(vec![table("public", "other", &["a"])]);
    let err = plan(&desired, &actual, Dialect::Postgres, &protect(&["PUBLIC.ledger"])).expect_err("refused");
    assert_eq!(
        err,
        PlanError::ProtectedTable {
            table: "public.Ledger".into(),
            category: DiffCategory::TablesRemoved
        }
    );
    assert!(err.to_string().contains("public.Ledger"));
    // Altering it (bare name, any case).
    let desired = schema(vec![
        table("public", "Ledger", &["a", "b"]),
        table("public", "other", &["a"]),
    ]);
    let err = plan(&desired, &actual, Dialect::Postgres, &protect(&["ledger"])).expect_err("refused");
    assert!(matches!(
        err,
        PlanError::ProtectedTable {
            category: DiffCategory::ColumnsAdded,
            ..
        }
    ));
    // Changing its rows.
    let mut desired = actual.clone();
    if let Some(t) = desired.tables.get_mut(&QualifiedName::new("public", "Ledger")) {
        t.rows = Some(ReferenceRows {
            key: vec!["a".into()],
            rows: vec![BTreeMap::from([("a".to_owned(), Literal::String("x".into()))])],
        });
    }
    let err = plan(&desired, &actual, Dialect::Postgres, &protect(&["ledger"])).expect_err("refused");
    assert!(matches!(
        err,
        PlanError::ProtectedTable {
            category: DiffCategory::RowsInserted,
            ..
        }
    ));
    // Changes elsewhere are planned; an unrelated protected name does not interfere.
    let desired = schema(vec![
        table("public", "Ledger", &["a"]),
        table("public", "other", &["a", "b"]),
    ]);
    let p = plan(
        &desired,
        &actual,
        Dialect::Postgres,
        &protect(&["ledger", "audit.other"]),
    )
    .expect("plan");
    assert_eq!(p.statements.len(), 1);
}

#[test]
fn duplicate_reference_row_keys_are_refused() {
    let mut desired = schema(vec![table("public", "t", &["a", "b"])]);
    if let Some(t) = desired.tables.values_mut().next() {
        let row = |b: &str| {
            BTreeMap::from([
                ("a".to_owned(), Literal::Number("1".into())),
                ("b".to_owned(), Literal::String(b.into())),
            ])
        };
        t.rows = Some(ReferenceRows {
            key: vec!["a".into()],
            rows: vec![row("x"), row("y")],
        });
    }
    let err = plan(
        &desired,
        &Schema::default(),
        Dialect::Mysql,
        &PlanOptions::default(),
    )
    .expect_err("dup");
    assert_eq!(
        err,
        PlanError::DuplicateRowKey {
            table: "public.t".into()
        }
    );
}

#[test]
fn exclude_hides_objects_on_both_sides() {
    let actual = schema(vec![
        table("public", "audit_log", &["a"]),
        table("public", "tmp_1", &["a"]),
        table("public", "keep", &["a"]),
    ]);
    let desired = schema(vec![
        table("public", "audit_trail", &["a"]),
        table("other", "tmp_2", &["a"]),
        table("public", "keep", &["a"]),
    ]);
    let options = PlanOptions {
        exclude: vec!["audit_*".into(), "public.tmp_*".into()],
        ..PlanOptions::default()
    };
    let p = plan(&desired, &actual, Dialect::Postgres, &options).expect("plan");
    let sql: Vec<&str> = p.statements.iter().map(|s| s.sql.as_str()).collect();
    // other.tmp_2 is outside `public.tmp_*`, so it is created; nothing else happens.
    assert_eq!(sql, [r#"CREATE TABLE "other"."tmp_2" ("a" text)"#]);
    assert_eq!(p.exclude, options.exclude);
    // The fingerprints are those of the scoped schemas.
    let scoped_actual = schema(vec![table("public", "keep", &["a"])]);
    assert_eq!(p.from_fingerprint, scoped_actual.fingerprint());
    let scoped_desired = schema(vec![
        table("other", "tmp_2", &["a"]),
        table("public", "keep", &["a"]),
    ]);
    assert_eq!(p.to_fingerprint, scoped_desired.fingerprint());
}

#[test]
fn plan_files_carry_format_and_destructive_flag() {
    let actual = schema(vec![table("public", "t", &["a", "b"])]);
    let desired = schema(vec![table("public", "t", &["a"])]);
    let p = plan(&desired, &actual, Dialect::Postgres, &PlanOptions::default()).expect("plan");
    assert!(p.destructive);
    let json = serde_json::to_value(&p).expect("json");
    assert_eq!(json["format_version"], 1);
    assert_eq!(json["dialect"], "postgres");
    assert_eq!(json["statements"][0]["severity"], "destructive");
    assert!(json.get("exclude").is_none());
    let empty = plan(&desired, &desired, Dialect::Postgres, &PlanOptions::default()).expect("plan");
    assert!(empty.is_empty() && !empty.destructive);
    assert_eq!(empty.from_fingerprint, empty.to_fingerprint);
}

// ---- random schemas ----

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "Mixed", "order", "x y"]).prop_map(str::to_owned)
}

fn data_type() -> impl Strategy<Value = DataType> {
    prop_oneof![
        Just(DataType::Text),
        Just(DataType::Boolean),
        (prop::sample::select(vec![16u8, 32, 64]), any::<bool>())
            .prop_map(|(bits, unsigned)| DataType::Integer { bits, unsigned }),
        prop::option::of(1u32..300).prop_map(DataType::Varchar),
        (prop::option::of(1u32..20), prop::option::of(0u32..5))
            .prop_map(|(precision, scale)| DataType::Decimal { precision, scale }),
        Just(DataType::Enum(QualifiedName::new("public", "e1"))),
        prop::collection::vec(name(), 0..3).prop_map(DataType::InlineEnum),
    ]
}

fn column() -> impl Strategy<Value = Column> {
    (
        name(),
        data_type(),
        any::<bool>(),
        prop::option::of(0u8..3),
        any::<bool>(),
        prop::option::of(name()),
    )
        .prop_map(
            |(name, data_type, nullable, default, auto_increment, comment)| Column {
                name,
                data_type,
                nullable,
                default: default.map(|d| match d {
                    0 => DefaultValue::Literal(Literal::Number("1".into())),
                    1 => DefaultValue::Literal(Literal::String("it's".into())),
                    _ => DefaultValue::Expression("now()".into()),
                }),
                identity: auto_increment.then_some(Identity::ByDefault),
                identity_options: None,
                auto_increment,
                comment,
                charset: None,
                collation: None,
                generated: None,
            },
        )
}

fn table_strategy() -> impl Strategy<Value = Table> {
    (
        prop::sample::select(vec!["t1", "t2", "t3", "t4"]),
        prop::collection::vec(column(), 0..4),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec!["t1", "t2", "t3", "t4"])),
        prop::option::of(any::<bool>()),
        prop::collection::vec((name(), name()), 0..3),
    )
        .prop_map(|(n, mut columns, pk, fk_target, index, rows)| {
            let mut seen = std::collections::BTreeSet::new();
            columns.retain(|c| seen.insert(c.name.clone()));
            let mut t = Table::new(QualifiedName::new("public", n));
            let first = columns.first().map(|c| c.name.clone());
            t.columns = columns;
            if let Some(c) = first {
                if pk {
                    t.primary_key = Some(PrimaryKey {
                        name: format!("{n}_pkey"),
                        columns: vec![c.clone()],
                    });
                    t.uniques.insert(
                        "u".into(),
                        UniqueConstraint {
                            name: "u".into(),
                            columns: vec![c.clone()],
                        },
                    );
                }
                if let Some(target) = fk_target {
                    let fk = ForeignKey {
                        name: format!("{n}_fk"),
                        columns: vec![c.clone()],
                        referenced_table: QualifiedName::new("public", target),
                        referenced_columns: vec!["a".into()],
                        on_delete: ReferentialAction::Cascade,
                        on_update: ReferentialAction::NoAction,
                        options: ptah_schema::ForeignKeyOptions::default(),
                    };
                    t.foreign_keys.insert(fk.name.clone(), fk);
                }
                if let Some(unique) = index {
                    let part = IndexPart {
                        target: IndexTarget::Column(c.clone()),
                        descending: unique,
                        prefix_length: None,
                        opclass: None,
                        nulls_first: None,
                    };
                    t.indexes.insert(
                        "i".into(),
                        Index {
                            name: "i".into(),
                            unique,
                            parts: vec![part],
                            predicate: None,
                            method: None,
                            include: Vec::new(),
                            nulls_not_distinct: false,
                            storage: Vec::new(),
                        },
                    );
                }
                let mut keys = std::collections::BTreeSet::new();
                t.rows = Some(ReferenceRows {
                    key: vec![c.clone()],
                    rows: rows
                        .into_iter()
                        .filter(|(k, _)| keys.insert(k.clone()))
                        .map(|(k, v)| {
                            BTreeMap::from([
                                (c.clone(), Literal::String(k)),
                                ("z".to_owned(), Literal::String(v)),
                            ])
                        })
                        .collect(),
                });
            }
            t
        })
}

fn schema_strategy() -> impl Strategy<Value = Schema> {
    (
        prop::collection::vec(table_strategy(), 0..4),
        prop::option::of(prop::collection::vec(name(), 0..4)),
        prop::collection::btree_set(prop::sample::select(vec!["public", "app"]), 0..2),
    )
        .prop_map(|(tables, labels, namespaces)| {
            let mut s = Schema {
                namespaces: namespaces.into_iter().map(str::to_owned).collect(),
                ..Schema::default()
            };
            for t in tables {
                s.tables.insert(t.name.clone(), t);
            }
            if let Some(mut values) = labels {
                let mut seen = std::collections::BTreeSet::new();
                values.retain(|v| seen.insert(v.clone()));
                let name = QualifiedName::new("public", "e1");
                s.enums.insert(name.clone(), EnumType { name, values });
            }
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn planning_is_deterministic_and_never_panics(a in schema_strategy(), b in schema_strategy()) {
        for dialect in [Dialect::Postgres, Dialect::Mysql] {
            let options = PlanOptions { exclude: vec!["t4".into()], ..PlanOptions::default() };
            let first = plan(&a, &b, dialect, &options).expect("no protected tables");
            let second = plan(&a.clone(), &b.clone(), dialect, &options).expect("plan");
            let first_bytes = serde_json::to_vec(&first).expect("json");
            prop_assert_eq!(first_bytes, serde_json::to_vec(&second).expect("json"));
            prop_assert_eq!(first.destructive, first.statements.iter().any(|s| s.severity == ptah_schema::Severity::Destructive));
            let same = plan(&a, &a, dialect, &options).expect("plan");
            prop_assert!(same.is_empty(), "plan(x, x) = {:?}", same.statements);
            prop_assert!(ptah_schema::drift(&a, &a, dialect, &options).findings.is_empty());
        }
    }

    #[test]
    fn an_empty_diff_means_the_managed_parts_are_equal(a in schema_strategy(), b in schema_strategy()) {
        // Column order, extra namespaces and extensions on the actual side, and rows of tables
        // that declare none are not managed; everything else must be equal for an empty diff.
        let managed = |s: &Schema, rows_of: &Schema| {
            let mut s = s.clone();
            for t in s.tables.values_mut() {
                t.columns.sort_by(|x, y| x.name.cmp(&y.name));
                if rows_of.tables.get(&t.name).is_none_or(|d| d.rows.is_none()) {
                    t.rows = None;
                }
                if let Some(r) = t.rows.as_mut() {
                    r.rows.sort();
                }
            }
            (s.tables, s.enums)
        };
        let d = ptah_schema::diff::diff(&a, &b);
        let equal = managed(&a, &a) == managed(&b, &a) && a.namespaces.is_subset(&b.namespaces);
        prop_assert_eq!(d.is_empty(), equal, "{:?}", d.counts());
        prop_assert!(ptah_schema::diff::diff(&a, &a).is_empty());
    }
}
