//! The differ: categories, identity matching, enum methods, FK order, findings.

use ptah_schema::diff::{
    DiffCategory, EnumChangeMethod, EnumPosition, EnumValueAdded, ExcludeSet, diff, fk_order,
};
use ptah_schema::render::findings;
use ptah_schema::{
    Column, DataType, DefaultValue, Dialect, EnumType, ForeignKey, Literal, MysqlFlavor, QualifiedName,
    ReferentialAction, Schema, Severity, Table,
};

fn col(name: &str, data_type: DataType) -> Column {
    Column {
        name: name.into(),
        data_type,
        nullable: true,
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

fn table(name: &str, cols: Vec<Column>) -> Table {
    let mut t = Table::new(QualifiedName::new("public", name));
    t.columns = cols;
    t
}

fn schema(tables: Vec<Table>) -> Schema {
    let mut s = Schema::default();
    for t in tables {
        s.tables.insert(t.name.clone(), t);
    }
    s
}

#[test]
fn a_renamed_column_is_a_removal_and_an_addition() {
    let before = schema(vec![table("t", vec![col("old", DataType::Text)])]);
    let after = schema(vec![table("t", vec![col("new", DataType::Text)])]);
    let d = diff(&after, &before);
    assert_eq!(d.columns_added.len(), 1);
    assert_eq!(d.columns_added[0].column.name, "new");
    assert_eq!(d.columns_removed.len(), 1);
    assert_eq!(d.columns_removed[0].column.name, "old");
    assert!(d.columns_modified.is_empty());
    assert_eq!(
        d.counts(),
        vec![(DiffCategory::ColumnsAdded, 1), (DiffCategory::ColumnsRemoved, 1)]
    );
}

#[test]
fn canonical_values_compare_equal_whatever_their_origin() {
    // The same canonical type and default are equal: no change; column order does not matter for
    // identity but a changed default does.
    let mut c = col(
        "n",
        DataType::Integer {
            bits: 32,
            unsigned: false,
        },
    );
    c.default = Some(DefaultValue::Literal(Literal::Number("1".into())));
    let before = schema(vec![table("t", vec![c.clone(), col("m", DataType::Text)])]);
    let after = schema(vec![table("t", vec![col("m", DataType::Text), c.clone()])]);
    assert!(diff(&after, &before).is_empty());
    let mut changed = c;
    changed.default = Some(DefaultValue::Expression("1 + 1".into()));
    let after = schema(vec![table("t", vec![changed, col("m", DataType::Text)])]);
    let d = diff(&after, &before);
    assert_eq!(d.columns_modified.len(), 1);
    assert_eq!(
        d.columns_modified[0].changes,
        vec![ptah_schema::diff::ColumnAspect::Default]
    );
}

#[test]
fn enum_changes_choose_add_value_or_recreate() {
    let e = QualifiedName::new("public", "e");
    let with = |labels: &[&str]| {
        let mut s = schema(vec![table("t", vec![col("x", DataType::Enum(e.clone()))])]);
        s.enums.insert(
            e.clone(),
            EnumType {
                name: e.clone(),
                values: labels.iter().map(|l| (*l).into()).collect(),
            },
        );
        s
    };
    let d = diff(&with(&["a", "b", "c"]), &with(&["b"]));
    assert_eq!(
        d.enums_modified[0].method,
        EnumChangeMethod::AddValues(vec![
            EnumValueAdded {
                value: "a".into(),
                position: EnumPosition::Before("b".into())
            },
            EnumValueAdded {
                value: "c".into(),
                position: EnumPosition::After("b".into())
            },
        ])
    );
    let d = diff(&with(&["x"]), &with(&[]));
    assert_eq!(
        d.enums_modified[0].method,
        EnumChangeMethod::AddValues(vec![EnumValueAdded {
            value: "x".into(),
            position: EnumPosition::End
        }])
    );
    // A reorder cannot be done in place.
    let d = diff(&with(&["b", "a"]), &with(&["a", "b"]));
    let EnumChangeMethod::Recreate(uses) = &d.enums_modified[0].method else {
        panic!("expected a recreate, got {:?}", d.enums_modified[0].method);
    };
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0].column, "x");
    // A recreate always drops the replaced type (destructive); adding labels is a warning.
    let severity = |d| {
        findings(&d, Dialect::Postgres, MysqlFlavor::Mysql)
            .into_iter()
            .find(|f| f.category == DiffCategory::EnumsModified)
            .map(|f| f.severity)
    };
    assert_eq!(
        severity(diff(&with(&["b", "a"]), &with(&["a", "b"]))),
        Some(Severity::Destructive)
    );
    assert_eq!(
        severity(diff(&with(&["a", "b", "c"]), &with(&["a", "b"]))),
        Some(Severity::Warning)
    );
}

