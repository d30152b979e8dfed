//! Column type families per dialect: the spellings people use for one type, defaults as they write
//! them (typed literals, casts, negative numbers, functions), CHECK bodies (`IN` lists, `ANY`,
//! ranges, functions) and index forms (expression, partial, descending, unique, method, prefix).
//! `{c}` stands for the column, `{t}` for the table, `{name}` for the index name.

use ptah_engine::Dialect;

/// One type family.
pub struct Family {
    /// The column name prefix.
    pub tag: &'static str,
    /// Spellings of the one type.
    pub spellings: &'static [&'static str],
    /// Default expressions, as written.
    pub defaults: &'static [&'static str],
    /// CHECK bodies.
    pub checks: &'static [&'static str],
    /// PostgreSQL index statements.
    pub pg_index_forms: &'static [&'static str],
    /// MySQL/MariaDB index statements.
    pub my_index_forms: &'static [&'static str],
}

const PG_PLAIN: &[&str] = &[
    "CREATE INDEX {name} ON {t} ({c})",
    "CREATE INDEX {name} ON {t} ({c} DESC)",
    "CREATE UNIQUE INDEX {name} ON {t} ({c})",
    "CREATE INDEX {name} ON {t} ({c}) WHERE {c} IS NOT NULL",
    "CREATE INDEX {name} ON {t} USING btree ({c} DESC NULLS LAST)",
    "CREATE INDEX {name} ON {t} ({c}, id)",
];

/// The PostgreSQL families.
pub const POSTGRES: &[Family] = &[
    Family {
        tag: "i",
        spellings: &["integer", "int", "int4", "INTEGER"],
        defaults: &["0", "-1", "42", "(-5)"],
        checks: &[
            "{c} > 0",
            "{c} IN (1, 2, 3)",
            "{c} BETWEEN -10 AND 10",
            "{c} <> ALL (ARRAY[7, 8])",
        ],
        pg_index_forms: &[
            "CREATE INDEX {name} ON {t} ({c})",
            "CREATE INDEX {name} ON {t} ({c}) WHERE {c} > 5",
            "CREATE INDEX {name} ON {t} (({c} + 1))",
            "CREATE UNIQUE INDEX {name} ON {t} ({c} DESC)",
            "CREATE INDEX {name} ON {t} ({c}) WHERE {c} IN (1, 2)",
        ],
        my_index_forms: &[],
    },
    Family {
        tag: "b",
        spellings: &["bigint", "int8"],
        defaults: &["0", "-9000000000"],
        checks: &["{c} >= 0"],
        pg_index_forms: PG_PLAIN,
        my_index_forms: &[],
    },
    Family {
        tag: "n",
        spellings: &["numeric(10,2)", "decimal(10,2)", "NUMERIC(10, 2)"],
        defaults: &["0", "1.50", "-0.25", "0.0"],
        checks: &["{c} > 0.5", "{c} IN (1.5, 2.5)"],
        pg_index_forms: PG_PLAIN,
        my_index_forms: &[],
    },
    Family {
        tag: "t",
        spellings: &["text", "TEXT"],
        defaults: &["''", "'draft'", "'a'::text", "'it''s'"],
        checks: &[
            "{c} IN ('a', 'b')",
            "length({c}) < 10",
            "{c} = ANY (ARRAY['x', 'y'])",
            "{c} <> ''",
            "{c} ~ '^[a-z]+$'",
        ],
        pg_index_forms: &[
            "CREATE INDEX {name} ON {t} (lower({c}))",
            "CREATE INDEX {name} ON {t} ({c}) WHERE {c} IN ('a', 'b')",
            "CREATE INDEX {name} ON {t} ({c} text_pattern_ops)",
            "CREATE UNIQUE INDEX {name} ON {t} (lower({c})) WHERE {c} <> ''",
            "CREATE INDEX {name} ON {t} ({c}) INCLUDE (id)",
        ],
        my_index_forms: &[],
    },
    Family {
        tag: "v",
        spellings: &["varchar(40)", "character varying(40)", "VARCHAR(40)"],
        defaults: &["'x'", "'x'::character varying", "''"],
        checks: &["{c} IN ('a', 'b')", "char_length({c}) > 0"],
        pg_index_forms: &[
            "CREATE INDEX {name} ON {t} (upper({c}))",
            "CREATE INDEX {name} ON {t} ({c} varchar_pattern_ops)",
            "CREATE INDEX {name} ON {t} ({c} NULLS FIRST)",
        ],
        my_index_forms: &[],
    },
    Family {
        tag: "f",
        spellings: &["boolean", "bool"],
        defaults: &["true", "false", "FALSE"],
        checks: &[],
        pg_index_forms: &[
            "CREATE INDEX {name} ON {t} (id) WHERE {c}",
            "CREATE INDEX {name} ON {t} (id) WHERE NOT {c}",
        ],
        my_index_forms: &[],
    },
    Family {
        tag: "z",
        spellings: &[
            "timestamptz",
            "timestamp with time zone",
            "timestamp(3) with time zone",
        ],
        defaults: &[
            "now()",
            "CURRENT_TIMESTAMP",
            "(now() AT TIME ZONE 'utc')",
            "'2020-01-01 00:00:00+00'",
        ],
        checks: &["{c} > '2000-01-01'"],
        pg_index_forms: PG_PLAIN,
        my_index_forms: &[],
    },
    Family {
        tag: "d",
        spellings: &["date"],
        defaults: &["CURRENT_DATE", "'2020-01-01'"],
        checks: &["{c} > '2000-01-01'"],
        pg_index_forms: PG_PLAIN,
        my_index_forms: &[],
    },
    Family {
        tag: "u",
        spellings: &["uuid"],
        defaults: &[
            "gen_random_uuid()",
            "'00000000-0000-0000-0000-000000000000'::uuid",
            "'00000000-0000-0000-0000-000000000000'",
        ],
        checks: &[],
        pg_index_forms: &[
            "CREATE UNIQUE INDEX {name} ON {t} ({c})",
            "CREATE INDEX {name} ON {t} USING hash ({c})",
        ],
        my_index_forms: &[],
    },
    Family {
        tag: "j",
        spellings: &["jsonb"],
        defaults: &["'{}'::jsonb", "'{}'", "'[]'::jsonb"],
        checks: &["jsonb_typeof({c}) = 'object'"],
        pg_index_forms: &[
            "CREATE INDEX {name} ON {t} USING gin ({c})",
            "CREATE INDEX {name} ON {t} (({c} ->> 'k'))",
        ],
        my_index_forms: &[],
    },
    Family {
        tag: "a",
        spellings: &["integer[]", "int[]", "int ARRAY", "int4[]", "integer[][]"],
        defaults: &["'{}'", "ARRAY[]::integer[]", "'{1,2}'::int[]"],
        checks: &["cardinality({c}) < 5"],
        pg_index_forms: &["CREATE INDEX {name} ON {t} USING gin ({c})"],
        my_index_forms: &[],
    },
    Family {
        tag: "y",
        spellings: &["bytea"],
        defaults: &["'\\x1f'::bytea", "''::bytea"],
        checks: &["octet_length({c}) < 100"],
        pg_index_forms: &[],
        my_index_forms: &[],
    },
    Family {
        tag: "x",
        spellings: &["bit(8)"],
        defaults: &["B'00011111'", "x'1F'"],
        checks: &[],
        pg_index_forms: &[],
        my_index_forms: &[],
    },
    Family {
        tag: "r",
        spellings: &["double precision", "float8", "real", "float4"],
        defaults: &["0", "-1.5", "1e3"],
        checks: &["{c} >= 0"],
        pg_index_forms: PG_PLAIN,
        my_index_forms: &[],
    },
];

