//! Introspection of a real MariaDB 10.11 database: every model feature the MySQL dialect has, created
//! with plain SQL and read back field by field.

mod inspect_support;

use inspect_support::Fresh;
use ptah_engine::{Dialect, InspectScope, RowSelection, inspect, mysql_flavor};
use ptah_schema::{
    DataType, DefaultValue, ForeignKey, Index, IndexPart, IndexTarget, Literal, MysqlFlavor, PrimaryKey,
    QualifiedName, ReferentialAction, Schema, Table, UniqueConstraint,
};

const FIXTURE: &str = r"
CREATE TABLE account (
    tenant INT NOT NULL,
    code VARCHAR(32) NOT NULL,
    name VARCHAR(255) NOT NULL DEFAULT 'it''s unnamed',
    PRIMARY KEY (tenant, code)
) ENGINE=InnoDB COMMENT='Accounts';
CREATE TABLE invoice (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
    tenant INT NOT NULL,
    account_code VARCHAR(32) NOT NULL,
    status ENUM('draft','sent','paid') NOT NULL DEFAULT 'draft',
    paid TINYINT(1) NOT NULL DEFAULT 0,
    amount DECIMAL(12,2) NOT NULL DEFAULT 0.00,
    ratio DOUBLE,
    small SMALLINT DEFAULT -1,
    body TEXT,
    doc JSON,
    created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    due DATE,
    updated DATETIME(3) NULL,
    ref CHAR(36) COMMENT 'external ref',
    qty INT CHECK (qty > 0),
    PRIMARY KEY (id),
    UNIQUE KEY invoice_ref_key (ref),
    KEY invoice_multi_idx (tenant, created_at DESC),
    KEY invoice_body_prefix (body(20)),
    UNIQUE KEY invoice_code_prefix (account_code(8), tenant),
    CONSTRAINT invoice_account_fk FOREIGN KEY (tenant, account_code)
        REFERENCES account (tenant, code) ON DELETE CASCADE ON UPDATE RESTRICT,
    CONSTRAINT invoice_amount_check CHECK (amount >= 0)
) ENGINE=InnoDB COMMENT='Bills';
";

fn table<'a>(schema: &'a Schema, name: &str) -> &'a Table {
    schema
        .tables
        .get(&QualifiedName::new("", name))
        .unwrap_or_else(|| panic!("{name} missing from {:?}", schema.tables.keys()))
}

fn part(target: &str, descending: bool, prefix_length: Option<u32>) -> IndexPart {
    IndexPart {
        target: IndexTarget::Column(target.to_owned()),
        descending,
        prefix_length,
        opclass: None,
        nulls_first: None,
    }
}

