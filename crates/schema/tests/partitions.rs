//! PostgreSQL partitioning: a real `pg_dump --schema-only` (15) of range, list and hash
//! partitioned tables with a default partition, partitioned indexes and keys reads to the model a
//! person's hand-written DDL reads to; `schema.hcl` round-trips it; plans create parents before
//! partitions and drop partitions first, detach and attach with warnings, leave what partitions
//! inherit to the server, and refuse a partition key change.

use Severity::{Destructive as D, Safe as S, Warning as W};
use ptah_schema::read::ReadError;
use ptah_schema::read::sql::{parse, parse_document};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{Dialect, PartitionOf, PlanError, PlanOptions, QualifiedName, Schema, Severity, plan};

const PG: Dialect = Dialect::Postgres;

/// `pg_dump --schema-only --no-owner` of `HAND_WRITTEN` loaded into an empty PostgreSQL 15 database.
const DUMP: &str = include_str!("data/pg_partitions.sql");

/// The DDL the dump was made from (each statement as a person writes it).
const HAND_WRITTEN: &str = "
CREATE SCHEMA app;
CREATE TABLE app.users (id integer PRIMARY KEY);
CREATE TABLE app.events (
    id bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    kind text,
    payload jsonb,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
COMMENT ON TABLE app.events IS 'all events';
COMMENT ON COLUMN app.events.kind IS 'what happened';
CREATE TABLE app.events_2024 PARTITION OF app.events FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00');
CREATE TABLE app.events_2025 PARTITION OF app.events FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2026-01-01 00:00:00+00');
CREATE TABLE app.events_default PARTITION OF app.events DEFAULT;
COMMENT ON TABLE app.events_default IS 'anything else';
CREATE INDEX events_kind_idx ON app.events (kind);
CREATE INDEX events_2024_payload_idx ON app.events_2024 USING gin (payload);
CREATE TABLE app.orders (
    id integer NOT NULL,
    region text NOT NULL,
    user_id integer REFERENCES app.users,
    CONSTRAINT orders_id_check CHECK (id > 0)
) PARTITION BY LIST (region);
CREATE TABLE app.orders_eu PARTITION OF app.orders FOR VALUES IN ('de', 'fr');
CREATE TABLE app.orders_us PARTITION OF app.orders (CONSTRAINT orders_us_id_small CHECK (id < 1000000)) FOR VALUES IN ('us');
CREATE TABLE app.sessions (id integer NOT NULL, token text) PARTITION BY HASH (id);
CREATE TABLE app.sessions_0 PARTITION OF app.sessions FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE app.sessions_1 PARTITION OF app.sessions FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE UNIQUE INDEX sessions_id_key ON app.sessions (id);
";

fn q(name: &str) -> QualifiedName {
    QualifiedName::new("app", name)
}

fn dump() -> Schema {
    parse(PG, "pg_partitions.sql", DUMP).unwrap_or_else(|e| panic!("reads the dump: {e}"))
}

fn of(parent: &str, bound: &str) -> Option<PartitionOf> {
    Some(PartitionOf {
        parent: q(parent),
        bound: bound.to_owned(),
    })
}

#[test]
fn a_pg_dump_of_range_list_and_hash_partitioning_reads_keys_bounds_and_only_what_is_not_inherited() {
    let s = dump();
    let t = |n: &str| &s.tables[&q(n)];
    assert_eq!(t("events").partition_by.as_deref(), Some("RANGE (created_at)"));
    assert_eq!(t("orders").partition_by.as_deref(), Some("LIST (region)"));
    assert_eq!(t("sessions").partition_by.as_deref(), Some("HASH (id)"));
    assert_eq!(t("users").partition_by, None);
    assert_eq!(
        t("events_2024").partition_of,
        of(
            "events",
            "FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2025-01-01 00:00:00+00')"
        )
    );
    assert_eq!(t("events_default").partition_of, of("events", "DEFAULT"));
    assert_eq!(
        t("orders_eu").partition_of,
        of("orders", "FOR VALUES IN ('de', 'fr')")
    );
    assert_eq!(
        t("sessions_1").partition_of,
        of("sessions", "FOR VALUES WITH (modulus 2, remainder 1)")
    );
    // The parent holds the partitioned index and key; each partition only its own.
    assert_eq!(
        t("events").primary_key.as_ref().map(|p| p.name.as_str()),
        Some("events_pkey")
    );
    assert!(t("events").indexes.contains_key("events_kind_idx"));
    assert!(t("sessions").indexes["sessions_id_key"].unique);
    for p in ["events_2024", "events_2025", "events_default"] {
        assert_eq!(t(p).primary_key, None, "{p} inherits its key");
    }
    assert_eq!(
        t("events_2024").indexes.keys().collect::<Vec<_>>(),
        ["events_2024_payload_idx"]
    );
    assert!(t("events_2025").indexes.is_empty());
    assert!(t("sessions_0").indexes.is_empty());
    // Checks and foreign keys the partitions inherit stay on the parent.
    assert!(t("orders").checks.contains_key("orders_id_check"));
    assert!(t("orders").foreign_keys.contains_key("orders_user_id_fkey"));
    assert!(t("orders_eu").checks.is_empty());
    assert_eq!(
        t("orders_us").checks.keys().collect::<Vec<_>>(),
        ["orders_us_id_small"]
    );
    assert!(t("orders_us").foreign_keys.is_empty());
    // A partition's columns are its parent's, without the parent's column comments.
    let parent: Vec<&str> = t("events").columns.iter().map(|c| c.name.as_str()).collect();
    let child: Vec<&str> = t("events_2024").columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(parent, child);
    assert_eq!(
        t("events").column("kind").and_then(|c| c.comment.as_deref()),
        Some("what happened")
    );
    assert_eq!(
        t("events_2024").column("kind").and_then(|c| c.comment.as_deref()),
        None
    );
    assert_eq!(t("events_default").comment.as_deref(), Some("anything else"));
}

#[test]
fn the_hand_written_ddl_reads_to_the_model_of_its_dump() {
    let hand = parse(PG, "hand.sql", HAND_WRITTEN).unwrap_or_else(|e| panic!("reads: {e}"));
    assert_eq!(hand, dump());
    assert_eq!(hand.fingerprint(), dump().fingerprint());
}

#[test]
fn bounds_and_keys_in_another_spelling_read_in_the_catalogs() {
    let text = "CREATE TABLE h (id int) partition by hash(id);
        create table h0 partition of h for values with (modulus 2,remainder 0);
        CREATE TABLE r (a int) PARTITION BY range (a);
        CREATE TABLE r1 (a int);
        ALTER TABLE r ATTACH PARTITION r1 for values from (minvalue) to (10);
        CREATE TABLE r2 PARTITION OF r default;";
    let s = parse(PG, "x.sql", text).unwrap_or_else(|e| panic!("reads: {e}"));
    let p = |n: &str| s.tables[&QualifiedName::new("public", n)].partition_of.clone();
    assert_eq!(
        s.tables[&QualifiedName::new("public", "h")]
            .partition_by
            .as_deref(),
        Some("HASH (id)")
    );
    assert_eq!(
        p("h0").map(|o| o.bound),
        Some("FOR VALUES WITH (modulus 2, remainder 0)".to_owned())
    );
    assert_eq!(
        p("r1").map(|o| o.bound),
        Some("FOR VALUES FROM (MINVALUE) TO (10)".to_owned())
    );
    assert_eq!(p("r2").map(|o| o.bound), Some("DEFAULT".to_owned()));
}

#[test]
fn partitioning_mistakes_are_refused_where_they_are_written() {
    let refused = |text: &str| match parse_document(PG, "x.sql", text) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{text}: expected an error"),
    };
    let plain = "CREATE TABLE p (a int);\n";
    assert!(refused(&format!("{plain}CREATE TABLE c PARTITION OF p DEFAULT;")).contains("not partitioned"));
    assert!(refused("CREATE TABLE c PARTITION OF nowhere DEFAULT;").contains("nowhere"));
    let parted = "CREATE TABLE p (a int) PARTITION BY LIST (a);\n";
    let options = refused(&format!(
        "{parted}CREATE TABLE c PARTITION OF p (a WITH OPTIONS NOT NULL) DEFAULT;"
    ));
    assert!(
        options.contains("x.sql:2:1") && options.contains("PARTITION OF"),
        "{options}"
    );
    assert!(refused(&format!("{parted}CREATE TABLE c PARTITION OF p;")).contains("partition bound"));
    let storage = refused(&format!(
        "{parted}CREATE TABLE c PARTITION OF p FOR VALUES IN (1) WITH (fillfactor = 70);"
    ));
    assert!(storage.contains("only the bound is modelled"), "{storage}");
    let tablespace = refused("CREATE TABLE p (a int) PARTITION BY LIST (a) TABLESPACE elsewhere;");
    assert!(tablespace.contains("TABLESPACE are not"), "{tablespace}");
    assert!(refused("CREATE TABLE p (a int) PARTITION BY ODD (a);").contains("RANGE|LIST|HASH"));
    let detach = refused(&format!(
        "{parted}CREATE TABLE c PARTITION OF p DEFAULT;\nALTER TABLE p DETACH PARTITION c;"
    ));
    assert!(
        detach.contains("x.sql:3:1") && detach.contains("DETACH PARTITION"),
        "{detach}"
    );
    assert!(
        refused(&format!(
            "{parted}ALTER INDEX public.nothing ATTACH PARTITION public.none;"
        ))
        .contains("nothing")
    );
}