#[test]
fn fk_order_puts_parents_first_and_breaks_cycles_deterministically() {
    let fk = |target: &str| ForeignKey {
        name: format!("to_{target}"),
        columns: vec!["x".into()],
        referenced_table: QualifiedName::new("public", target),
        referenced_columns: vec!["x".into()],
        on_delete: ReferentialAction::NoAction,
        on_update: ReferentialAction::NoAction,
        options: ptah_schema::ForeignKeyOptions::default(),
    };
    let with_fks = |name: &str, targets: &[&str]| {
        let mut t = table(name, vec![col("x", DataType::Text)]);
        for target in targets {
            let f = fk(target);
            t.foreign_keys.insert(f.name.clone(), f);
        }
        t
    };
    let tables = [
        with_fks("a_child", &["z_parent", "a_child"]),
        with_fks("z_parent", &[]),
        with_fks("m1", &["m2", "z_parent"]),
        with_fks("m2", &["m1"]),
        with_fks("outside", &["not_in_set"]),
    ];
    let names: Vec<String> = fk_order(tables.iter()).into_iter().map(|n| n.name).collect();
    assert_eq!(names, ["outside", "z_parent", "a_child", "m1", "m2"]);
    let reversed: Vec<String> = fk_order(tables.iter().rev())
        .into_iter()
        .map(|n| n.name)
        .collect();
    assert_eq!(names, reversed);
}

#[test]
fn findings_summarize_counts_and_severities_sorted_by_category() {
    let before = schema(vec![
        table("gone", vec![col("a", DataType::Text)]),
        table(
            "kept",
            vec![col("a", DataType::Varchar(Some(10))), col("b", DataType::Text)],
        ),
    ]);
    let after = schema(vec![
        table(
            "kept",
            vec![col("a", DataType::Varchar(Some(20))), col("c", DataType::Text)],
        ),
        table("new", vec![col("a", DataType::Text)]),
    ]);
    let d = diff(&after, &before);
    let f = findings(&d, Dialect::Postgres, MysqlFlavor::Mysql);
    let summary: Vec<(&str, usize, Severity)> = f
        .iter()
        .map(|f| (f.category.as_str(), f.count, f.severity))
        .collect();
    assert_eq!(
        summary,
        [
            ("columns_added", 1, Severity::Safe),
            ("columns_modified", 1, Severity::Warning),
            ("columns_removed", 1, Severity::Destructive),
            ("tables_added", 1, Severity::Safe),
            ("tables_removed", 1, Severity::Destructive),
        ]
    );
    // MySQL rates a widening MODIFY as a warning too, and the same counts.
    let my = findings(&d, Dialect::Mysql, MysqlFlavor::Mysql);
    assert_eq!(my.iter().map(|f| f.count).sum::<usize>(), 5);
}

#[test]
fn touched_tables_name_every_altered_table_once_per_category() {
    let before = schema(vec![
        table("a", vec![col("x", DataType::Text)]),
        table("b", vec![]),
    ]);
    let after = schema(vec![
        table("a", vec![col("y", DataType::Text)]),
        table("c", vec![]),
    ]);
    let touched: Vec<(String, DiffCategory)> = diff(&after, &before)
        .touched_tables()
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    assert_eq!(
        touched,
        [
            ("public.a".to_owned(), DiffCategory::ColumnsAdded),
            ("public.a".to_owned(), DiffCategory::ColumnsRemoved),
            ("public.b".to_owned(), DiffCategory::TablesRemoved),
        ]
    );
}

#[test]
fn exclude_set_matches_bare_and_qualified_names() {
    let set = ExcludeSet::new(&["audit_*".into(), "public.tmp_?".into()]);
    assert!(set.matches(&QualifiedName::new("any", "audit_x")));
    assert!(set.matches(&QualifiedName::new("public", "tmp_1")));
    assert!(!set.matches(&QualifiedName::new("other", "tmp_1")));
    assert!(set.matches(&QualifiedName::new("", "AUDIT_y")));
    assert!(!set.matches(&QualifiedName::new("", "tmp_1")));
}
