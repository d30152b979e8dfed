//! MySQL/MariaDB stored routines, events, view options, `ON UPDATE` defaults and restore-script
//! preambles in the SQL reader, as `mariadb-dump --no-data --routines --events` writes them, and
//! their round trip through canonical `schema.hcl`.

use ptah_schema::read::sql::parse_document;
use ptah_schema::read::{Document, IgnoreReason, ReadError};
use ptah_schema::write::hcl::to_hcl;
use ptah_schema::{DefaultValue, Dialect, QualifiedName, StoredRoutineKind};

const MY: Dialect = Dialect::Mysql;

fn read(dialect: Dialect, text: &str) -> Document {
    parse_document(dialect, "dump.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

const DUMP: &str = r"/*!50106 SET @save_time_zone= @@TIME_ZONE */ ;
CREATE TABLE `film` (
  `film_id` int(10) unsigned NOT NULL AUTO_INCREMENT,
  `title` varchar(100) NOT NULL,
  `last_update` timestamp(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
  `touched` datetime NULL ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`film_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
/*!50106 DROP EVENT IF EXISTS `ev_daily` */;
DELIMITER ;;
/*!50003 SET time_zone             = 'SYSTEM' */ ;;
/*!50106 CREATE*/ /*!50117 DEFINER=`app`@`%`*/ /*!50106 EVENT `ev_daily` ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 00:00:00' ON COMPLETION PRESERVE DISABLE COMMENT 'nightly' DO BEGIN DELETE FROM film WHERE film_id < 0; END 
*/ ;;
/*!50106 CREATE*/ /*!50117 DEFINER=`app`@`%`*/ /*!50106 EVENT `ev_once` ON SCHEDULE AT '2030-01-01 00:00:00' ON COMPLETION NOT PRESERVE ENABLE DO DELETE FROM film WHERE film_id < 0 
*/ ;;
DELIMITER ;
/*!50003 DROP FUNCTION IF EXISTS `get_title` */;
DELIMITER ;;
CREATE DEFINER=`app`@`%` FUNCTION `get_title`(p_id int) RETURNS varchar(100) CHARSET utf8mb4 COLLATE utf8mb4_general_ci
    READS SQL DATA
    DETERMINISTIC
    SQL SECURITY INVOKER
BEGIN
  DECLARE t VARCHAR(100);
  SELECT title INTO t FROM film WHERE film_id = p_id;
  RETURN t;
END
;;
DELIMITER ;
/*!50003 DROP PROCEDURE IF EXISTS `film_in_stock` */;
DELIMITER ;;
CREATE DEFINER=`root`@`localhost` PROCEDURE `film_in_stock`(IN p_film_id INT, IN p_store_id INT, OUT p_film_count INT)
    READS SQL DATA
    COMMENT 'how many'
BEGIN
     SELECT COUNT(*) INTO p_film_count FROM film WHERE film_id = p_film_id;
END ;;
DELIMITER ;
";

#[test]
fn routines_and_events_are_read_as_the_dump_writes_them() {
    let doc = read(MY, DUMP);
    let s = &doc.schema;
    let f = &s.stored_routines[&QualifiedName::new("", "function get_title")];
    assert_eq!(f.kind, StoredRoutineKind::Function);
    assert_eq!(f.parameters, "`p_id` int");
    assert_eq!(f.returns.as_deref(), Some("varchar(100)"));
    assert!(f.deterministic && f.security_invoker);
    assert_eq!(f.data_access.as_deref(), Some("READS SQL DATA"));
    assert!(
        f.body.starts_with("BEGIN\n  DECLARE t") && f.body.ends_with("END"),
        "{}",
        f.body
    );
    let p = &s.stored_routines[&QualifiedName::new("", "procedure film_in_stock")];
    assert_eq!(
        p.parameters,
        "IN `p_film_id` int, IN `p_store_id` int, OUT `p_film_count` int"
    );
    assert_eq!(p.comment.as_deref(), Some("how many"));
    assert!(!p.deterministic && !p.security_invoker && p.returns.is_none());
    let e = &s.events[&QualifiedName::new("", "ev_daily")];
    assert_eq!(e.schedule, "EVERY 1 DAY");
    assert_eq!(e.starts.as_deref(), Some("2030-01-01 00:00:00"));
    assert!(e.preserve);
    assert_eq!(e.status.as_deref(), Some("DISABLE"));
    assert_eq!(e.body, "BEGIN DELETE FROM film WHERE film_id < 0; END");
    let once = &s.events[&QualifiedName::new("", "ev_once")];
    assert_eq!(once.schedule, "AT '2030-01-01 00:00:00'");
    assert!(!once.preserve && once.status.is_none());
    // Every DEFINER is skipped and reported; the drops before each object are too.
    let definers = doc
        .ignored
        .iter()
        .filter(|i| i.reason == IgnoreReason::DefinerOrDefault && i.statement.starts_with("DEFINER"))
        .count();
    assert_eq!(definers, 4);
    let drops = doc
        .ignored
        .iter()
        .filter(|i| i.reason == IgnoreReason::UndeclaredDrop)
        .count();
    assert_eq!(drops, 3);
}

#[test]
fn on_update_is_held_with_the_default() {
    let s = read(MY, DUMP).schema;
    let film = &s.tables[&QualifiedName::new("", "film")];
    assert_eq!(
        film.column("last_update").and_then(|c| c.default.clone()),
        Some(DefaultValue::Expression(
            "current_timestamp(3) ON UPDATE current_timestamp(3)".to_owned()
        ))
    );
    assert_eq!(
        film.column("touched").and_then(|c| c.default.clone()),
        Some(DefaultValue::Expression(
            "NULL ON UPDATE current_timestamp()".to_owned()
        ))
    );
}

#[test]
fn the_canonical_hcl_reads_back_equal() {
    let s = read(
        MY,
        &format!(
            "{DUMP}\nCREATE ALGORITHM=TEMPTABLE SQL SECURITY INVOKER VIEW v AS SELECT 1 AS a WITH LOCAL CHECK OPTION;"
        ),
    )
    .schema;
    let hcl = to_hcl(MY, &s);
    let back = ptah_schema::read::hcl::parse(MY, "schema.hcl", &hcl).unwrap_or_else(|e| panic!("{e}\n{hcl}"));
    assert_eq!(back, s, "{hcl}");
    // A hand-written routine in HCL is brought to the canonical spelling.
    let hand = ptah_schema::read::hcl::parse(
        MY,
        "schema.hcl",
        "procedure \"p\" {\n  parameters = \"INOUT n INT(11), s VARCHAR(5) CHARSET latin1\"\n  as = \"SET n = n + 1\"\n}\n",
    )
    .expect("reads");
    let p = &hand.stored_routines[&QualifiedName::new("", "procedure p")];
    assert_eq!(p.parameters, "INOUT `n` int, IN `s` varchar(5)");
}

#[test]
fn a_preamble_for_the_document_s_own_database_is_skipped() {
    let doc = read(
        MY,
        "DROP SCHEMA IF EXISTS sakila;\nCREATE SCHEMA sakila;\nUSE sakila;\n\
         /*!40000 ALTER DATABASE `sakila` CHARACTER SET utf8mb4 */;\n\
         CREATE DATABASE /*!32312 IF NOT EXISTS*/ `sakila` /*!40100 DEFAULT CHARACTER SET utf8mb4 */;\n\
         CREATE TABLE t (a int);",
    );
    let skipped = doc
        .ignored
        .iter()
        .filter(|i| i.reason == IgnoreReason::TargetDatabase)
        .count();
    assert_eq!(skipped, 5);
    assert_eq!(doc.schema.tables.len(), 1);
}

#[test]
fn a_statement_about_another_database_is_refused() {
    for text in [
        "USE sakila;\nUSE other;",
        "CREATE DATABASE sakila;\nDROP DATABASE IF EXISTS other;",
        "DROP SCHEMA IF EXISTS sakila;\nCREATE SCHEMA other;",
    ] {
        match parse_document(MY, "dump.sql", text) {
            Err(ReadError::OtherDatabase {
                named, target, at, ..
            }) => {
                assert_eq!(
                    (named.as_str(), target.as_str(), at.line),
                    ("other", "sakila", 2),
                    "{text}"
                );
            }
            other => panic!("{text}: expected OtherDatabase, got {other:?}"),
        }
    }
}

#[test]
fn postgres_drops_a_schema_it_creates_next() {
    let doc = read(
        Dialect::Postgres,
        "DROP SCHEMA IF EXISTS app CASCADE;\nCREATE SCHEMA IF NOT EXISTS app;\nCREATE TABLE app.t (a int);",
    );
    assert!(doc.schema.namespaces.contains("app"));
    assert!(
        doc.ignored
            .iter()
            .any(|i| i.reason == IgnoreReason::TargetDatabase)
    );
    let declared = parse_document(
        Dialect::Postgres,
        "d.sql",
        "CREATE SCHEMA app;\nDROP SCHEMA IF EXISTS app CASCADE;",
    );
    assert!(
        matches!(declared, Err(ReadError::Unsupported { .. })),
        "{declared:?}"
    );
}

#[test]
fn starts_current_timestamp_is_a_starts_left_out() {
    let doc = read(
        MY,
        "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR STARTS CURRENT_TIMESTAMP DO SELECT 1;\n\
         CREATE EVENT f ON SCHEDULE EVERY 1 HOUR STARTS NOW() ENDS '2040-01-01' DO SELECT 1;",
    );
    let e = &doc.schema.events[&QualifiedName::new("", "e")];
    assert_eq!((e.starts.as_deref(), e.body.as_str()), (None, "SELECT 1"));
    let f = &doc.schema.events[&QualifiedName::new("", "f")];
    assert_eq!(
        (f.starts.as_deref(), f.ends.as_deref()),
        (None, Some("2040-01-01 00:00:00"))
    );
}

#[test]
fn a_schedule_computed_from_an_expression_is_refused() {
    let text = "CREATE EVENT e ON SCHEDULE AT CURRENT_TIMESTAMP + INTERVAL 1 HOUR DO SELECT 1";
    match parse_document(MY, "dump.sql", text) {
        Err(ReadError::Unsupported { what, .. }) => assert!(what.contains("not a literal"), "{what}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn excluded_routines_and_events_are_left_alone() {
    let live = read(MY, DUMP).schema;
    let mut desired = live.clone();
    desired.stored_routines.clear();
    desired.events.clear();
    let options = ptah_schema::PlanOptions {
        exclude: vec!["get_*".to_owned(), "film_in_stock".to_owned(), "ev_*".to_owned()],
        ..ptah_schema::PlanOptions::default()
    };
    let plan = ptah_schema::plan(&desired, &live, MY, &options).expect("plans");
    assert!(plan.is_empty(), "{:?}", plan.statements);
    let all = ptah_schema::plan(&desired, &live, MY, &ptah_schema::PlanOptions::default()).expect("plans");
    assert_eq!(all.statements.len(), 4, "{:?}", all.statements);
}
