//! PostgreSQL plans for hand-built before/after pairs: exact SQL, severity and order.

use std::collections::BTreeMap;

use Severity::{Destructive as D, Safe as S, Warning as W};
use ptah_schema::diff::glob_match;
use ptah_schema::{
    CheckConstraint, Column, DataType, DefaultValue, Dialect, EnumType, Extension, ForeignKey, Identity,
    Index, IndexPart, IndexTarget, Literal, PlanOptions, PrimaryKey, QualifiedName, ReferentialAction,
    Schema, Severity, Table, UniqueConstraint, plan,
};

fn q(name: &str) -> QualifiedName {
    QualifiedName::new("public", name)
}

const BIGINT: DataType = DataType::Integer {
    bits: 64,
    unsigned: false,
};

fn col(name: &str, data_type: DataType, nullable: bool) -> Column {
    Column {
        name: name.into(),
        data_type,
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

fn index(name: &str, unique: bool, cols: &[&str]) -> Index {
    Index {
        name: name.into(),
        unique,
        parts: cols
            .iter()
            .map(|c| IndexPart {
                target: IndexTarget::Column((*c).into()),
                descending: false,
                prefix_length: None,
                opclass: None,
                nulls_first: None,
            })
            .collect(),
        predicate: None,
        method: None,
        include: Vec::new(),
        nulls_not_distinct: false,
        storage: Vec::new(),
    }
}

fn fk(name: &str, cols: &[&str], target: &str, target_cols: &[&str]) -> ForeignKey {
    ForeignKey {
        name: name.into(),
        columns: cols.iter().map(|c| (*c).into()).collect(),
        referenced_table: q(target),
        referenced_columns: target_cols.iter().map(|c| (*c).into()).collect(),
        on_delete: ReferentialAction::NoAction,
        on_update: ReferentialAction::NoAction,
        options: ptah_schema::ForeignKeyOptions::default(),
    }
}

fn users() -> Table {
    let mut t = Table::new(q("users"));
    let mut id = col("id", BIGINT, false);
    id.identity = Some(Identity::ByDefault);
    t.columns = vec![
        id,
        col("email", DataType::Varchar(Some(255)), false),
        col("name", DataType::Text, true),
    ];
    t.primary_key = Some(PrimaryKey {
        name: "users_pkey".into(),
        columns: vec!["id".into()],
    });
    t
}

fn posts() -> Table {
    let mut t = Table::new(q("posts"));
    t.columns = vec![
        col("id", BIGINT, false),
        col("user_id", BIGINT, false),
        col("title", DataType::Text, true),
    ];
    t.primary_key = Some(PrimaryKey {
        name: "posts_pkey".into(),
        columns: vec!["id".into()],
    });
    let mut f = fk("posts_user_id_fkey", &["user_id"], "users", &["id"]);
    f.on_delete = ReferentialAction::Cascade;
    t.foreign_keys.insert(f.name.clone(), f);
    t
}

fn schema(tables: Vec<Table>) -> Schema {
    let mut s = Schema::default();
    for t in tables {
        s.tables.insert(t.name.clone(), t);
    }
    s
}

fn base() -> Schema {
    schema(vec![users(), posts()])
}

/// Plans `before → after` and compares every statement's SQL and severity, in order.
fn assert_plan(before: &Schema, after: &Schema, expected: &[(&str, Severity)]) {
    let p = plan(after, before, Dialect::Postgres, &PlanOptions::default()).expect("plan");
    let got: Vec<(&str, Severity)> = p
        .statements
        .iter()
        .map(|s| (s.sql.as_str(), s.severity))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(p.destructive, expected.iter().any(|(_, s)| *s == D));
    // Exactly the concurrent builds and the validations run outside the transaction.
    assert!(p.statements.iter().all(|s| !s.reason.is_empty()
        && s.transactional != (s.sql.contains(" CONCURRENTLY ") || s.sql.contains(" VALIDATE CONSTRAINT "))));
}

fn with_users(change: impl FnOnce(&mut Table)) -> Schema {
    let mut s = base();
    if let Some(t) = s.tables.get_mut(&q("users")) {
        change(t);
    }
    s
}

#[test]
fn creating_everything_from_nothing_follows_the_phase_order() {
    let mut after = base();
    after.namespaces.insert("app".into());
    after.extensions.insert(
        "pgcrypto".into(),
        Extension {
            name: "pgcrypto".into(),
            schema: None,
            version: None,
        },
    );
    let mood = QualifiedName::new("app", "mood");
    after.enums.insert(
        mood.clone(),
        EnumType {
            name: mood.clone(),
            values: vec!["sad".into(), "ok".into()],
        },
    );
    if let Some(u) = after.tables.get_mut(&q("users")) {
        u.columns.push(col("mood", DataType::Enum(mood), true));
        u.indexes.insert(
            "users_email_idx".into(),
            index("users_email_idx", true, &["email"]),
        );
        u.comment = Some("people".into());
    }
    assert_plan(
        &Schema::default(),
        &after,
        &[
            (r#"CREATE SCHEMA IF NOT EXISTS "app""#, S),
            (r#"CREATE EXTENSION IF NOT EXISTS "pgcrypto""#, S),
            (r#"CREATE TYPE "app"."mood" AS ENUM ('sad', 'ok')"#, S),
            (
                r#"CREATE TABLE "public"."users" ("id" bigint GENERATED BY DEFAULT AS IDENTITY NOT NULL, "email" character varying(255) NOT NULL, "name" text, "mood" "app"."mood", CONSTRAINT "users_pkey" PRIMARY KEY ("id"))"#,
                S,
            ),
            (r#"COMMENT ON TABLE "public"."users" IS 'people'"#, S),
            (
                r#"CREATE TABLE "public"."posts" ("id" bigint NOT NULL, "user_id" bigint NOT NULL, "title" text, CONSTRAINT "posts_pkey" PRIMARY KEY ("id"))"#,
                S,
            ),
            (
                r#"CREATE UNIQUE INDEX "users_email_idx" ON "public"."users" ("email")"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."posts" ADD CONSTRAINT "posts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "public"."users" ("id") ON DELETE CASCADE"#,
                W,
            ),
        ],
    );
}

#[test]
fn column_changes() {
    let b = base();
    // (description, change to users, expected statements)
    type Case = (&'static str, fn(&mut Table), Vec<(&'static str, Severity)>);
    let cases: Vec<Case> = vec![
        (
            "add nullable",
            |t| t.columns.push(col("bio", DataType::Text, true)),
            vec![(r#"ALTER TABLE "public"."users" ADD COLUMN "bio" text"#, S)],
        ),
        (
            "add not null with default",
            |t| {
                let mut c = col("active", DataType::Boolean, false);
                c.default = Some(DefaultValue::Literal(Literal::Bool(true)));
                t.columns.push(c);
            },
            vec![(
                r#"ALTER TABLE "public"."users" ADD COLUMN "active" boolean NOT NULL DEFAULT TRUE"#,
                W,
            )],
        ),
        (
            "drop column",
            |t| t.columns.retain(|c| c.name != "name"),
            vec![(r#"ALTER TABLE "public"."users" DROP COLUMN "name""#, D)],
        ),
        (
            "widen varchar",
            |t| t.columns[1].data_type = DataType::Varchar(Some(512)),
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "email" TYPE character varying(512)"#,
                W,
            )],
        ),
        (
            "narrow varchar",
            |t| t.columns[1].data_type = DataType::Varchar(Some(100)),
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "email" TYPE character varying(100)"#,
                D,
            )],
        ),
        (
            "text to integer needs USING",
            |t| {
                t.columns[2].data_type = DataType::Integer {
                    bits: 32,
                    unsigned: false,
                }
            },
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "name" TYPE integer USING "name"::integer"#,
                W,
            )],
        ),
        (
            "smaller integer",
            |t| {
                t.columns[0].data_type = DataType::Integer {
                    bits: 32,
                    unsigned: false,
                }
            },
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "id" TYPE integer"#,
                D,
            )],
        ),
        (
            "set not null (through a validated check, outside the transaction)",
            |t| t.columns[2].nullable = false,
            vec![
                (
                    r#"ALTER TABLE "public"."users" DROP CONSTRAINT IF EXISTS "ptah_nn_name""#,
                    S,
                ),
                (
                    r#"ALTER TABLE "public"."users" ADD CONSTRAINT "ptah_nn_name" CHECK ("name" IS NOT NULL) NOT VALID"#,
                    S,
                ),
                (
                    r#"ALTER TABLE "public"."users" VALIDATE CONSTRAINT "ptah_nn_name""#,
                    W,
                ),
                (
                    r#"ALTER TABLE "public"."users" ALTER COLUMN "name" SET NOT NULL"#,
                    W,
                ),
                (
                    r#"ALTER TABLE "public"."users" DROP CONSTRAINT "ptah_nn_name""#,
                    S,
                ),
            ],
        ),
        (
            "drop not null",
            |t| t.columns[1].nullable = true,
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "email" DROP NOT NULL"#,
                D,
            )],
        ),
        (
            "set default expression",
            |t| t.columns[2].default = Some(DefaultValue::Expression("current_user".into())),
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "name" SET DEFAULT current_user"#,
                S,
            )],
        ),
        (
            "identity dropped",
            |t| t.columns[0].identity = None,
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "id" DROP IDENTITY"#,
                W,
            )],
        ),
        (
            "identity kind changed",
            |t| t.columns[0].identity = Some(Identity::Always),
            vec![(
                r#"ALTER TABLE "public"."users" ALTER COLUMN "id" SET GENERATED ALWAYS"#,
                W,
            )],
        ),
        (
            "column comment with a quote",
            |t| t.columns[1].comment = Some("it's unique".into()),
            vec![(
                r#"COMMENT ON COLUMN "public"."users"."email" IS 'it''s unique'"#,
                S,
            )],
        ),
        (
            "table comment",
            |t| t.comment = Some("people".into()),
            vec![(r#"COMMENT ON TABLE "public"."users" IS 'people'"#, S)],
        ),
    ];
    for (what, change, expected) in cases {
        let after = with_users(change);
        let p = plan(&after, &b, Dialect::Postgres, &PlanOptions::default()).expect(what);
        let got: Vec<(&str, Severity)> = p
            .statements
            .iter()
            .map(|s| (s.sql.as_str(), s.severity))
            .collect();
        assert_eq!(got, expected, "{what}");
    }
}

