//! MySQL compound statements written without `DELIMITER`, as files for golang-migrate, goose and
//! dbmate are: one statement each, exactly as the same file with a `DELIMITER` splits.

use proptest::prelude::*;
use ptah_engine::Dialect;
use ptah_migrate::split;

fn statements(sql: &str) -> Vec<String> {
    split(sql, Dialect::Mysql)
        .unwrap_or_else(|e| panic!("{e:?} in\n{sql}"))
        .into_iter()
        .map(|s| s.sql)
        .collect()
}

#[test]
fn routines_without_delimiter_are_one_statement_each() {
    let sql = "CREATE TABLE t (a INT);\n\
               CREATE PROCEDURE p()\nBEGIN\n  DECLARE x INT DEFAULT 0;\n  l: LOOP\n    SET x = x + 1;\n    \
               IF x > 3 THEN LEAVE l; END IF;\n  END LOOP l;\nEND;\n\
               CALL p();\n\
               CREATE FUNCTION f(a INT) RETURNS INT DETERMINISTIC RETURN IF(a > 0, a, 0);\n\
               CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW\n  IF NEW.a < 0 THEN SET NEW.a = 0; END IF;\n\
               CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO BEGIN DELETE FROM t; END;\n\
               BEGIN NOT ATOMIC SELECT 1; SELECT 2; END;\n\
               BEGIN;\nINSERT INTO t VALUES (1);\nCOMMIT;\n";
    let got = statements(sql);
    let heads: Vec<&str> = got
        .iter()
        .map(|s| s.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        heads,
        [
            "CREATE", "CREATE", "CALL", "CREATE", "CREATE", "CREATE", "BEGIN", "BEGIN", "INSERT", "COMMIT"
        ],
        "{got:#?}"
    );
    assert!(got[1].ends_with("END LOOP l;\nEND"), "{}", got[1]);
    assert!(got[4].ends_with("END IF"), "{}", got[4]);
    let lines: Vec<usize> = split(sql, Dialect::Mysql)
        .expect("splits")
        .iter()
        .map(|s| s.line)
        .collect();
    assert_eq!(&lines[..3], [1, 2, 10]);
}

#[test]
fn an_if_with_a_parenthesised_condition_opens_a_block_where_a_statement_starts() {
    let sql = "/* once */\nCREATE PROCEDURE m ()\nBEGIN\n\tIF(SELECT EXISTS(SELECT 1 FROM s) = 0) THEN\n\t\t\
               INSERT INTO s VALUES ('done', IF(1, 'a', 'b'));\n\tEND IF;\nEND;\n\tCALL m ();\n\tDROP PROCEDURE IF EXISTS m;\n";
    let got = statements(sql);
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].starts_with("CREATE PROCEDURE m ()") && got[0].ends_with("END IF;\nEND"));
}

#[test]
fn a_body_that_never_ends_is_an_error_at_its_start() {
    let err = split(
        "SELECT 1;\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\n",
        Dialect::Mysql,
    )
    .expect_err("no END");
    assert_eq!(err.line, 2);
    assert!(err.reason.contains("compound statement"), "{}", err.reason);
}

#[test]
fn names_and_functions_that_look_like_blocks_do_not_open_one() {
    let sql = "CREATE TABLE event (begin INT, `end` INT);\n\
               SELECT CASE WHEN 1 THEN 2 END FROM event;\n\
               CREATE VIEW v AS SELECT REPEAT('x', 2) AS r;\n";
    assert_eq!(statements(sql).len(), 3);
}

fn body() -> impl Strategy<Value = String> {
    let leaf = prop::sample::select(vec![
        "SET x = x + 1;",
        "SELECT IF(x > 1, 'a;b', \"c;\") INTO y;",
        "INSERT INTO t VALUES ('it\\'s; END; ok');",
        "DROP TABLE IF EXISTS tmp;",
        "SET y = CASE WHEN x THEN 1 ELSE 2 END;",
        "SET z = REPEAT('a', 3);",
        "-- END IF; in a comment\nSET x = 0;",
        "/* END; */ SET x = 1;",
        "SELECT `end`, `if` FROM t LIMIT 1 INTO @a, @b;",
    ])
    .prop_map(str::to_owned);
    leaf.prop_recursive(3, 24, 4, |inner| {
        let list = prop::collection::vec(inner, 1..4).prop_map(|v| v.join("\n"));
        (list.clone(), list, 0..8usize).prop_map(|(a, b, kind)| match kind {
            0 => format!("IF x > 0 THEN\n{a}\nELSEIF x < 0 THEN\n{b}\nELSE\n{a}\nEND IF;"),
            1 => format!("lbl: LOOP\n{a}\nLEAVE lbl;\nEND LOOP lbl;"),
            2 => format!("WHILE x < 3 DO\n{a}\nEND WHILE;"),
            3 => format!("REPEAT\n{a}\nUNTIL x > 3 END REPEAT;"),
            4 => format!("CASE x WHEN 1 THEN\n{a}\nELSE\n{b}\nEND CASE;"),
            5 => format!("BEGIN\n{a}\nEND;"),
            6 => format!("blk: BEGIN\n{a}\nEND blk;"),
            _ => format!("IF x THEN\n{a}\nELSE IF y THEN\n{b}\nEND IF;\nEND IF;"),
        })
    })
}

fn head() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "CREATE PROCEDURE p()",
        "CREATE DEFINER=`root`@`%` PROCEDURE p(IN a INT)",
        "CREATE OR REPLACE DEFINER = CURRENT_USER() PROCEDURE p()",
        "CREATE FUNCTION f() RETURNS INT DETERMINISTIC",
        "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW",
        "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO",
    ])
}

proptest! {
    #[test]
    fn without_delimiter_splits_as_with_one(head in head(), body in body(), labelled in any::<bool>()) {
        let routine = if labelled {
            format!("{head}\nmain: BEGIN\n{body}\nEND main")
        } else {
            format!("{head}\nBEGIN\n{body}\nEND")
        };
        let plain = format!("SELECT 1;\n{routine};\nSELECT 2;\n");
        let delimited = format!("SELECT 1;\nDELIMITER $$\n{routine}$$\nDELIMITER ;\nSELECT 2;\n");
        let got = statements(&plain);
        prop_assert_eq!(&got, &statements(&delimited));
        prop_assert_eq!(got, vec!["SELECT 1".to_owned(), routine, "SELECT 2".to_owned()]);
    }
}
