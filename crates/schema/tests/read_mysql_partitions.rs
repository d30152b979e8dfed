//! MySQL/MariaDB `PARTITION BY` in the SQL reader: `mariadb-dump` output (the clause in a
//! `/*!50100 … */` comment, `ENGINE = InnoDB` on each partition) and a hand-written clause read to
//! one canonical text; a changed partitioning is refused by the planner, sub-partitions by the
//! reader.

use ptah_schema::read::ReadError;
use ptah_schema::read::sql::parse;
use ptah_schema::{Dialect, PlanError, PlanOptions, QualifiedName, Schema, plan};

const MY: Dialect = Dialect::Mysql;

fn read(text: &str) -> Schema {
    parse(MY, "d.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

fn key(s: &Schema) -> Option<String> {
    s.tables[&QualifiedName::new("", "logs")].partition_by.clone()
}

const DUMPED: &str = "CREATE TABLE `logs` (
  `id` int(11) NOT NULL,
  `at` date NOT NULL,
  PRIMARY KEY (`id`,`at`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci
/*!50100 PARTITION BY RANGE (year(`at`))
(PARTITION `p2024` VALUES LESS THAN (2025) ENGINE = InnoDB,
 PARTITION `pmax` VALUES LESS THAN MAXVALUE ENGINE = InnoDB) */;";

#[test]
fn a_dump_and_a_hand_written_clause_read_the_same() {
    let hand = read(
        "CREATE TABLE logs (id int NOT NULL, at date NOT NULL, PRIMARY KEY (id, at)) \
         PARTITION BY RANGE (YEAR(at)) (PARTITION p2024 VALUES LESS THAN (2025), PARTITION pmax VALUES LESS THAN MAXVALUE);",
    );
    let dumped = read(DUMPED);
    assert_eq!(key(&hand), key(&dumped));
    assert_eq!(
        key(&dumped).as_deref(),
        Some(
            "PARTITION BY RANGE (year(`at`)) (PARTITION `p2024` VALUES LESS THAN (2025), PARTITION `pmax` VALUES LESS THAN MAXVALUE)"
        )
    );
    let hashed = read("CREATE TABLE logs (id int) PARTITION BY LINEAR HASH (id) PARTITIONS 3;");
    assert_eq!(
        key(&hashed).as_deref(),
        Some("PARTITION BY LINEAR HASH (`id`) PARTITIONS 3")
    );
}

#[test]
fn a_changed_partitioning_is_refused_by_the_planner() {
    let live = read(DUMPED);
    let want = read(&DUMPED.replace("(2025)", "(2026)"));
    match plan(&want, &live, MY, &PlanOptions::default()) {
        Err(PlanError::PartitionKeyChanged { table, .. }) => assert_eq!(table, "logs"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(
        plan(&live, &live, MY, &PlanOptions::default())
            .expect("plans")
            .is_empty()
    );
}

#[test]
fn sub_partitions_are_refused_by_name() {
    let text = "CREATE TABLE logs (id int, at date) PARTITION BY RANGE (YEAR(at)) SUBPARTITION BY HASH (id) \
                SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (2025), PARTITION p1 VALUES LESS THAN MAXVALUE);";
    match parse(MY, "d.sql", text) {
        Err(ReadError::Unsupported { what, .. }) => assert!(what.contains("SUBPARTITION"), "{what}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