#[test]
fn schema_hcl_round_trips_partitioning_and_writes_no_partition_columns() {
    let s = dump();
    let hcl = to_hcl(PG, &s);
    assert!(hcl.contains("partition_by = \"RANGE (created_at)\""), "{hcl}");
    assert!(hcl.contains("partition_of = \"app.events\""), "{hcl}");
    assert!(hcl.contains("partition_bound = \"DEFAULT\""), "{hcl}");
    let block = hcl
        .split("table \"events_2025\"")
        .nth(1)
        .and_then(|b| b.split("\n}").next())
        .unwrap_or_default();
    assert!(
        !block.contains("column"),
        "a partition declares no columns: {block}"
    );
    let back = ptah_schema::read::hcl::parse(PG, "schema.hcl", &hcl).unwrap_or_else(|e| panic!("{e}\n{hcl}"));
    assert_eq!(back, s);
}

#[test]
fn partitions_declared_before_their_parent_in_schema_hcl_take_its_columns() {
    let hcl = r#"
schema "app" {}
table "p1" {
  schema = schema.app
  partition_of = "app.p"
  partition_bound = "for values in (1)"
  check "p1_small" {
    expr = "a < 10"
  }
}
table "p" {
  schema = schema.app
  partition_by = "list (a)"
  column "a" {
    type = integer
  }
}
"#;
    let s = ptah_schema::read::hcl::parse(PG, "schema.hcl", hcl).unwrap_or_else(|e| panic!("{e}"));
    let p1 = &s.tables[&q("p1")];
    assert_eq!(p1.partition_of, of("p", "FOR VALUES IN (1)"));
    assert_eq!(p1.columns, s.tables[&q("p")].columns);
    assert_eq!(s.tables[&q("p")].partition_by.as_deref(), Some("LIST (a)"));
    let bad = "table \"c\" {\n  partition_of = \"public.nothing\"\n  partition_bound = \"DEFAULT\"\n}\n";
    let r = ptah_schema::read::hcl::parse(PG, "schema.hcl", bad);
    assert!(
        matches!(&r, Err(ReadError::BadReference { what, .. }) if what == "table public.nothing"),
        "{r:?}"
    );
}

