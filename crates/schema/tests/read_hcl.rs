//! The `schema.hcl` reader and writer: features into the model, refusals with positions, and
//! written models reading back equal.

use ptah_schema::read::{ReadError, hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{
    DataType, DefaultValue, Dialect, Identity, IndexTarget, Literal, QualifiedName, ReferentialAction,
};

const PG: Dialect = Dialect::Postgres;

fn q(s: &str, n: &str) -> QualifiedName {
    QualifiedName::new(s, n)
}

const DOC: &str = r#"schema "app" {}
extension "pgcrypto" {
  schema = schema.app
  version = "1.3"
}
enum "state" {
  schema = schema.app
  values = ["draft", "paid"]
}
table "customers" {
  schema = schema.app
  column "id" {
    type = bigint
  }
  primary_key {
    columns = [column.id]
  }
  data {
    key = [column.id]
    rows = [{ id = 2 }, { id = 1 }]
  }
}
table "invoices" {
  schema = schema.app
  comment = "customer invoices"
  column "id" {
    type = bigint
    identity {
      generated = ALWAYS
    }
  }
  column "customer_id" {
    type = bigint
    null = false
  }
  column "state" {
    type = enum.state
    default = "draft"
  }
  column "total" {
    type = numeric(10, 2)
    null = true
    default = -1.50
  }
  column "created_at" {
    type = sql("timestamp(3) with time zone")
    default = sql("CURRENT_TIMESTAMP")
  }
  column "email" {
    type = varchar(255)
    comment = "who"
  }
  primary_key {
    columns = [column.id]
  }
  foreign_key "invoices_customer_fk" {
    columns     = [column.customer_id]
    ref_columns = [table.customers.column.id]
    on_delete   = RESTRICT
  }
  check "invoices_total_nonneg" {
    expr = "(total >= 0)"
  }
  unique "invoices_email_key" {
    columns = [column.email]
  }
  index "invoices_customer_idx" {
    columns = [column.customer_id]
    where = "state <> 'paid'"
  }
  index "invoices_expr_idx" {
    unique = true
    on {
      expr = "lower(email)"
    }
    on {
      column = column.created_at
      desc = true
    }
    type = BTREE
  }
}
"#;

#[test]
fn document_reads_into_the_model() {
    let s = hcl::parse(PG, "schema.hcl", DOC).expect("reads");
    assert!(s.namespaces.contains("app"));
    assert_eq!(s.extensions["pgcrypto"].version.as_deref(), Some("1.3"));
    assert_eq!(s.enums[&q("app", "state")].values, ["draft", "paid"]);
    let c = &s.tables[&q("app", "customers")];
    assert_eq!(
        c.primary_key.as_ref().map(|p| p.name.as_str()),
        Some("customers_pkey")
    );
    let rows = c.rows.as_ref().expect("rows");
    assert_eq!(
        rows.rows[0]["id"],
        Literal::Number("1".into()),
        "rows are ordered by key"
    );
    let t = &s.tables[&q("app", "invoices")];
    assert_eq!(t.comment.as_deref(), Some("customer invoices"));
    let id = t.column("id").expect("id");
    assert_eq!(id.identity, Some(Identity::Always));
    assert!(!id.nullable);
    let state = t.column("state").expect("state");
    assert_eq!(state.data_type, DataType::Enum(q("app", "state")));
    assert_eq!(
        state.default,
        Some(DefaultValue::Literal(Literal::String("draft".into())))
    );
    let total = t.column("total").expect("total");
    assert!(total.nullable);
    assert_eq!(
        total.data_type,
        DataType::Decimal {
            precision: Some(10),
            scale: Some(2)
        }
    );
    assert_eq!(
        total.default,
        Some(DefaultValue::Literal(Literal::Number("-1.5".into())))
    );
    let created = t.column("created_at").expect("created");
    assert_eq!(
        created.data_type,
        DataType::Timestamp {
            precision: Some(3),
            with_time_zone: true,
            mysql_datetime: false
        }
    );
    assert_eq!(
        created.default,
        Some(DefaultValue::Expression("current_timestamp".into()))
    );
    assert_eq!(t.column("email").expect("e").comment.as_deref(), Some("who"));
    let fk = &t.foreign_keys["invoices_customer_fk"];
    assert_eq!(
        (fk.referenced_table.clone(), fk.on_delete),
        (q("app", "customers"), ReferentialAction::Restrict)
    );
    assert_eq!(t.checks["invoices_total_nonneg"].expression, "total >= 0");
    assert_eq!(t.uniques["invoices_email_key"].columns, ["email"]);
    assert_eq!(
        t.indexes["invoices_customer_idx"].predicate.as_deref(),
        Some("state <> 'paid'")
    );
    let expr = &t.indexes["invoices_expr_idx"];
    assert!(expr.unique && expr.parts[1].descending && expr.method.is_none());
    assert_eq!(
        expr.parts[0].target,
        IndexTarget::Expression("lower(email)".into())
    );
}

#[test]
fn written_document_reads_back_equal_and_is_stable() {
    let s = hcl::parse(PG, "schema.hcl", DOC).expect("reads");
    let text = to_hcl(PG, &s);
    let again = hcl::parse(PG, "out.hcl", &text).expect("reads its own output");
    assert_eq!(again, s, "{text}");
    assert_eq!(to_hcl(PG, &again), text);
}

#[test]
fn sql_and_hcl_agree() {
    let from_sql = sql::parse(
        Dialect::Mysql,
        "a.sql",
        "CREATE TABLE t (id int NOT NULL AUTO_INCREMENT, kind enum('x','y') NOT NULL, PRIMARY KEY (id), KEY k (kind, id(4)));",
    )
    .expect("sql");
    let text = to_hcl(Dialect::Mysql, &from_sql);
    assert!(text.contains("prefix = 4"), "{text}");
    assert_eq!(
        hcl::parse(Dialect::Mysql, "a.hcl", &text).expect("hcl"),
        from_sql,
        "{text}"
    );
}

#[test]
fn mysql_character_sets_and_collations_agree_between_sql_and_hcl() {
    let from_sql = sql::parse(
        Dialect::Mysql,
        "a.sql",
        "CREATE TABLE t (a varchar(10) CHARACTER SET latin1 COLLATE latin1_bin, b text COLLATE utf8mb4_bin, \
         c varchar(5) COLLATE utf8mb4_general_ci) ENGINE=InnoDB DEFAULT CHARSET=utf8 COLLATE=utf8mb4_general_ci;",
    )
    .expect("sql");
    let t = &from_sql.tables[&ptah_schema::QualifiedName::new("", "t")];
    assert_eq!(t.charset.as_deref(), Some("utf8mb3"), "the utf8 alias is utf8mb3");
    assert_eq!(t.collation.as_deref(), Some("utf8mb4_general_ci"));
    assert_eq!(
        (t.columns[0].charset.as_deref(), t.columns[0].collation.as_deref()),
        (Some("latin1"), Some("latin1_bin"))
    );
    assert_eq!(t.columns[1].collation.as_deref(), Some("utf8mb4_bin"));
    assert_eq!(
        t.columns[2].collation, None,
        "the table's collation is no collation of its own"
    );
    let text = to_hcl(Dialect::Mysql, &from_sql);
    assert!(
        text.contains("collate = \"latin1_bin\"") && text.contains("charset = \"utf8mb3\""),
        "{text}"
    );
    assert_eq!(
        hcl::parse(Dialect::Mysql, "a.hcl", &text).expect("hcl"),
        from_sql,
        "{text}"
    );
    let pg = hcl::parse(
        PG,
        "p.hcl",
        "table \"t\" {\n  schema = schema.public\n  collate = \"C\"\n}\n",
    );
    assert!(matches!(pg, Err(ReadError::Unsupported { .. })), "{pg:?}");
}

fn err(doc: &str) -> ReadError {
    hcl::parse(PG, "s.hcl", doc).expect_err("must be refused")
}

fn at(e: &ReadError) -> (usize, usize) {
    let l = e.location().expect("located");
    assert_eq!(l.file, "s.hcl");
    (l.line, l.column)
}

#[test]
fn refusals_carry_line_and_column() {
    let e = err("schema \"a\" {}\nrule \"s\" {}\n");
    assert!(matches!(e, ReadError::Unsupported { .. }), "{e}");
    assert_eq!(at(&e), (2, 1));

    let e = err("table \"t\" {\n  column \"a\" {\n    type = int\n    collate = \"C\"\n  }\n}\n");
    assert!(matches!(e, ReadError::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("collate"), "{e}");
    assert_eq!(at(&e), (4, 5));

    let e = err("table \"t\" {\n  column \"a\" { type = int }\n  trigger \"x\" {}\n}\n");
    assert_eq!(at(&e), (3, 3));

    let e = err(
        "table \"t\" {\n  column \"a\" { type = int }\n}\ntable \"t\" {\n  column \"a\" { type = int }\n}\n",
    );
    assert!(matches!(e, ReadError::Duplicate { .. }), "{e}");
    assert_eq!(at(&e), (4, 1));

    let e = err(
        "table \"t\" {\n  column \"a\" { type = int }\n  index \"i\" {\n    columns = [column.b]\n  }\n}\n",
    );
    assert!(matches!(e, ReadError::BadReference { .. }), "{e}");
    assert_eq!(at(&e), (4, 16));

    let e = err("table \"t\" {\n  schema = schema.nope\n  column \"a\" { type = int }\n}\n");
    assert!(matches!(e, ReadError::BadReference { .. }), "{e}");
    assert_eq!(at(&e), (2, 12));

    let e = err(
        "table \"t\" {\n  column \"a\" { type = int }\n  foreign_key \"f\" {\n    columns = [column.a]\n    ref_columns = [table.u.column.id]\n  }\n}\n",
    );
    assert!(matches!(e, ReadError::BadReference { .. }), "{e}");
    assert_eq!(at(&e), (5, 20));

    let e = err("x = 1\n");
    assert!(matches!(e, ReadError::Unsupported { .. }), "{e}");

    let e = err("table \"t\" {\n  column \"a\" {\n");
    assert!(matches!(e, ReadError::Syntax { .. }), "{e}");
}

mod props {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use ptah_schema::read::{hcl, sql};
    use ptah_schema::write::hcl::to_hcl;
    use ptah_schema::{
        CheckConstraint, Column, DataType, DefaultValue, Dialect, EnumType, ForeignKey, Index, IndexPart,
        IndexTarget, Literal, PrimaryKey, QualifiedName, ReferenceRows, ReferentialAction, Schema, Table,
        UniqueConstraint,
    };

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![4 => "[a-z][a-z0-9_]{0,8}", 1 => "[A-Za-z ][A-Za-z0-9 \"$%{}]{0,6}"]
    }

    fn text() -> impl Strategy<Value = String> {
        "[ -~\n\t]{0,12}"
    }

    fn data_type(enums: Vec<QualifiedName>) -> impl Strategy<Value = DataType> {
        let mut choices: Vec<BoxedStrategy<DataType>> = vec![
            Just(DataType::Boolean).boxed(),
            prop_oneof![Just(16u8), Just(32), Just(64)]
                .prop_map(|bits| DataType::Integer {
                    bits,
                    unsigned: false,
                })
                .boxed(),
            (1u32..40, 0u32..10)
                .prop_map(|(p, s)| DataType::Decimal {
                    precision: Some(p),
                    scale: Some(s),
                })
                .boxed(),
            (1u32..500).prop_map(|n| DataType::Varchar(Some(n))).boxed(),
            Just(DataType::Text).boxed(),
            (proptest::option::of(0u32..7), any::<bool>())
                .prop_map(|(precision, with_time_zone)| DataType::Timestamp {
                    precision,
                    with_time_zone,
                    mysql_datetime: false,
                })
                .boxed(),
            Just(DataType::Jsonb).boxed(),
            Just(DataType::Array(Box::new(DataType::Uuid))).boxed(),
        ];
        if !enums.is_empty() {
            choices.push(proptest::sample::select(enums).prop_map(DataType::Enum).boxed());
        }
        proptest::strategy::Union::new(choices)
    }

    fn literal() -> impl Strategy<Value = Literal> {
        prop_oneof![
            Just(Literal::Null),
            any::<bool>().prop_map(Literal::Bool),
            (-1000i64..1000, 0u32..100).prop_map(|(i, f)| Literal::Number(
                ptah_schema::normalize::canonical_number(&format!("{i}.{f}"))
            )),
            text().prop_map(Literal::String),
        ]
    }

    fn table(schema: String, enums: Vec<QualifiedName>) -> impl Strategy<Value = Table> {
        (
            name(),
            proptest::collection::btree_map(
                name(),
                (
                    data_type(enums),
                    any::<bool>(),
                    // `DEFAULT NULL` reads as no default, its canonical form.
                    proptest::option::of(literal().prop_filter("no NULL default", |l| *l != Literal::Null)),
                    proptest::option::of(text()),
                ),
                1..5,
            ),
            proptest::option::of(text()),
            any::<bool>(),
            proptest::collection::vec(literal(), 0..3),
        )
            .prop_map(move |(tname, cols, comment, with_extras, row_values)| {
                let mut t = Table::new(QualifiedName::new(schema.clone(), tname.clone()));
                t.comment = comment;
                for (cname, (data_type, nullable, default, comment)) in cols {
                    // Readers spell a numeric column's quoted default as a number (the catalog
                    // can only report it that way); generate the canonical model only.
                    let numeric = matches!(
                        data_type,
                        DataType::Integer { .. }
                            | DataType::Decimal { .. }
                            | DataType::Float32
                            | DataType::Float64
                    );
                    let default = default.filter(|d| !(numeric && matches!(d, Literal::String(_))));
                    t.columns.push(Column {
                        name: cname,
                        data_type,
                        nullable,
                        default: default.map(DefaultValue::Literal),
                        identity: None,
                        identity_options: None,
                        auto_increment: false,
                        comment,
                        charset: None,
                        collation: None,
                        generated: None,
                    });
                }
                let first = t.columns[0].name.clone();
                if with_extras {
                    t.primary_key = Some(PrimaryKey {
                        name: format!("{tname}_pk"),
                        columns: vec![first.clone()],
                    });
                    t.uniques.insert(
                        "u1".into(),
                        UniqueConstraint {
                            name: "u1".into(),
                            columns: vec![first.clone()],
                        },
                    );
                    t.checks.insert(
                        "c1".into(),
                        CheckConstraint {
                            name: "c1".into(),
                            expression: "length(x) > 0 or y is null".into(),
                        },
                    );
                    t.indexes.insert(
                        "i1".into(),
                        Index {
                            name: "i1".into(),
                            unique: true,
                            parts: vec![
                                IndexPart {
                                    target: IndexTarget::Column(first.clone()),
                                    descending: true,
                                    prefix_length: None,
                                    opclass: None,
                                    nulls_first: None,
                                },
                                IndexPart {
                                    target: IndexTarget::Expression("lower(x)".into()),
                                    descending: false,
                                    prefix_length: None,
                                    opclass: None,
                                    nulls_first: None,
                                },
                            ],
                            predicate: Some("x <> 'a'".into()),
                            method: Some("gin".into()),
                            include: Vec::new(),
                            nulls_not_distinct: false,
                            storage: Vec::new(),
                        },
                    );
                    t.foreign_keys.insert(
                        "f1".into(),
                        ForeignKey {
                            name: "f1".into(),
                            columns: vec![first.clone()],
                            referenced_table: t.name.clone(),
                            referenced_columns: vec![first.clone()],
                            on_delete: ReferentialAction::Cascade,
                            on_update: ReferentialAction::SetNull,
                            options: ptah_schema::ForeignKeyOptions::default(),
                        },
                    );
                    let mut rows: Vec<BTreeMap<String, Literal>> = Vec::new();
                    for v in row_values {
                        if rows.iter().all(|r| r[&first] != v) {
                            rows.push(BTreeMap::from([(first.clone(), v)]));
                        }
                    }
                    rows.sort_by_key(|r| r[&first].clone());
                    t.rows = Some(ReferenceRows {
                        key: vec![first.clone()],
                        rows,
                    });
                }
                t
            })
    }

    fn schema() -> impl Strategy<Value = Schema> {
        (
            proptest::collection::btree_set(name(), 0..3),
            proptest::collection::vec(text(), 1..4),
        )
            .prop_flat_map(|(namespaces, labels)| {
                let mut all: Vec<String> = namespaces.iter().cloned().collect();
                all.push("public".into());
                let enum_name = QualifiedName::new(all[0].clone(), "mood");
                let enums = vec![enum_name.clone()];
                let tables = proptest::collection::vec(
                    proptest::sample::select(all).prop_flat_map(move |s| table(s, enums.clone())),
                    0..4,
                );
                (
                    Just(namespaces),
                    Just(EnumType {
                        name: enum_name,
                        values: labels,
                    }),
                    tables,
                )
            })
            .prop_map(|(namespaces, e, tables)| {
                let mut s = Schema {
                    namespaces,
                    ..Schema::default()
                };
                s.enums.insert(e.name.clone(), e);
                for t in tables {
                    // Table names must be unique across schemas for `table.<name>` references.
                    if s.tables.keys().all(|k| k.name != t.name.name) {
                        s.tables.insert(t.name.clone(), t);
                    }
                }
                s
            })
    }

    proptest! {
        #[test]
        fn written_models_read_back_equal(s in schema()) {
            let text = to_hcl(Dialect::Postgres, &s);
            let back = hcl::parse(Dialect::Postgres, "p.hcl", &text);
            prop_assert!(back.is_ok(), "{:?}\n{}", back.err(), text);
            prop_assert_eq!(back.ok(), Some(s), "{}", text);
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let text = String::from_utf8_lossy(&bytes);
            for d in [Dialect::Postgres, Dialect::Mysql] {
                let _ = hcl::parse(d, "r.hcl", &text);
                let _ = sql::parse(d, "r.sql", &text);
                let _ = ptah_schema::types::parse_type(d, &text);
                let _ = ptah_schema::normalize::expression(d, &text);
            }
        }

        #[test]
        fn sql_shaped_noise_never_panics(words in proptest::collection::vec(prop_oneof![
            Just("CREATE"), Just("TABLE"), Just("t"), Just("("), Just(")"), Just(","), Just("int"),
            Just("PRIMARY KEY"), Just("REFERENCES"), Just("INDEX"), Just("ON"), Just(";"), Just("CHECK"),
            Just("UNIQUE"), Just("DEFAULT"), Just("'x'"), Just("a"), Just("serial"), Just("ALTER"),
        ], 0..30)) {
            let text = words.join(" ");
            for d in [Dialect::Postgres, Dialect::Mysql] {
                let _ = sql::parse(d, "n.sql", &text);
            }
        }
    }
}
