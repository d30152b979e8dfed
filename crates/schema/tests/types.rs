//! Type spellings per dialect → canonical `DataType`, and rendering back.

use ptah_schema::types::{TypeError, parse_type, parse_type_with, render_type};
use ptah_schema::{DataType, Dialect, QualifiedName};

fn int(bits: u8, unsigned: bool) -> DataType {
    DataType::Integer { bits, unsigned }
}

fn ts(precision: Option<u32>, tz: bool, datetime: bool) -> DataType {
    DataType::Timestamp {
        precision,
        with_time_zone: tz,
        mysql_datetime: datetime,
    }
}

fn other(name: &str, params: &[&str]) -> DataType {
    DataType::Other {
        name: name.to_owned(),
        params: params.iter().map(|p| (*p).to_owned()).collect(),
    }
}

#[test]
fn postgres_spellings() {
    let cases: Vec<(&str, DataType)> = vec![
        ("integer", int(32, false)),
        ("int", int(32, false)),
        ("INT4", int(32, false)),
        ("serial", int(32, false)),
        ("smallint", int(16, false)),
        ("int2", int(16, false)),
        ("bigserial", int(64, false)),
        ("int8", int(64, false)),
        ("bool", DataType::Boolean),
        ("boolean", DataType::Boolean),
        ("float8", DataType::Float64),
        ("double precision", DataType::Float64),
        ("real", DataType::Float32),
        ("float(24)", DataType::Float32),
        ("float(25)", DataType::Float64),
        (
            "numeric(10,2)",
            DataType::Decimal {
                precision: Some(10),
                scale: Some(2),
            },
        ),
        (
            "numeric(10, 2)",
            DataType::Decimal {
                precision: Some(10),
                scale: Some(2),
            },
        ),
        (
            "decimal(10)",
            DataType::Decimal {
                precision: Some(10),
                scale: Some(0),
            },
        ),
        (
            "numeric",
            DataType::Decimal {
                precision: None,
                scale: None,
            },
        ),
        ("character varying(255)", DataType::Varchar(Some(255))),
        ("varchar(255)", DataType::Varchar(Some(255))),
        ("character varying", DataType::Varchar(None)),
        ("character(3)", DataType::Char(Some(3))),
        ("char", DataType::Char(Some(1))),
        ("\"char\"", other("\"char\"", &[])),
        ("text", DataType::Text),
        ("bytea", DataType::Binary),
        ("date", DataType::Date),
        ("timestamp(3) with time zone", ts(Some(3), true, false)),
        ("timestamptz(3)", ts(Some(3), true, false)),
        ("timestamptz", ts(None, true, false)),
        ("timestamp without time zone", ts(None, false, false)),
        ("timestamp", ts(None, false, false)),
        (
            "time with time zone",
            DataType::Time {
                precision: None,
                with_time_zone: true,
            },
        ),
        (
            "time(6) without time zone",
            DataType::Time {
                precision: Some(6),
                with_time_zone: false,
            },
        ),
        ("uuid", DataType::Uuid),
        ("json", DataType::Json),
        ("jsonb", DataType::Jsonb),
        ("integer[]", DataType::Array(Box::new(int(32, false)))),
        ("_int4", DataType::Array(Box::new(int(32, false)))),
        // PostgreSQL keeps no dimensions: `format_type` prints `text[]`.
        ("text[][]", DataType::Array(Box::new(DataType::Text))),
        (
            "character varying(20)[]",
            DataType::Array(Box::new(DataType::Varchar(Some(20)))),
        ),
        ("interval", other("interval", &[])),
        ("bit varying(5)", other("bit varying", &["5"])),
        ("billing.invoice_state", other("billing.invoice_state", &[])),
        ("\"Mood\"", other("\"Mood\"", &[])),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_type(Dialect::Postgres, text), Ok(expected), "{text}");
    }
}