fn sqls(desired: &Schema, actual: &Schema) -> Vec<(String, Severity)> {
    plan(desired, actual, PG, &PlanOptions::default())
        .unwrap_or_else(|e| panic!("plans: {e}"))
        .statements
        .into_iter()
        .map(|s| (s.sql, s.severity))
        .collect()
}

fn position(plan: &[(String, Severity)], starts: &str) -> usize {
    plan.iter()
        .position(|(s, _)| s.starts_with(starts))
        .unwrap_or_else(|| panic!("no `{starts}…` in {plan:#?}"))
}

#[test]
fn a_new_schema_creates_parents_before_partitions_and_indexes_once_on_the_parent() {
    let p = sqls(&dump(), &Schema::default());
    let creates = p.iter().filter(|(s, _)| s.starts_with("CREATE TABLE"));
    assert!(
        creates.clone().count() == 11 && creates.clone().all(|(_, s)| *s == S),
        "{p:#?}"
    );
    let parent = position(&p, "CREATE TABLE \"app\".\"events\" (");
    assert!(
        p[parent].0.ends_with(" PARTITION BY RANGE (created_at)"),
        "{}",
        p[parent].0
    );
    let child = position(
        &p,
        "CREATE TABLE \"app\".\"events_2024\" PARTITION OF \"app\".\"events\" FOR VALUES FROM",
    );
    assert!(parent < child);
    assert!(
        position(
            &p,
            "CREATE TABLE \"app\".\"events_default\" PARTITION OF \"app\".\"events\" DEFAULT"
        ) > parent
    );
    assert_eq!(
        p[position(&p, "CREATE TABLE \"app\".\"orders_us\"")].0,
        "CREATE TABLE \"app\".\"orders_us\" PARTITION OF \"app\".\"orders\" (CONSTRAINT \"orders_us_id_small\" CHECK (id < 1000000)) FOR VALUES IN ('us')"
    );
    let kind_indexes = p.iter().filter(|(s, _)| s.contains("(\"kind\")")).count();
    assert_eq!(kind_indexes, 1, "the parent's index only: {p:#?}");
    let keys = p.iter().filter(|(s, _)| s.contains("FOREIGN KEY")).count();
    assert_eq!(keys, 1, "the parent's foreign key only: {p:#?}");
    // Applying the plan's own target plans nothing more.
    assert!(sqls(&dump(), &dump()).is_empty());
}