#[test]
fn type_and_default_change_together_drop_the_default_first() {
    let mut before = base();
    if let Some(u) = before.tables.get_mut(&q("users")) {
        u.columns[2].default = Some(DefaultValue::Literal(Literal::String("x".into())));
    }
    let after = with_users(|u| {
        u.columns[2].data_type = DataType::Integer {
            bits: 32,
            unsigned: false,
        };
        u.columns[2].default = Some(DefaultValue::Literal(Literal::Number("0".into())));
    });
    assert_plan(
        &before,
        &after,
        &[
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "name" DROP DEFAULT"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "name" TYPE integer USING "name"::integer"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "name" SET DEFAULT 0"#,
                S,
            ),
        ],
    );
}

#[test]
fn adding_an_identity_to_a_nullable_column_sets_not_null_first() {
    let before = with_users(|u| {
        u.columns[0].identity = None;
        u.columns[0].nullable = true;
    });
    assert_plan(
        &before,
        &base(),
        &[
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "id" SET NOT NULL"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "id" ADD GENERATED BY DEFAULT AS IDENTITY"#,
                W,
            ),
        ],
    );
}

#[test]
fn indexes_added_dropped_and_modified() {
    let mut partial = index("users_name_idx", false, &["name"]);
    partial.predicate = Some("name IS NOT NULL".into());
    partial.parts[0].descending = true;
    let mut expr = index("users_lower_email_idx", true, &[]);
    expr.parts.push(IndexPart {
        target: IndexTarget::Expression("lower(email)".into()),
        descending: false,
        prefix_length: None,
        opclass: None,
        nulls_first: None,
    });
    let mut gin = index("users_bio_idx", false, &["name"]);
    gin.method = Some("gin".into());
    let after = with_users(|u| {
        for i in [partial.clone(), expr.clone(), gin.clone()] {
            u.indexes.insert(i.name.clone(), i);
        }
    });
    assert_plan(
        &base(),
        &after,
        &[
            (
                r#"CREATE INDEX CONCURRENTLY "users_bio_idx" ON "public"."users" USING gin ("name")"#,
                S,
            ),
            (
                r#"CREATE UNIQUE INDEX "users_lower_email_idx" ON "public"."users" ((lower(email)))"#,
                W,
            ),
            (
                r#"CREATE INDEX CONCURRENTLY "users_name_idx" ON "public"."users" ("name" DESC) WHERE name IS NOT NULL"#,
                S,
            ),
        ],
    );
    // Removing them: the unique one is destructive, the plain ones a warning.
    assert_plan(
        &after,
        &base(),
        &[
            (r#"DROP INDEX "public"."users_bio_idx""#, W),
            (r#"DROP INDEX "public"."users_lower_email_idx""#, D),
            (r#"DROP INDEX "public"."users_name_idx""#, W),
        ],
    );
    // Changing one: drop (in the transaction), then build without blocking writes.
    let mut changed = after.clone();
    if let Some(i) = changed
        .tables
        .get_mut(&q("users"))
        .and_then(|u| u.indexes.get_mut("users_name_idx"))
    {
        i.predicate = None;
    }
    assert_plan(
        &after,
        &changed,
        &[
            (r#"DROP INDEX "public"."users_name_idx""#, W),
            (
                r#"CREATE INDEX CONCURRENTLY "users_name_idx" ON "public"."users" ("name" DESC)"#,
                S,
            ),
        ],
    );
}

#[test]
fn constraints_added_dropped_and_modified() {
    let after = with_users(|u| {
        u.uniques.insert(
            "users_email_key".into(),
            UniqueConstraint {
                name: "users_email_key".into(),
                columns: vec!["email".into()],
            },
        );
        u.checks.insert(
            "users_email_check".into(),
            CheckConstraint {
                name: "users_email_check".into(),
                expression: "email <> ''".into(),
            },
        );
    });
    assert_plan(
        &base(),
        &after,
        &[
            (
                r#"ALTER TABLE "public"."users" ADD CONSTRAINT "users_email_key" UNIQUE ("email")"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."users" ADD CONSTRAINT "users_email_check" CHECK (email <> '') NOT VALID"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."users" VALIDATE CONSTRAINT "users_email_check""#,
                W,
            ),
        ],
    );
    assert_plan(
        &after,
        &base(),
        &[
            (
                r#"ALTER TABLE "public"."users" DROP CONSTRAINT "users_email_key""#,
                D,
            ),
            (
                r#"ALTER TABLE "public"."users" DROP CONSTRAINT "users_email_check""#,
                D,
            ),
        ],
    );
    let mut pk_changed = base();
    if let Some(u) = pk_changed.tables.get_mut(&q("users")) {
        u.primary_key = Some(PrimaryKey {
            name: "users_pkey".into(),
            columns: vec!["id".into(), "email".into()],
        });
    }
    // The foreign key over the old key's columns depends on its index: it goes first and comes
    // back last (PostgreSQL then refuses it, since `id` alone is no longer unique).
    assert_plan(
        &base(),
        &pk_changed,
        &[
            (
                r#"ALTER TABLE "public"."posts" DROP CONSTRAINT "posts_user_id_fkey""#,
                D,
            ),
            (r#"ALTER TABLE "public"."users" DROP CONSTRAINT "users_pkey""#, D),
            (
                r#"ALTER TABLE "public"."users" ADD CONSTRAINT "users_pkey" PRIMARY KEY ("id", "email")"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."posts" ADD CONSTRAINT "posts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "public"."users" ("id") ON DELETE CASCADE NOT VALID"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."posts" VALIDATE CONSTRAINT "posts_user_id_fkey""#,
                W,
            ),
        ],
    );
}

#[test]
fn foreign_keys_are_added_after_constraints_and_dropped_first() {
    let mut after = base();
    if let Some(p) = after.tables.get_mut(&q("posts")) {
        let f = p.foreign_keys.get_mut("posts_user_id_fkey").expect("fk");
        f.on_delete = ReferentialAction::SetNull;
        f.on_update = ReferentialAction::Restrict;
        p.checks.insert(
            "posts_title_check".into(),
            CheckConstraint {
                name: "posts_title_check".into(),
                expression: "length(title) > 0".into(),
            },
        );
    }
    assert_plan(
        &base(),
        &after,
        &[
            (
                r#"ALTER TABLE "public"."posts" DROP CONSTRAINT "posts_user_id_fkey""#,
                D,
            ),
            (
                r#"ALTER TABLE "public"."posts" ADD CONSTRAINT "posts_title_check" CHECK (length(title) > 0) NOT VALID"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."posts" VALIDATE CONSTRAINT "posts_title_check""#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."posts" ADD CONSTRAINT "posts_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "public"."users" ("id") ON DELETE SET NULL ON UPDATE RESTRICT NOT VALID"#,
                W,
            ),
            (
                r#"ALTER TABLE "public"."posts" VALIDATE CONSTRAINT "posts_user_id_fkey""#,
                W,
            ),
        ],
    );
    // Dropping the posts table and the users table: children first.
    assert_plan(
        &base(),
        &Schema::default(),
        &[
            (r#"DROP TABLE "public"."posts""#, D),
            (r#"DROP TABLE "public"."users""#, D),
        ],
    );
}

#[test]
fn enums_add_values_in_place_and_recreate_on_removal() {
    let mood = q("mood");
    let with_enum = |values: &[&str], default: Option<&str>| {
        let mut s = base();
        s.enums.insert(
            mood.clone(),
            EnumType {
                name: mood.clone(),
                values: values.iter().map(|v| (*v).into()).collect(),
            },
        );
        if let Some(u) = s.tables.get_mut(&q("users")) {
            let mut c = col("mood", DataType::Enum(mood.clone()), true);
            c.default = default.map(|d| DefaultValue::Literal(Literal::String(d.into())));
            u.columns.push(c);
        }
        s
    };
    assert_plan(
        &with_enum(&["ok", "sad"], None),
        &with_enum(&["happy", "ok", "meh", "sad", "angry"], None),
        &[
            (r#"ALTER TYPE "public"."mood" ADD VALUE 'happy' BEFORE 'ok'"#, W),
            (r#"ALTER TYPE "public"."mood" ADD VALUE 'meh' AFTER 'ok'"#, W),
            (r#"ALTER TYPE "public"."mood" ADD VALUE 'angry' AFTER 'sad'"#, W),
        ],
    );
    assert_plan(
        &with_enum(&["ok", "sad", "meh"], Some("ok")),
        &with_enum(&["ok", "sad"], Some("ok")),
        &[
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "mood" DROP DEFAULT"#,
                W,
            ),
            (r#"ALTER TYPE "public"."mood" RENAME TO "mood__ptah_old""#, W),
            (r#"CREATE TYPE "public"."mood" AS ENUM ('ok', 'sad')"#, S),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "mood" TYPE "public"."mood" USING "mood"::text::"public"."mood""#,
                D,
            ),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "mood" SET DEFAULT 'ok'"#,
                S,
            ),
            (r#"DROP TYPE "public"."mood__ptah_old""#, D),
        ],
    );
    // The default changes along with the labels: the column phase sets the new one.
    assert_plan(
        &with_enum(&["ok", "meh"], Some("meh")),
        &with_enum(&["ok"], Some("ok")),
        &[
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "mood" DROP DEFAULT"#,
                W,
            ),
            (r#"ALTER TYPE "public"."mood" RENAME TO "mood__ptah_old""#, W),
            (r#"CREATE TYPE "public"."mood" AS ENUM ('ok')"#, S),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "mood" TYPE "public"."mood" USING "mood"::text::"public"."mood""#,
                D,
            ),
            (r#"DROP TYPE "public"."mood__ptah_old""#, D),
            (
                r#"ALTER TABLE "public"."users" ALTER COLUMN "mood" SET DEFAULT 'ok'"#,
                S,
            ),
        ],
    );
    // Dropping the type goes last, after the column that used it.
    assert_plan(
        &with_enum(&["ok"], None),
        &base(),
        &[
            (r#"ALTER TABLE "public"."users" DROP COLUMN "mood""#, D),
            (r#"DROP TYPE "public"."mood""#, D),
        ],
    );
}

#[test]
fn new_tables_in_a_cycle_get_their_foreign_keys_after_all_tables_exist() {
    let mut a = Table::new(q("a"));
    a.columns = vec![
        col("id", BIGINT, false),
        col("b_id", BIGINT, true),
        col("parent", BIGINT, true),
    ];
    a.foreign_keys
        .insert("a_b".into(), fk("a_b", &["b_id"], "b", &["id"]));
    a.foreign_keys
        .insert("a_parent".into(), fk("a_parent", &["parent"], "a", &["id"]));
    let mut b = Table::new(q("b"));
    b.columns = vec![col("id", BIGINT, false), col("a_id", BIGINT, true)];
    b.foreign_keys
        .insert("b_a".into(), fk("b_a", &["a_id"], "a", &["id"]));
    let mut c = Table::new(q("c"));
    c.columns = vec![col("b_id", BIGINT, true)];
    c.foreign_keys
        .insert("c_b".into(), fk("c_b", &["b_id"], "b", &["id"]));
    let mut leaf = Table::new(q("0_leaf"));
    leaf.columns = vec![col("c_id", BIGINT, true)];
    leaf.foreign_keys
        .insert("leaf_c".into(), fk("leaf_c", &["c_id"], "c", &["b_id"]));
    let after = schema(vec![leaf, c, b, a]);
    let p = plan(
        &after,
        &Schema::default(),
        Dialect::Postgres,
        &PlanOptions::default(),
    )
    .expect("plan");
    let sql: Vec<&str> = p.statements.iter().map(|s| s.sql.as_str()).collect();
    let creates: Vec<&str> = sql
        .iter()
        .filter(|s| s.starts_with("CREATE TABLE"))
        .copied()
        .collect();
    // a and b form a cycle (a is released first by name); c follows b; the leaf follows c.
    assert!(
        creates[0].starts_with(r#"CREATE TABLE "public"."a""#),
        "{creates:?}"
    );
    assert!(
        creates[1].starts_with(r#"CREATE TABLE "public"."b""#),
        "{creates:?}"
    );
    assert!(
        creates[2].starts_with(r#"CREATE TABLE "public"."c""#),
        "{creates:?}"
    );
    assert!(
        creates[3].starts_with(r#"CREATE TABLE "public"."0_leaf""#),
        "{creates:?}"
    );
    assert!(creates.iter().all(|c| !c.contains("FOREIGN KEY")));
    let first_fk = sql.iter().position(|s| s.contains("FOREIGN KEY")).expect("fks");
    assert!(
        sql[..first_fk]
            .iter()
            .filter(|s| s.starts_with("CREATE TABLE"))
            .count()
            == 4
    );
    assert_eq!(sql.iter().filter(|s| s.contains("FOREIGN KEY")).count(), 5);
    // Dropping them all, children first: a still references b when b goes, so that key goes first.
    let p = plan(
        &Schema::default(),
        &after,
        Dialect::Postgres,
        &PlanOptions::default(),
    )
    .expect("plan");
    let sql: Vec<&str> = p.statements.iter().map(|s| s.sql.as_str()).collect();
    assert_eq!(
        sql,
        [
            r#"ALTER TABLE "public"."a" DROP CONSTRAINT "a_b""#,
            r#"DROP TABLE "public"."0_leaf""#,
            r#"DROP TABLE "public"."c""#,
            r#"DROP TABLE "public"."b""#,
            r#"DROP TABLE "public"."a""#,
        ]
    );
}

#[test]
fn glob_matching() {
    assert!(glob_match("audit_*", "audit_log"));
    assert!(glob_match("public.tmp_*", "PUBLIC.tmp_x"));
    assert!(glob_match("a?c", "abc"));
    assert!(!glob_match("a?c", "abbc"));
    assert!(glob_match("*_log*", "x_log_y"));
    assert!(!glob_match("tmp_*", "public.tmp_x"));
}

#[test]
fn reference_rows_values_only_in_sql() {
    let mut before = base();
    let rows = |values: &[(i64, &str)]| ptah_schema::ReferenceRows {
        key: vec!["id".into()],
        rows: values
            .iter()
            .map(|(id, name)| {
                BTreeMap::from([
                    ("id".to_owned(), Literal::Number(id.to_string())),
                    ("name".to_owned(), Literal::String((*name).into())),
                ])
            })
            .collect(),
    };
    if let Some(u) = before.tables.get_mut(&q("users")) {
        u.rows = Some(rows(&[(1, "root"), (2, "old")]));
    }
    let after = with_users(|u| u.rows = Some(rows(&[(3, "new"), (1, "admin")])));
    assert_plan(
        &before,
        &after,
        &[
            (
                r#"INSERT INTO "public"."users" ("id", "name") VALUES (3, 'new')"#,
                S,
            ),
            (
                r#"UPDATE "public"."users" SET "name" = 'admin' WHERE "id" = 1"#,
                W,
            ),
            (r#"DELETE FROM "public"."users" WHERE "id" = 2"#, D),
        ],
    );
    let drift = ptah_schema::drift(&after, &before, Dialect::Postgres, &PlanOptions::default());
    let summary = serde_json::to_string(&drift.findings).expect("json");
    assert_eq!(
        summary,
        r#"[{"category":"rows_deleted","count":1,"severity":"destructive"},{"category":"rows_inserted","count":1,"severity":"safe"},{"category":"rows_updated","count":1,"severity":"warning"}]"#
    );
    assert!(!summary.contains("admin") && !summary.contains("new"));
}
