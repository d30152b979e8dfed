//! Generated columns in the readers, the HCL writer and the planner: dump spellings read as
//! generated columns (never as plain ones or defaults), `schema.hcl` round-trips them, and a change
//! the server cannot make in place is refused by name.

use ptah_schema::read::{hcl, sql};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, Generated, PlanError, PlanOptions, QualifiedName, Schema, Severity, plan};

const PG: Dialect = Dialect::Postgres;
const MY: Dialect = Dialect::Mysql;

fn read(dialect: Dialect, text: &str) -> Schema {
    sql::parse(dialect, "generated.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

fn generated(schema: &Schema, table: &QualifiedName, column: &str) -> Option<Generated> {
    schema.tables[table].column(column)?.generated.clone()
}

#[test]
fn pg_dump_generated_columns_read_as_generated_with_canonical_expressions() {
    let schema = read(
        PG,
        "CREATE TABLE public.t (\n    id integer NOT NULL,\n    qty integer,\n    price numeric(10,2),\n    \
         total numeric GENERATED ALWAYS AS (((qty)::numeric * price)) STORED,\n    \
         up text GENERATED ALWAYS AS (upper(('x'::text || (id)::text))) STORED NOT NULL\n);\n",
    );
    let t = QualifiedName::new("public", "t");
    let total = generated(&schema, &t, "total").expect("total is generated");
    assert!(total.stored);
    assert_eq!(total.expression, "qty::numeric * price");
    let up = schema.tables[&t].column("up").expect("up");
    assert_eq!(
        up.generated.as_ref().map(|g| g.expression.as_str()),
        Some("upper('x' || id::text)")
    );
    assert!(!up.nullable);
    assert_eq!(up.default, None);
}

#[test]
fn mysqldump_generated_columns_keep_stored_and_virtual_apart() {
    let schema = read(
        MY,
        "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `qty` int(11) DEFAULT NULL,\n  \
         `total` decimal(12,2) GENERATED ALWAYS AS (`qty` * 2) STORED,\n  \
         `v` varchar(20) GENERATED ALWAYS AS (concat('x',`id`)) VIRTUAL COMMENT 'vv',\n  \
         `w` int AS (`id` + 1),\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB;\n",
    );
    let t = QualifiedName::new("", "t");
    assert_eq!(
        generated(&schema, &t, "total"),
        Some(Generated {
            expression: "qty * 2".into(),
            stored: true
        })
    );
    assert_eq!(
        generated(&schema, &t, "v"),
        Some(Generated {
            expression: "concat('x', `id`)".into(),
            stored: false
        })
    );
    assert!(
        generated(&schema, &t, "w").is_some_and(|g| !g.stored),
        "MySQL's default is VIRTUAL"
    );
}

#[test]
fn schema_hcl_round_trips_generated_columns_on_both_engines() {
    for (dialect, text) in [
        (
            PG,
            "CREATE TABLE t (id int PRIMARY KEY, twice int GENERATED ALWAYS AS (id * 2) STORED);",
        ),
        (
            MY,
            "CREATE TABLE t (id int NOT NULL PRIMARY KEY, s int AS (id * 2) STORED, v int AS (id * 3) VIRTUAL);",
        ),
    ] {
        let schema = read(dialect, text);
        let written = to_hcl(dialect, &schema);
        assert!(written.contains("as {"), "{written}");
        let back = hcl::parse(dialect, "generated.hcl", &written).expect("the written HCL reads");
        assert_eq!(back, schema, "{written}");
        assert_eq!(back.fingerprint(), schema.fingerprint());
    }
}

#[test]
fn schema_hcl_refuses_virtual_on_postgres_and_an_unknown_kind() {
    let text = "table \"t\" {\n  schema = schema.public\n  column \"id\" {\n    type = integer\n  }\n  \
                column \"v\" {\n    type = integer\n    as {\n      expr = \"id * 2\"\n      type = VIRTUAL\n    }\n  }\n}\n\
                schema \"public\" {}\n";
    let err = hcl::parse(PG, "t.hcl", text).expect_err("VIRTUAL is MySQL only");
    assert!(err.to_string().contains("VIRTUAL"), "{err}");
    let err = hcl::parse(
        MY,
        "t.hcl",
        &text
            .replace("schema = schema.public\n", "")
            .replace("schema \"public\" {}\n", "")
            .replace("VIRTUAL", "LATER"),
    )
    .expect_err("unknown kind");
    assert!(err.to_string().contains("LATER"), "{err}");
}

#[test]
fn a_schema_without_generated_columns_keeps_its_fingerprint_shape() {
    let schema = read(PG, "CREATE TABLE t (id int PRIMARY KEY);");
    let json = serde_json::to_string(&schema).expect("json");
    assert!(!json.contains("generated"), "{json}");
}

#[test]
fn the_planner_refuses_what_the_server_cannot_change_in_place() {
    let base = "CREATE TABLE t (id int PRIMARY KEY, a int, g int GENERATED ALWAYS AS (id * 2) STORED);";
    let live = read(PG, base);
    let refused = |want: &str, dialect: Dialect, live: &Schema| match plan(
        &read(dialect, want),
        live,
        dialect,
        &PlanOptions::default(),
    ) {
        Err(PlanError::GeneratedColumn { column, reason, .. }) => (column, reason),
        other => panic!("{want}: expected a refusal, got {other:?}"),
    };
    let (column, reason) = refused(&base.replace("id * 2", "id * 3"), PG, &live);
    assert_eq!(column, "g");
    assert!(reason.contains("expression"), "{reason}");
    let (column, _) = refused(
        &base.replace("a int,", "a int GENERATED ALWAYS AS (id) STORED,"),
        PG,
        &live,
    );
    assert_eq!(column, "a");

    // Generated → plain is in place, and keeps the values.
    let plain = plan(
        &read(PG, &base.replace(" GENERATED ALWAYS AS (id * 2) STORED", "")),
        &live,
        PG,
        &PlanOptions::default(),
    )
    .expect("plan");
    assert_eq!(plain.statements.len(), 1);
    assert!(
        plain.statements[0]
            .sql
            .ends_with("ALTER COLUMN \"g\" DROP EXPRESSION")
    );
    assert_eq!(plain.statements[0].severity, Severity::Warning);

    let my_base = "CREATE TABLE t (id int NOT NULL PRIMARY KEY, g int AS (id * 2) STORED);";
    let my_live = read(MY, my_base);
    let (column, reason) = refused(&my_base.replace("STORED", "VIRTUAL"), MY, &my_live);
    assert_eq!(column, "g");
    assert!(reason.contains("STORED and VIRTUAL"), "{reason}");
    let changed = plan(
        &read(MY, &my_base.replace("id * 2", "id * 4")),
        &my_live,
        MY,
        &PlanOptions::default(),
    )
    .expect("MySQL changes an expression in place");
    assert_eq!(changed.statements.len(), 1);
    assert!(
        changed.statements[0]
            .sql
            .contains("MODIFY COLUMN `g` int GENERATED ALWAYS AS (`id` * 4) STORED"),
        "{}",
        changed.statements[0].sql
    );
}