#[test]
fn dropping_partitioned_tables_drops_partitions_first_and_is_destructive() {
    let p = sqls(&Schema::default(), &dump());
    assert!(
        p.iter()
            .filter(|(s, _)| s.starts_with("DROP TABLE"))
            .all(|(_, s)| *s == D)
    );
    assert!(
        position(&p, "DROP TABLE \"app\".\"events_2024\"") < position(&p, "DROP TABLE \"app\".\"events\"")
    );
    assert!(
        position(&p, "DROP TABLE \"app\".\"sessions_1\"") < position(&p, "DROP TABLE \"app\".\"sessions\"")
    );
}

#[test]
fn a_bound_change_detaches_and_attaches_again_with_warnings() {
    let mut desired = dump();
    let t = desired.tables.get_mut(&q("events_2025")).expect("partition");
    t.partition_of = of(
        "events",
        "FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2027-01-01 00:00:00+00')",
    );
    let p = sqls(&desired, &dump());
    assert_eq!(
        p,
        [
            ("ALTER TABLE \"app\".\"events\" DETACH PARTITION \"app\".\"events_2025\"".to_owned(), W),
            (
                "ALTER TABLE \"app\".\"events\" ATTACH PARTITION \"app\".\"events_2025\" FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2027-01-01 00:00:00+00')"
                    .to_owned(),
                W
            ),
        ]
    );
}

#[test]
fn a_partition_declared_plain_is_detached_and_a_plain_table_declared_a_partition_is_attached() {
    // Declared with the copies of the parent's key and index the server leaves it on DETACH.
    let text = HAND_WRITTEN.replace(
        "CREATE TABLE app.events_default PARTITION OF app.events DEFAULT;",
        "CREATE TABLE app.events_default (id bigint NOT NULL, created_at timestamp with time zone NOT NULL, kind text, payload jsonb, PRIMARY KEY (id, created_at));
         CREATE INDEX ON app.events_default (kind);",
    );
    let desired = parse(PG, "x.sql", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        desired.tables[&q("events_default")]
            .indexes
            .contains_key("events_default_kind_idx")
    );
    assert_eq!(
        sqls(&desired, &dump()),
        [(
            "ALTER TABLE \"app\".\"events\" DETACH PARTITION \"app\".\"events_default\"".to_owned(),
            W
        )]
    );
    // Attaching it again lets the parent's key and index take its own over.
    assert_eq!(
        sqls(&dump(), &desired),
        [(
            "ALTER TABLE \"app\".\"events\" ATTACH PARTITION \"app\".\"events_default\" DEFAULT".to_owned(),
            W
        )]
    );
    // Declared without them, the copies are dropped after the detach.
    let mut bare = dump();
    bare.tables
        .get_mut(&q("events_default"))
        .expect("partition")
        .partition_of = None;
    let p = sqls(&bare, &dump());
    assert_eq!(
        p[0].0,
        "ALTER TABLE \"app\".\"events\" DETACH PARTITION \"app\".\"events_default\""
    );
    assert!(
        p.contains(&(
            "ALTER TABLE \"app\".\"events_default\" DROP CONSTRAINT \"events_default_pkey\"".to_owned(),
            D
        )),
        "{p:#?}"
    );
    assert!(
        p.iter()
            .any(|(s, _)| s == "DROP INDEX \"app\".\"events_default_kind_idx\""),
        "{p:#?}"
    );
}