#[test]
fn mysql_spellings() {
    let cases: Vec<(&str, DataType)> = vec![
        ("int(11)", int(32, false)),
        ("int(11) unsigned", int(32, true)),
        ("INT UNSIGNED", int(32, true)),
        ("tinyint(1)", DataType::Boolean),
        ("bool", DataType::Boolean),
        ("boolean", DataType::Boolean),
        ("tinyint(4)", int(8, false)),
        ("tinyint", int(8, false)),
        ("tinyint(1) unsigned", int(8, true)),
        ("smallint(6)", int(16, false)),
        ("mediumint(9)", int(24, false)),
        ("bigint(20) unsigned", int(64, true)),
        ("serial", int(64, true)),
        ("varchar(191)", DataType::Varchar(Some(191))),
        ("char(2)", DataType::Char(Some(2))),
        ("char", DataType::Char(Some(1))),
        (
            "decimal(10,2)",
            DataType::Decimal {
                precision: Some(10),
                scale: Some(2),
            },
        ),
        (
            "decimal",
            DataType::Decimal {
                precision: Some(10),
                scale: Some(0),
            },
        ),
        (
            "numeric(5)",
            DataType::Decimal {
                precision: Some(5),
                scale: Some(0),
            },
        ),
        ("float", DataType::Float32),
        ("double", DataType::Float64),
        ("real", DataType::Float64),
        ("datetime(6)", ts(Some(6), false, true)),
        ("datetime", ts(None, false, true)),
        ("datetime(0)", ts(None, false, true)),
        ("timestamp(3)", ts(Some(3), false, false)),
        (
            "time",
            DataType::Time {
                precision: None,
                with_time_zone: false,
            },
        ),
        ("text", DataType::Text),
        ("mediumtext", other("mediumtext", &[])),
        ("longblob", other("longblob", &[])),
        ("blob", DataType::Binary),
        ("json", DataType::Json),
        ("uuid", DataType::Uuid),
        (
            "enum('a','b')",
            DataType::InlineEnum(vec!["a".to_owned(), "b".to_owned()]),
        ),
        (
            "enum('it''s','x,y', 'back\\\\slash')",
            DataType::InlineEnum(vec![
                "it's".to_owned(),
                "x,y".to_owned(),
                "back\\slash".to_owned(),
            ]),
        ),
        ("varbinary(16)", other("varbinary", &["16"])),
        (
            "set('a','it''s')",
            DataType::InlineSet(vec!["a".to_owned(), "it's".to_owned()]),
        ),
        (
            "int(10) unsigned zerofill",
            other("int unsigned zerofill", &["10"]),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_type(Dialect::Mysql, text), Ok(expected), "{text}");
    }
}

#[test]
fn user_types_resolve_to_enums_only_through_the_resolver() {
    let resolver = |schema: Option<&str>, name: &str| {
        (name == "invoice_state").then(|| QualifiedName::new(schema.unwrap_or("public"), name))
    };
    assert_eq!(
        parse_type_with(Dialect::Postgres, "billing.invoice_state", &resolver),
        Ok(DataType::Enum(QualifiedName::new("billing", "invoice_state")))
    );
    assert_eq!(
        parse_type_with(Dialect::Postgres, "invoice_state[]", &resolver),
        Ok(DataType::Array(Box::new(DataType::Enum(QualifiedName::new(
            "public",
            "invoice_state"
        )))))
    );
    assert_eq!(
        parse_type_with(Dialect::Postgres, "other_type", &resolver),
        Ok(other("other_type", &[]))
    );
    // Built-in names never reach the resolver.
    assert_eq!(
        parse_type_with(Dialect::Postgres, "text", &|_, _| Some(QualifiedName::new(
            "x", "y"
        ))),
        Ok(DataType::Text)
    );
}

#[test]
fn bad_types_are_errors() {
    assert_eq!(parse_type(Dialect::Postgres, "  "), Err(TypeError::Empty));
    for bad in [
        "varchar(",
        "int)",
        "varchar(1)(2)",
        "a..b",
        "text[",
        "x.",
        "enum('a",
    ] {
        for dialect in [Dialect::Postgres, Dialect::Mysql] {
            let r = parse_type(dialect, bad);
            assert!(
                matches!(&r, Err(TypeError::Syntax { text, .. }) if text == bad),
                "{dialect:?} {bad}: {r:?}"
            );
        }
    }
    for dialect in [Dialect::Postgres, Dialect::Mysql] {
        assert_eq!(
            parse_type(dialect, "numeric(a,b)"),
            Err(TypeError::BadParameter {
                text: "numeric(a,b)".to_owned(),
                param: "a".to_owned(),
            }),
            "{dialect:?}"
        );
    }
}

