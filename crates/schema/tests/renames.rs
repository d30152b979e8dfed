//! Declared renames (issue 37, item 3): `renamed_from` in HCL and `-- ptah:renamed-from` in SQL
//! are read where they stand, refused when they cannot describe one set of renames, and plan
//! `ALTER … RENAME` instead of a drop and a create — for generated schemas too.

use proptest::prelude::*;
use ptah_schema::diff::{DiffCategory, diff, ignored_renames};
use ptah_schema::read::{ReadError, hcl, sql};
use ptah_schema::{Dialect, PlanOptions, QualifiedName, Schema, Severity, plan};

const PG: Dialect = Dialect::Postgres;
const MY: Dialect = Dialect::Mysql;

fn pg(text: &str) -> Schema {
    sql::parse(PG, "schema.sql", text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn hints(s: &Schema) -> (Vec<String>, Vec<String>) {
    let tables = s
        .renames
        .tables
        .iter()
        .map(|r| format!("{} <- {}", r.table, r.from))
        .collect();
    let columns = s
        .renames
        .columns
        .iter()
        .map(|r| format!("{}.{} <- {}", r.table, r.column, r.from))
        .collect();
    (tables, columns)
}

#[test]
fn hcl_renamed_from_names_the_old_table_and_column() {
    let text = r#"
schema "public" {}
table "accounts" {
  schema       = schema.public
  renamed_from = "users"
  column "id" {
    type = int
  }
  column "email_address" {
    type         = text
    renamed_from = "email"
  }
}
"#;
    let s = hcl::parse(PG, "schema.hcl", text).expect("reads");
    assert_eq!(
        hints(&s),
        (
            vec!["public.accounts <- users".to_owned()],
            vec!["public.accounts.email_address <- email".to_owned()]
        )
    );
    let empty = text.replace(r#"renamed_from = "users""#, r#"renamed_from = "  ""#);
    let err = hcl::parse(PG, "schema.hcl", &empty).expect_err("an empty old name");
    assert!(
        err.to_string().contains("renamed_from must name the old name"),
        "{err}"
    );
}

#[test]
fn sql_annotations_name_the_table_above_and_the_column_of_their_line_or_the_next() {
    let s = pg("-- a comment that is not a hint
-- ptah:renamed-from users
CREATE TABLE accounts (
    id int PRIMARY KEY, -- ptah:renamed-from user_id
    -- ptah:renamed-from email
    email_address text,
    \"Name\" text -- ptah:renamed-from \"FullName\"
);
CREATE TABLE t2 ( -- ptah:renamed-from T1
    a int
);");
    assert_eq!(
        hints(&s),
        (
            vec![
                "public.accounts <- users".to_owned(),
                "public.t2 <- t1".to_owned()
            ],
            vec![
                "public.accounts.id <- user_id".to_owned(),
                "public.accounts.email_address <- email".to_owned(),
                "public.accounts.Name <- FullName".to_owned(),
            ]
        )
    );
    // The hints leave the model itself alone: the same tables as without them.
    let plain = pg(
        "CREATE TABLE accounts (id int PRIMARY KEY, email_address text, \"Name\" text);
CREATE TABLE t2 (a int);",
    );
    assert_eq!(s.tables, plain.tables);
}

#[test]
fn sql_annotations_that_cannot_be_placed_or_read_are_refused() {
    let cases = [
        (
            "CREATE TABLE t (a int);\n-- ptah:renamed-from x\nALTER TABLE t ADD CONSTRAINT c CHECK (a > 0)",
            "outside CREATE TABLE",
        ),
        (
            "CREATE TABLE t (a int);\nCREATE INDEX i ON t (a) -- ptah:renamed-from x\n",
            "outside CREATE TABLE",
        ),
        (
            "CREATE TABLE t ( -- ptah:renamed-from x y\n a int)",
            "takes one name",
        ),
        ("CREATE TABLE t (a int -- ptah:renamed-from\n)", "takes one name"),
        (
            "CREATE TABLE t (a int);\n-- ptah:renamed-from x\n",
            "before no CREATE TABLE names nothing",
        ),
        (
            "CREATE TABLE t (a int);\n  --ptah:renamed-from x\n;\nCREATE TABLE u (b int);",
            "before no CREATE TABLE names nothing",
        ),
        (
            "CREATE TABLE t (a int, b int\n -- ptah:renamed-from x\n)",
            "names no column",
        ),
        (
            "-- ptah:renamed-from t\nCREATE TABLE t (a int)",
            "renamed_from must name its old name",
        ),
        (
            "-- ptah:renamed-from old\nCREATE TABLE a (x int);\n-- ptah:renamed-from old\nCREATE TABLE b (x int)",
            "two tables are renamed from public.old",
        ),
        (
            "CREATE TABLE old (x int);\n-- ptah:renamed-from old\nCREATE TABLE b (x int)",
            "which the document also declares",
        ),
        (
            "CREATE TABLE t (a int, b int -- ptah:renamed-from a\n)",
            "which the table also declares",
        ),
        (
            "CREATE TABLE t (a int CONSTRAINT ptah_nn_a CHECK (a > 0))",
            "the prefix ptah_nn_ is reserved",
        ),
    ];
    for (text, expected) in cases {
        let err: ReadError = sql::parse(PG, "schema.sql", text).expect_err(text);
        assert!(err.to_string().contains(expected), "{text}\n→ {err}");
    }
}

const LIVE: &str = "CREATE TABLE users (id int PRIMARY KEY, email text NOT NULL);
CREATE UNIQUE INDEX users_email_key ON users (email);
CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES users (id));";

const RENAMED: &str = "-- ptah:renamed-from users
CREATE TABLE accounts (id int PRIMARY KEY, email_address text NOT NULL -- ptah:renamed-from email
);
CREATE UNIQUE INDEX accounts_email_address_key ON accounts (email_address);
CREATE TABLE orders (id int PRIMARY KEY, user_id int REFERENCES accounts (id));";

#[test]
fn a_renamed_table_and_column_plan_renames_and_a_stale_hint_is_a_notice() {
    let (live, desired) = (pg(LIVE), pg(RENAMED));
    let p = plan(&desired, &live, PG, &PlanOptions::default()).expect("plan");
    let sql: Vec<&str> = p.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        [
            r#"ALTER TABLE "public"."users" RENAME TO "accounts""#,
            r#"ALTER TABLE "public"."accounts" RENAME COLUMN "email" TO "email_address""#,
            r#"ALTER INDEX "public"."users_email_key" RENAME TO "accounts_email_address_key""#,
            r#"ALTER TABLE "public"."accounts" RENAME CONSTRAINT "users_pkey" TO "accounts_pkey""#,
        ]
    );
    assert_eq!(p.highest_severity(), Some(Severity::Warning));
    let categories: Vec<DiffCategory> = diff(&desired, &live)
        .counts()
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    assert_eq!(
        categories,
        [
            DiffCategory::ColumnsRenamed,
            DiffCategory::ConstraintsModified,
            DiffCategory::IndexesModified,
            DiffCategory::TablesRenamed
        ]
    );

    // Once renamed, the hints are stale: nothing to do, two notices.
    let done = pg(&RENAMED
        .replace("-- ptah:renamed-from users\n", "")
        .replace("-- ptah:renamed-from email", ""));
    let p = plan(&desired, &done, PG, &PlanOptions::default()).expect("plan");
    assert!(p.is_empty(), "{:?}", p.statements);
    let reasons: Vec<String> = ignored_renames(&desired, &done)
        .into_iter()
        .map(|n| format!("{}: {}", n.object, n.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            "table public.accounts: already renamed from users",
            "column email_address of public.accounts: already renamed from email"
        ]
    );

    // Neither name exists yet: the table is simply created.
    let p = plan(&desired, &Schema::default(), PG, &PlanOptions::default()).expect("plan");
    assert!(p.statements.iter().all(|s| !s.sql.contains("RENAME")));
}

#[test]
fn a_rename_of_a_protected_table_is_refused() {
    let options = PlanOptions {
        protected_tables: vec!["users".to_owned()],
        ..PlanOptions::default()
    };
    let err = plan(&pg(RENAMED), &pg(LIVE), PG, &options).expect_err("refused");
    assert!(err.to_string().contains("protected table public.users"), "{err}");
}

/// One generated table: its columns (`int` first, the key) and which are renamed.
#[derive(Debug, Clone)]
struct Generated {
    types: Vec<&'static str>,
    renamed: bool,
    renamed_columns: Vec<bool>,
    trailing: Vec<bool>,
    index_on: usize,
}

fn generated() -> impl Strategy<Value = Vec<Generated>> {
    let table = (1usize..5).prop_flat_map(|n| {
        (
            prop::collection::vec(
                prop::sample::select(vec!["int", "text", "varchar(20)", "bigint"]),
                n,
            ),
            any::<bool>(),
            prop::collection::vec(any::<bool>(), n + 1),
            prop::collection::vec(any::<bool>(), n + 1),
            0..=n,
        )
            .prop_map(
                |(types, renamed, renamed_columns, trailing, index_on)| Generated {
                    types,
                    renamed,
                    renamed_columns,
                    trailing,
                    index_on,
                },
            )
    });
    prop::collection::vec(table, 1..4)
}

/// The DDL of the generated tables, before (`new = false`) or after the renames, with the
/// annotations. Every table after the first references the first one's key.
fn ddl(tables: &[Generated], dialect: Dialect, new: bool) -> String {
    let table_name = |i: usize| match new && tables[i].renamed {
        true => format!("r{i}"),
        false => format!("t{i}"),
    };
    let column_name = |t: &Generated, j: usize| match new && t.renamed_columns[j] {
        true => format!("n{j}"),
        false => format!("c{j}"),
    };
    let mut out = String::new();
    for (i, t) in tables.iter().enumerate() {
        let name = table_name(i);
        if new && t.renamed {
            out.push_str(&format!("-- ptah:renamed-from t{i}\n"));
        }
        out.push_str(&format!("CREATE TABLE {name} (\n"));
        let types = std::iter::once("int").chain(t.types.iter().copied());
        let mut lines = Vec::new();
        for (j, ty) in types.enumerate() {
            let column = column_name(t, j);
            let key = if j == 0 { " NOT NULL" } else { "" };
            let hint = format!("-- ptah:renamed-from c{j}");
            match (new && t.renamed_columns[j], t.trailing[j]) {
                (true, true) => lines.push(format!("    {column} {ty}{key}, {hint}")),
                (true, false) => lines.push(format!("    {hint}\n    {column} {ty}{key},")),
                (false, _) => lines.push(format!("    {column} {ty}{key},")),
            }
        }
        let key = column_name(t, 0);
        lines.push(format!("    PRIMARY KEY ({key})"));
        if i > 0 {
            let (parent, parent_key) = (table_name(0), column_name(&tables[0], 0));
            let last = lines.len() - 1;
            lines[last].push(',');
            let fk = match dialect {
                Dialect::Postgres => format!("    FOREIGN KEY ({key}) REFERENCES {parent} ({parent_key})"),
                Dialect::Mysql => {
                    format!("    CONSTRAINT fk{i} FOREIGN KEY ({key}) REFERENCES {parent} ({parent_key})")
                }
            };
            lines.push(fk);
        }
        out.push_str(&lines.join("\n"));
        out.push_str("\n);\n");
        let indexed = column_name(t, t.index_on);
        out.push_str(&format!(
            "CREATE INDEX {name}_{indexed}_idx ON {name} ({indexed});\n"
        ));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Whatever the tables, types and annotation styles, a document that renames tables and
    /// columns plans nothing but renames against the schema it renames, and has nothing left to
    /// do against that schema renamed by hand.
    #[test]
    fn renaming_a_generated_schema_plans_only_renames(tables in generated()) {
        for dialect in [PG, MY] {
            let live = sql::parse(dialect, "live.sql", &ddl(&tables, dialect, false)).expect("live reads");
            let text = ddl(&tables, dialect, true);
            let desired = sql::parse(dialect, "desired.sql", &text).expect("desired reads");
            let renamed_tables = tables.iter().filter(|t| t.renamed).count();
            let renamed_columns: usize = tables
                .iter()
                .map(|t| t.renamed_columns.iter().take(t.types.len() + 1).filter(|r| **r).count())
                .sum();
            prop_assert_eq!(desired.renames.tables.len(), renamed_tables);
            prop_assert_eq!(desired.renames.columns.len(), renamed_columns);

            let p = plan(&desired, &live, dialect, &PlanOptions::default()).expect("plan");
            for s in &p.statements {
                prop_assert!(s.sql.contains(" RENAME "), "{} in\n{}", s.sql, text);
            }
            let count = |what: &str| p.statements.iter().filter(|s| s.sql.contains(what)).count();
            let sql: Vec<&str> = p.statements.iter().map(|s| s.sql.as_str()).collect();
            prop_assert_eq!(count(" RENAME TO ") - count("ALTER INDEX"), renamed_tables, "{:?}\n{}", sql, text);
            prop_assert_eq!(count(" RENAME COLUMN "), renamed_columns, "{:?}\n{}", sql, text);

            // By hand: the new document without its hints is what the database becomes.
            let mut by_hand = desired.clone();
            by_hand.renames = Default::default();
            let after = plan(&desired, &by_hand, dialect, &PlanOptions::default()).expect("plan");
            prop_assert!(after.is_empty(), "{:?}", after.statements);
            let stale = ignored_renames(&desired, &by_hand).len();
            prop_assert_eq!(stale, renamed_tables + renamed_columns);
        }
    }
}

#[test]
fn the_old_name_keeps_its_schema() {
    let s = pg("CREATE SCHEMA app;\n-- ptah:renamed-from users\nCREATE TABLE app.accounts (id int);");
    assert_eq!(s.renames.tables[0].table, QualifiedName::new("app", "accounts"));
    assert_eq!(s.renames.tables[0].from, "users");
}