#[test]
fn a_new_partition_of_an_existing_parent_is_created_with_its_bound() {
    let text =
        format!("{HAND_WRITTEN}\nCREATE TABLE app.orders_asia PARTITION OF app.orders FOR VALUES IN ('jp');");
    let desired = parse(PG, "x.sql", &text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        sqls(&desired, &dump()),
        [(
            "CREATE TABLE \"app\".\"orders_asia\" PARTITION OF \"app\".\"orders\" FOR VALUES IN ('jp')"
                .to_owned(),
            S
        )]
    );
    // A parent with a default partition has it scanned: a warning.
    let text = format!(
        "{HAND_WRITTEN}\nCREATE TABLE app.events_2026 PARTITION OF app.events FOR VALUES FROM ('2026-01-01 00:00:00+00') TO ('2027-01-01 00:00:00+00');"
    );
    let desired = parse(PG, "x.sql", &text).unwrap_or_else(|e| panic!("{e}"));
    let p = sqls(&desired, &dump());
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(
        p[0].0
            .starts_with("CREATE TABLE \"app\".\"events_2026\" PARTITION OF"),
        "{p:#?}"
    );
    assert_eq!(p[0].1, W);
}

#[test]
fn a_column_added_to_a_parent_is_added_once_the_server_gives_it_to_the_partitions() {
    let text = HAND_WRITTEN.replace("    payload jsonb,\n", "    payload jsonb,\n    source text,\n");
    let desired = parse(PG, "x.sql", &text).unwrap_or_else(|e| panic!("{e}"));
    assert!(desired.tables[&q("events_2024")].column("source").is_some());
    assert_eq!(
        sqls(&desired, &dump()),
        [(
            "ALTER TABLE \"app\".\"events\" ADD COLUMN \"source\" text".to_owned(),
            S
        )]
    );
}

#[test]
fn a_partition_key_change_is_refused_naming_the_table() {
    let text = HAND_WRITTEN.replace("PARTITION BY HASH (id)", "PARTITION BY RANGE (id)");
    let text = text
        .replace(
            "FOR VALUES WITH (MODULUS 2, REMAINDER 0)",
            "FOR VALUES FROM (0) TO (10)",
        )
        .replace(
            "FOR VALUES WITH (MODULUS 2, REMAINDER 1)",
            "FOR VALUES FROM (10) TO (20)",
        );
    let desired = parse(PG, "x.sql", &text).unwrap_or_else(|e| panic!("{e}"));
    let err = plan(&desired, &dump(), PG, &PlanOptions::default()).expect_err("refused");
    assert_eq!(
        err,
        PlanError::PartitionKeyChanged {
            table: "app.sessions".to_owned(),
            from: "HASH (id)".to_owned(),
            to: "RANGE (id)".to_owned(),
        }
    );
    assert!(err.to_string().contains("app.sessions"), "{err}");
    let drift = ptah_schema::drift(&desired, &dump(), PG, &PlanOptions::default());
    let keys = drift
        .findings
        .iter()
        .find(|f| f.category.as_str() == "partition_keys_modified")
        .expect("a finding");
    assert_eq!((keys.count, keys.severity), (1, D));
}

#[test]
fn a_partition_that_is_partitioned_itself_reads_from_a_dump_and_is_created_under_its_parent() {
    // As pg_dump 15 writes `sub1 PARTITION OF sub … PARTITION BY LIST (b)` and its partition.
    let text = "CREATE SCHEMA app;
CREATE TABLE app.sub (\n    a integer,\n    b integer\n)\nPARTITION BY RANGE (a);
CREATE TABLE app.sub1 (\n    a integer,\n    b integer\n)\nPARTITION BY LIST (b);
CREATE TABLE app.sub1a (\n    a integer,\n    b integer\n);
ALTER TABLE ONLY app.sub ATTACH PARTITION app.sub1 FOR VALUES FROM (0) TO (10);
ALTER TABLE ONLY app.sub1 ATTACH PARTITION app.sub1a FOR VALUES IN (1);
";
    let s = parse(PG, "sub.sql", text).unwrap_or_else(|e| panic!("{e}"));
    let sub1 = &s.tables[&q("sub1")];
    assert_eq!(sub1.partition_by.as_deref(), Some("LIST (b)"));
    assert_eq!(sub1.partition_of, of("sub", "FOR VALUES FROM (0) TO (10)"));
    assert_eq!(
        s.tables[&q("sub1a")].partition_of,
        of("sub1", "FOR VALUES IN (1)")
    );
    let p = sqls(&s, &Schema::default());
    let sub1_create = position(&p, "CREATE TABLE \"app\".\"sub1\" PARTITION OF \"app\".\"sub\"");
    assert_eq!(
        p[sub1_create].0,
        "CREATE TABLE \"app\".\"sub1\" PARTITION OF \"app\".\"sub\" FOR VALUES FROM (0) TO (10) PARTITION BY LIST (b)"
    );
    assert!(position(&p, "CREATE TABLE \"app\".\"sub\" (") < sub1_create);
    assert!(sub1_create < position(&p, "CREATE TABLE \"app\".\"sub1a\" PARTITION OF \"app\".\"sub1\""));
    let hand = "CREATE SCHEMA app;
CREATE TABLE app.sub (a int, b int) PARTITION BY RANGE (a);
CREATE TABLE app.sub1 PARTITION OF app.sub FOR VALUES FROM (0) TO (10) PARTITION BY LIST (b);
CREATE TABLE app.sub1a PARTITION OF app.sub1 FOR VALUES IN (1);";
    assert_eq!(parse(PG, "hand.sql", hand).unwrap_or_else(|e| panic!("{e}")), s);
}