const MY_PLAIN: &[&str] = &[
    "CREATE INDEX {name} ON {t} ({c})",
    "CREATE INDEX {name} ON {t} ({c} DESC)",
    "CREATE INDEX {name} ON {t} ({c}) USING BTREE",
    "CREATE INDEX {name} ON {t} ({c}) COMMENT 'lookups'",
    "CREATE INDEX {name} ON {t} ({c}, id)",
];

/// The MySQL/MariaDB families.
pub const MYSQL: &[Family] = &[
    Family {
        tag: "i",
        spellings: &["int", "INT", "integer", "int(11)"],
        defaults: &["0", "-1", "'7'", "42"],
        checks: &["{c} > 0", "{c} IN (1, 2, 3)", "{c} BETWEEN -10 AND 10"],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "b",
        spellings: &["bigint", "BIGINT(20)", "bigint unsigned"],
        defaults: &["0", "9000000000"],
        checks: &["{c} >= 0"],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "n",
        spellings: &["decimal(10,2)", "DECIMAL(10, 2)", "numeric(10,2)"],
        defaults: &["0", "1.50", "-0.25", "'0.00'"],
        checks: &["{c} > 0.5"],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "v",
        spellings: &["varchar(40)", "VARCHAR(40)"],
        defaults: &["'x'", "''", "'it''s'"],
        checks: &["{c} IN ('a', 'b')", "char_length({c}) > 0"],
        pg_index_forms: &[],
        my_index_forms: &[
            "CREATE INDEX {name} ON {t} ({c})",
            "CREATE INDEX {name} ON {t} ({c}(10))",
            "CREATE UNIQUE INDEX {name} ON {t} ({c})",
            "CREATE INDEX {name} ON {t} ({c}) USING HASH",
        ],
    },
    Family {
        tag: "t",
        spellings: &["text", "mediumtext"],
        defaults: &[],
        checks: &["{c} <> ''"],
        pg_index_forms: &[],
        my_index_forms: &["CREATE INDEX {name} ON {t} ({c}(20))"],
    },
    Family {
        tag: "f",
        spellings: &["tinyint(1)", "boolean", "bool"],
        defaults: &["0", "1", "false", "TRUE"],
        checks: &[],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "w",
        spellings: &["datetime", "DATETIME"],
        defaults: &[
            "CURRENT_TIMESTAMP",
            "current_timestamp()",
            "now()",
            "'2020-01-01 00:00:00'",
        ],
        checks: &[],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "s",
        spellings: &["timestamp(3)"],
        defaults: &[
            "CURRENT_TIMESTAMP(3)",
            "CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3)",
            "'2020-01-01 00:00:00.000'",
        ],
        checks: &[],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "d",
        spellings: &["date"],
        defaults: &["'2020-01-01'"],
        checks: &["{c} > '2000-01-01'"],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "e",
        spellings: &["enum('a','b','c')", "ENUM('a', 'b', 'c')"],
        defaults: &["'a'", "'c'"],
        checks: &[],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
    Family {
        tag: "r",
        spellings: &["double", "float", "DOUBLE"],
        defaults: &["0", "-1.5"],
        checks: &["{c} >= 0"],
        pg_index_forms: &[],
        my_index_forms: MY_PLAIN,
    },
];

/// The families of `dialect`.
pub fn of(dialect: Dialect) -> &'static [Family] {
    match dialect {
        Dialect::Postgres => POSTGRES,
        Dialect::Mysql => MYSQL,
    }
}