#[tokio::test]
async fn every_model_feature_reads_back_field_by_field() {
    let db = Fresh::new(Dialect::Mysql, "inspect_my").await;
    db.run(FIXTURE).await;
    let mut session = db.session().await;
    assert_eq!(
        mysql_flavor(&mut session).await.expect("flavor"),
        Some(MysqlFlavor::Mariadb)
    );
    let schema = inspect(&mut session, &InspectScope::all())
        .await
        .expect("inspect");
    println!("{}", serde_json::to_string_pretty(&schema).expect("json"));

    assert!(schema.namespaces.is_empty() && schema.extensions.is_empty() && schema.enums.is_empty());
    let names: Vec<&str> = schema.tables.keys().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["account", "invoice"]);
    assert!(schema.tables.keys().all(|n| n.schema.is_empty()));

    let account = table(&schema, "account");
    assert_eq!(account.comment.as_deref(), Some("Accounts"));
    assert_eq!(
        account.primary_key,
        Some(PrimaryKey {
            name: "PRIMARY".into(),
            columns: vec!["tenant".into(), "code".into()]
        })
    );
    let name = account.column("name").expect("name");
    assert_eq!(name.data_type, DataType::Varchar(Some(255)));
    assert_eq!(
        name.default,
        Some(DefaultValue::Literal(Literal::String("it's unnamed".into())))
    );
    assert!(!name.nullable);

    let invoice = table(&schema, "invoice");
    assert_eq!(invoice.comment.as_deref(), Some("Bills"));
    let cols: Vec<&str> = invoice.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        cols,
        [
            "id",
            "tenant",
            "account_code",
            "status",
            "paid",
            "amount",
            "ratio",
            "small",
            "body",
            "doc",
            "created_at",
            "due",
            "updated",
            "ref",
            "qty"
        ]
    );
    let id = invoice.column("id").expect("id");
    assert_eq!(
        id.data_type,
        DataType::Integer {
            bits: 64,
            unsigned: true
        }
    );
    assert!(id.auto_increment && !id.nullable && id.default.is_none() && id.identity.is_none());
    let expected: Vec<(&str, DataType, Option<DefaultValue>)> = vec![
        (
            "tenant",
            DataType::Integer {
                bits: 32,
                unsigned: false,
            },
            None,
        ),
        (
            "status",
            DataType::InlineEnum(vec!["draft".into(), "sent".into(), "paid".into()]),
            Some(DefaultValue::Literal(Literal::String("draft".into()))),
        ),
        (
            "paid",
            DataType::Boolean,
            Some(DefaultValue::Literal(Literal::Number("0".into()))),
        ),
        (
            "amount",
            DataType::Decimal {
                precision: Some(12),
                scale: Some(2),
            },
            Some(DefaultValue::Literal(Literal::Number("0".into()))),
        ),
        ("ratio", DataType::Float64, None),
        (
            "small",
            DataType::Integer {
                bits: 16,
                unsigned: false,
            },
            Some(DefaultValue::Literal(Literal::Number("-1".into()))),
        ),
        ("body", DataType::Text, None),
        ("doc", DataType::Json, None),
        (
            "created_at",
            DataType::Timestamp {
                precision: Some(6),
                with_time_zone: false,
                mysql_datetime: false,
            },
            Some(DefaultValue::Expression("current_timestamp(6)".into())),
        ),
        ("due", DataType::Date, None),
        (
            "updated",
            DataType::Timestamp {
                precision: Some(3),
                with_time_zone: false,
                mysql_datetime: true,
            },
            None,
        ),
        ("ref", DataType::Char(Some(36)), None),
    ];
    for (name, data_type, default) in expected {
        let column = invoice.column(name).expect(name);
        assert_eq!(column.data_type, data_type, "{name}");
        assert_eq!(column.default, default, "{name}");
    }
    assert!(invoice.column("ratio").expect("ratio").nullable);
    assert!(!invoice.column("paid").expect("paid").nullable);
    assert_eq!(
        invoice.column("ref").expect("ref").comment.as_deref(),
        Some("external ref")
    );

    assert_eq!(
        invoice.primary_key,
        Some(PrimaryKey {
            name: "PRIMARY".into(),
            columns: vec!["id".into()]
        })
    );
    assert_eq!(
        invoice.uniques.values().collect::<Vec<_>>(),
        [&UniqueConstraint {
            name: "invoice_ref_key".into(),
            columns: vec!["ref".into()]
        }]
    );
    let checks: Vec<(&str, &str)> = invoice
        .checks
        .values()
        .map(|c| (c.name.as_str(), c.expression.as_str()))
        .collect();
    assert_eq!(
        checks,
        [("invoice_amount_check", "amount >= 0"), ("qty", "qty > 0")],
        "the implicit json_valid check is hidden"
    );
    assert_eq!(
        invoice.foreign_keys.values().collect::<Vec<_>>(),
        [&ForeignKey {
            name: "invoice_account_fk".into(),
            columns: vec!["tenant".into(), "account_code".into()],
            referenced_table: QualifiedName::new("", "account"),
            referenced_columns: vec!["tenant".into(), "code".into()],
            on_delete: ReferentialAction::Cascade,
            on_update: ReferentialAction::Restrict,
            options: ptah_schema::ForeignKeyOptions::default(),
        }]
    );
    let index_names: Vec<&str> = invoice.indexes.keys().map(String::as_str).collect();
    assert_eq!(
        index_names,
        ["invoice_body_prefix", "invoice_code_prefix", "invoice_multi_idx"],
        "the foreign key's implicit index is hidden"
    );
    assert_eq!(
        invoice.indexes["invoice_multi_idx"],
        Index {
            name: "invoice_multi_idx".into(),
            unique: false,
            parts: vec![part("tenant", false, None), part("created_at", true, None)],
            predicate: None,
            method: None,
            include: Vec::new(),
            nulls_not_distinct: false,
            storage: Vec::new(),
        }
    );
    assert_eq!(
        invoice.indexes["invoice_body_prefix"].parts,
        [part("body", false, Some(20))]
    );
    let code = &invoice.indexes["invoice_code_prefix"];
    assert!(code.unique, "a unique key with a prefix part stays an index");
    assert_eq!(
        code.parts,
        [part("account_code", false, Some(8)), part("tenant", false, None)]
    );

    session.close().await.expect("close");
    db.drop().await;
}

#[tokio::test]
async fn reference_rows_are_read_by_key_and_typed_by_column() {
    let db = Fresh::new(Dialect::Mysql, "inspect_my_rows").await;
    db.run(
        r"
CREATE TABLE currency (code CHAR(3) PRIMARY KEY, name VARCHAR(40), digits INT NOT NULL, rate DECIMAL(8,4), active TINYINT(1));
INSERT INTO currency VALUES ('USD', 'Dollar', 2, 1.0000, 1), ('EUR', 'Euro', 2, 0.9250, 0), ('XXX', NULL, 0, NULL, NULL);
CREATE TABLE untouched (id INT PRIMARY KEY);
",
    )
    .await;
    let mut session = db.session().await;
    let currency = QualifiedName::new("", "currency");
    let scope = InspectScope {
        namespaces: None,
        rows: [(
            currency.clone(),
            RowSelection {
                key: vec!["code".into()],
                columns: vec!["active".into(), "digits".into(), "name".into(), "rate".into()],
            },
        )]
        .into(),
    };
    let schema = inspect(&mut session, &scope).await.expect("inspect");
    assert!(table(&schema, "untouched").rows.is_none());
    let rows = table(&schema, "currency").rows.as_ref().expect("rows");
    let expected: Vec<Vec<(&str, Literal)>> = vec![
        vec![
            ("active", Literal::Bool(false)),
            ("code", Literal::String("EUR".into())),
            ("digits", Literal::Number("2".into())),
            ("name", Literal::String("Euro".into())),
            ("rate", Literal::Number("0.925".into())),
        ],
        vec![
            ("active", Literal::Bool(true)),
            ("code", Literal::String("USD".into())),
            ("digits", Literal::Number("2".into())),
            ("name", Literal::String("Dollar".into())),
            ("rate", Literal::Number("1".into())),
        ],
        vec![
            ("active", Literal::Null),
            ("code", Literal::String("XXX".into())),
            ("digits", Literal::Number("0".into())),
            ("name", Literal::Null),
            ("rate", Literal::Null),
        ],
    ];
    let got: Vec<Vec<(&str, Literal)>> = rows
        .rows
        .iter()
        .map(|r| r.iter().map(|(k, v)| (k.as_str(), v.clone())).collect())
        .collect();
    assert_eq!(got, expected);
    session.close().await.expect("close");
    db.drop().await;
}