#[test]
fn rendered_types_read_back_equal() {
    let types = vec![
        DataType::Boolean,
        int(16, false),
        int(32, false),
        int(64, false),
        DataType::Decimal {
            precision: Some(12),
            scale: Some(3),
        },
        DataType::Float32,
        DataType::Float64,
        DataType::Char(Some(4)),
        DataType::Varchar(Some(255)),
        DataType::Text,
        DataType::Binary,
        DataType::Date,
        DataType::Time {
            precision: Some(3),
            with_time_zone: true,
        },
        ts(Some(3), true, false),
        ts(None, false, false),
        DataType::Uuid,
        DataType::Jsonb,
        DataType::Array(Box::new(DataType::Varchar(Some(20)))),
        other("interval", &[]),
    ];
    for t in types {
        let text = render_type(Dialect::Postgres, &t);
        assert_eq!(parse_type(Dialect::Postgres, &text), Ok(t), "{text}");
    }
    let mysql = vec![
        DataType::Boolean,
        int(8, true),
        int(24, false),
        int(64, true),
        DataType::Decimal {
            precision: Some(10),
            scale: Some(2),
        },
        DataType::Float32,
        DataType::Float64,
        DataType::Varchar(Some(191)),
        ts(Some(6), false, true),
        ts(None, false, false),
        DataType::InlineEnum(vec!["it's".to_owned(), "b".to_owned()]),
        DataType::InlineSet(vec!["Director's Cut".to_owned(), "Trailers".to_owned()]),
        other("mediumtext", &[]),
    ];
    for t in mysql {
        let text = render_type(Dialect::Mysql, &t);
        assert_eq!(parse_type(Dialect::Mysql, &text), Ok(t), "{text}");
    }
    assert_eq!(
        render_type(Dialect::Postgres, &ts(Some(3), true, false)),
        "timestamp(3) with time zone"
    );
    assert_eq!(render_type(Dialect::Mysql, &int(32, true)), "int unsigned");
    assert_eq!(
        render_type(
            Dialect::Postgres,
            &DataType::Enum(QualifiedName::new("billing", "Mood"))
        ),
        "billing.\"Mood\""
    );
}

/// Found by the `schema_hcl` fuzz campaign: `blob()` read as an unknown type `blob` that rendered
/// as `blob` and read back as binary. An empty parameter list is no list, in both dialects.
#[test]
fn an_empty_parameter_list_is_the_bare_type() {
    for (dialect, bare) in [
        (Dialect::Mysql, "blob"),
        (Dialect::Mysql, "text"),
        (Dialect::Mysql, "varchar"),
        (Dialect::Postgres, "bytea"),
        (Dialect::Postgres, "integer"),
        (Dialect::Postgres, "my_type"),
    ] {
        let with_list = parse_type(dialect, &format!("{bare}()"));
        assert_eq!(with_list, parse_type(dialect, bare), "{bare}()");
        let t = with_list.expect(bare);
        assert_eq!(parse_type(dialect, &render_type(dialect, &t)), Ok(t), "{bare}");
    }
    assert!(matches!(
        parse_type(Dialect::Mysql, "blob()()"),
        Err(TypeError::Syntax { .. })
    ));
}

#[test]
fn postgres_array_spellings_are_the_one_array_format_type_prints() {
    let one = DataType::Array(Box::new(int(32, false)));
    for text in [
        "integer[]",
        "integer[][]",
        "int[3]",
        "int4[2][3]",
        "int ARRAY",
        "integer ARRAY[4]",
        "_int4",
    ] {
        assert_eq!(parse_type(Dialect::Postgres, text), Ok(one.clone()), "{text}");
    }
    assert_eq!(render_type(Dialect::Postgres, &one), "integer[]");
}
