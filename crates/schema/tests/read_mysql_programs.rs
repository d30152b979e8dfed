//! MySQL/MariaDB views and triggers in the SQL reader: real `mariadb-dump --no-data` output
//! (MariaDB 10.11, in `data/`) and the clauses refused by name.

use ptah_schema::read::sql::parse_document;
use ptah_schema::read::{Document, IgnoreReason, ReadError};
use ptah_schema::{Dialect, QualifiedName};

const MY: Dialect = Dialect::Mysql;

fn read(text: &str) -> Document {
    parse_document(MY, "dump.sql", text).unwrap_or_else(|e| panic!("reads: {e}\n{text}"))
}

fn refusal(text: &str) -> (String, usize, usize) {
    match parse_document(MY, "dump.sql", text) {
        Err(ReadError::Unsupported { at, what }) => (what, at.line, at.column),
        other => panic!("{text}: expected a refusal, got {other:?}"),
    }
}

fn q(name: &str) -> QualifiedName {
    QualifiedName::new("", name)
}

#[test]
fn a_mariadb_dump_reads_its_final_views_and_its_triggers() {
    let doc = read(include_str!("data/mariadb_programs.sql"));
    let s = &doc.schema;
    assert_eq!(s.views.len(), 2);
    assert_eq!(
        s.views[&q("v")].definition,
        "select `t`.`a` AS `a`,`t`.`b` + 1 AS `b1` from `t` where `t`.`a` <> 'x;y'"
    );
    assert_eq!(s.views[&q("vv")].definition, "select `v`.`a` AS `a` from `v`");
    let names: Vec<&str> = s.triggers.values().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["trg_ai", "trg_bi"]);
    assert_eq!(
        s.triggers[&q("t.trg_bi")].definition,
        "CREATE TRIGGER `trg_bi` BEFORE INSERT ON `t` FOR EACH ROW SET NEW.a = UPPER(NEW.a)"
    );
    assert_eq!(
        s.triggers[&q("t.trg_ai")].definition,
        "CREATE TRIGGER `trg_ai` AFTER INSERT ON `t` FOR EACH ROW BEGIN\n  \
         INSERT INTO log (msg) VALUES (CONCAT('ins;', NEW.id));\nEND"
    );
    assert_eq!(s.triggers[&q("t.trg_ai")].table, q("t"));
    // Two triggers and two views each report their definer; the views their two defaults.
    let defaults = doc
        .ignored
        .iter()
        .filter(|i| i.reason == IgnoreReason::DefinerOrDefault)
        .map(|i| i.statement.as_str())
        .collect::<Vec<_>>();
    assert_eq!(defaults.len(), 2 + 2 * 3, "{defaults:?}");
    assert!(defaults.contains(&"ALGORITHM=UNDEFINED"), "{defaults:?}");
    assert!(defaults.contains(&"SQL SECURITY DEFINER"), "{defaults:?}");
}

#[test]
fn a_later_drop_view_if_exists_and_create_view_leave_the_final_definition() {
    let doc = read(
        "CREATE TABLE t (a int);\nCREATE VIEW v AS SELECT 1 AS a;\nDROP VIEW IF EXISTS v;\n\
         CREATE VIEW `v` AS select `t`.`a` AS `a` from `t`;\n",
    );
    assert_eq!(
        doc.schema.views[&q("v")].definition,
        "select `t`.`a` AS `a` from `t`"
    );
    assert!(doc.ignored.is_empty(), "{:?}", doc.ignored);
}

#[test]
fn a_hand_written_view_and_trigger_keep_their_text() {
    let doc = read(
        "CREATE TABLE t (a int);\nCREATE OR REPLACE VIEW v AS\n  SELECT a FROM t ;\n\
         CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW\n  SET @n = @n + 1;\n",
    );
    assert_eq!(doc.schema.views[&q("v")].definition, "SELECT a FROM t");
    assert_eq!(
        doc.schema.triggers[&q("t.tr")].definition,
        "CREATE TRIGGER `tr` AFTER DELETE ON `t` FOR EACH ROW SET @n = @n + 1"
    );
}