#[test]
fn a_protected_parent_refuses_a_plan_that_detaches_or_attaches_its_partitions() {
    let mut desired = dump();
    desired
        .tables
        .get_mut(&q("events_2025"))
        .expect("partition")
        .partition_of = of(
        "events",
        "FOR VALUES FROM ('2025-01-01 00:00:00+00') TO ('2027-01-01 00:00:00+00')",
    );
    let options = PlanOptions {
        protected_tables: vec!["app.events".to_owned()],
        ..PlanOptions::default()
    };
    match plan(&desired, &dump(), PG, &options) {
        Err(PlanError::ProtectedTable { table, category }) => {
            assert_eq!(table, "app.events");
            assert_eq!(category.as_str(), "partitions_modified");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn mysql_partitioning_is_read_and_only_a_mysql_clause_is_taken_from_hcl() {
    // MySQL's partitioning is modelled as one canonical clause (tests/read_mysql_partitions.rs).
    let text = "CREATE TABLE t (id int NOT NULL, at date NOT NULL) PARTITION BY RANGE (YEAR(at)) (PARTITION p0 VALUES LESS THAN (2025), PARTITION p1 VALUES LESS THAN MAXVALUE);";
    let doc = parse_document(Dialect::Mysql, "my.sql", text).expect("reads");
    let t = doc.schema.tables.values().next().expect("a table");
    assert!(
        t.partition_by
            .as_deref()
            .is_some_and(|p| p.starts_with("PARTITION BY RANGE"))
    );
    let hcl = "table \"t\" {\n  partition_by = \"RANGE (id)\"\n  column \"id\" {\n    type = int\n  }\n}\n";
    let err = ptah_schema::read::hcl::parse(Dialect::Mysql, "schema.hcl", hcl).expect_err("refused");
    assert!(err.to_string().contains("PARTITION BY"), "{err}");
}

#[test]
fn a_sub_partitions_key_attaches_to_its_parents_attached_key() {
    // pg_dump 15 of ev (a key) > ev2 (partitioned itself) > ev2a.
    let text = "CREATE TABLE public.ev (\n    id integer NOT NULL,\n    at integer NOT NULL\n)\nPARTITION BY RANGE (at);
CREATE TABLE public.ev2 (\n    id integer NOT NULL,\n    at integer NOT NULL\n)\nPARTITION BY RANGE (id);
CREATE TABLE public.ev2a (\n    id integer NOT NULL,\n    at integer NOT NULL\n);
ALTER TABLE ONLY public.ev ATTACH PARTITION public.ev2 FOR VALUES FROM (10) TO (20);
ALTER TABLE ONLY public.ev2 ATTACH PARTITION public.ev2a FOR VALUES FROM (0) TO (100);
ALTER TABLE ONLY public.ev\n    ADD CONSTRAINT ev_pkey PRIMARY KEY (id, at);
ALTER TABLE ONLY public.ev2\n    ADD CONSTRAINT ev2_pkey PRIMARY KEY (id, at);
ALTER TABLE ONLY public.ev2a\n    ADD CONSTRAINT ev2a_pkey PRIMARY KEY (id, at);
ALTER INDEX public.ev_pkey ATTACH PARTITION public.ev2_pkey;
ALTER INDEX public.ev2_pkey ATTACH PARTITION public.ev2a_pkey;
";
    let s = parse(PG, "ev.sql", text).unwrap_or_else(|e| panic!("{e}"));
    let t = |n: &str| &s.tables[&QualifiedName::new("public", n)];
    assert!(t("ev").primary_key.is_some());
    assert_eq!(t("ev2").primary_key, None);
    assert_eq!(t("ev2a").primary_key, None);
}