#[test]
fn view_column_lists_and_trigger_order_are_refused_by_name_where_written() {
    let table = "CREATE TABLE t (a int);\n";
    for (text, says, line, column) in [
        ("CREATE VIEW v (x) AS SELECT a FROM t", "column list", 2, 15),
        (
            "CREATE TRIGGER b BEFORE UPDATE ON t FOR EACH ROW FOLLOWS a SET NEW.a = 1",
            "FOLLOWS",
            2,
            50,
        ),
    ] {
        let (what, l, c) = refusal(&format!("{table}{text};"));
        assert!(what.contains(says), "{text}: {what}");
        assert_eq!((l, c), (line, column), "{text}: {what}");
    }
}

#[test]
fn view_options_are_read_as_written() {
    let doc = read(
        "CREATE TABLE t (a int);\n\
         /*!50001 CREATE ALGORITHM=MERGE */\n/*!50013 DEFINER=`app`@`%` SQL SECURITY INVOKER */\n\
         /*!50001 VIEW `v` AS select `t`.`a` AS `a` from `t` */\n/*!50002 WITH CASCADED CHECK OPTION */;\n\
         CREATE VIEW w AS SELECT a FROM t WITH LOCAL CHECK OPTION;\n\
         CREATE ALGORITHM=UNDEFINED SQL SECURITY DEFINER VIEW x AS SELECT 1 AS a;",
    );
    let s = &doc.schema;
    assert_eq!(s.views[&q("v")].definition, "select `t`.`a` AS `a` from `t`");
    let v = &s.view_options["v"];
    assert_eq!(v.algorithm.as_deref(), Some("MERGE"));
    assert!(v.security_invoker);
    assert_eq!(v.check_option.as_deref(), Some("CASCADED"));
    assert_eq!(s.views[&q("w")].definition, "SELECT a FROM t");
    assert_eq!(s.view_options["w"].check_option.as_deref(), Some("LOCAL"));
    assert!(!s.view_options.contains_key("x"), "the defaults need no entry");
}

#[test]
fn duplicates_and_missing_tables_are_errors() {
    let dup = parse_document(
        MY,
        "d.sql",
        "CREATE TABLE t (a int);\nCREATE VIEW v AS SELECT 1;\nCREATE VIEW v AS SELECT 2;",
    );
    assert!(matches!(dup, Err(ReadError::Duplicate { .. })), "{dup:?}");
    let clash = parse_document(MY, "d.sql", "CREATE TABLE t (a int);\nCREATE VIEW t AS SELECT 1;");
    assert!(matches!(clash, Err(ReadError::Duplicate { .. })), "{clash:?}");
    let missing = parse_document(
        MY,
        "d.sql",
        "CREATE TRIGGER x BEFORE INSERT ON nope FOR EACH ROW SET @a = 1;",
    );
    assert!(
        matches!(missing, Err(ReadError::BadReference { .. })),
        "{missing:?}"
    );
}

/// Found by the schema_sql fuzz campaign: under `DELIMITER ;;` a trigger that runs to the end of
/// the file keeps its last `;`, which HCL dropped, so the SQL and HCL readers disagreed.
#[test]
fn a_trigger_running_to_the_end_of_the_file_reads_back_from_hcl_unchanged() {
    let doc = read(
        "CREATE TABLE `t` (`a` int);\nDELIMITER ;;\n\
         CREATE TRIGGER `trg` BEFORE INSERT ON `t` FOR EACH ROW SET NEW.a = 1 ; ;\n",
    );
    let definition = &doc.schema.triggers[&q("t.trg")].definition;
    assert_eq!(
        definition,
        "CREATE TRIGGER `trg` BEFORE INSERT ON `t` FOR EACH ROW SET NEW.a = 1"
    );
    let written = ptah_schema::write::hcl::to_hcl(MY, &doc.schema);
    let back = ptah_schema::read::hcl::parse(MY, "schema.hcl", &written)
        .unwrap_or_else(|e| panic!("reads back: {e}\n{written}"));
    assert!(
        back == doc.schema,
        "SQL → HCL → model changed the model:\n{written}"
    );
}
