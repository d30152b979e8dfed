//! The statement splitter: a corpus of tricky files per dialect, and properties on random input.

use proptest::prelude::*;
use ptah_engine::Dialect;
use ptah_migrate::{PieceKind, pieces, split};

fn corpus(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"))).expect("corpus")
}

fn heads(sql: &str, dialect: Dialect) -> Vec<(usize, String)> {
    split(sql, dialect)
        .expect("splits")
        .into_iter()
        .map(|s| (s.line, s.sql.chars().take(24).collect()))
        .collect()
}

#[test]
fn postgres_functions_triggers_and_atomic_bodies() {
    let sql = corpus("pg_functions.sql");
    let got = heads(&sql, Dialect::Postgres);
    let want: Vec<(usize, String)> = [
        (3, "CREATE FUNCTION touch_up"),
        (11, "CREATE TRIGGER invoices_"),
        (15, "INSERT INTO notes (body)"),
        (17, "CREATE FUNCTION add_one("),
        (22, "CREATE PROCEDURE log_twi"),
        (28, "SELECT \"odd;name\" FROM \""),
    ]
    .into_iter()
    .map(|(l, s)| (l, s.to_owned()))
    .collect();
    assert_eq!(got, want);
    let all = split(&sql, Dialect::Postgres).expect("splits");
    assert!(all[0].sql.ends_with("END;\n$fn$"), "{}", all[0].sql);
    assert!(all[3].sql.ends_with("END"), "{}", all[3].sql);
    assert!(all[4].sql.contains("';again');\nEND"), "{}", all[4].sql);
}

#[test]
fn mysql_procedures_with_delimiter() {
    let sql = corpus("mysql_procedures.sql");
    let got = heads(&sql, Dialect::Mysql);
    let want: Vec<(usize, String)> = [
        (2, "CREATE TABLE notes (id I"),
        (5, "CREATE PROCEDURE add_not"),
        (13, "INSERT INTO notes (body)"),
        (16, "CREATE TRIGGER notes_bi "),
        (22, "SELECT body AS `odd;name"),
        (23, "CALL add_note('hello; wo"),
    ]
    .into_iter()
    .map(|(l, s)| (l, s.to_owned()))
    .collect();
    assert_eq!(got, want);
    let all = split(&sql, Dialect::Mysql).expect("splits");
    assert!(all[1].sql.ends_with("again'));\nEND"), "{}", all[1].sql);
    assert!(all[3].sql.ends_with("TRIM(NEW.body);\nEND"), "{}", all[3].sql);
    let directives = pieces(&sql, Dialect::Mysql)
        .expect("pieces")
        .iter()
        .filter(|p| p.kind == PieceKind::Directive)
        .count();
    assert_eq!(directives, 4);
}

#[test]
fn dialects_differ_where_they_should() {
    // Backslash is not an escape in a standard PostgreSQL string, but is in MySQL.
    let sql = r"SELECT 'a\'; SELECT 2;";
    assert_eq!(split(sql, Dialect::Postgres).expect("pg").len(), 2);
    assert_eq!(
        split(sql, Dialect::Mysql)
            .expect_err("mysql: the quote never closes")
            .line,
        1
    );
    // An E-string escapes; an identifier ending in e does not make one.
    assert_eq!(
        split(r"SELECT E'\'; x'; SELECT 2", Dialect::Postgres)
            .expect("pg")
            .len(),
        2
    );
    assert_eq!(
        split(r"SELECT some'\'; SELECT 2", Dialect::Postgres)
            .expect("pg")
            .len(),
        2
    );
    // `#` starts a comment only in MySQL; `--x` is not a comment in MySQL.
    assert_eq!(split("SELECT 1 # ;\n;", Dialect::Mysql).expect("mysql").len(), 1);
    assert_eq!(
        split("SELECT 1 --x;\nSELECT 2", Dialect::Mysql)
            .expect("mysql")
            .len(),
        2
    );
    // Positional parameters are not dollar quotes.
    assert_eq!(
        split("PREPARE p AS SELECT $1; SELECT 2", Dialect::Postgres)
            .expect("pg")
            .len(),
        2
    );
    // A transaction BEGIN is not an atomic body.
    assert_eq!(
        split("BEGIN; SELECT 1; COMMIT;", Dialect::Postgres)
            .expect("pg")
            .len(),
        3
    );
    // Comment-only and empty statements are dropped.
    assert!(
        split("  ;; -- nothing\n/* here */ ;", Dialect::Postgres)
            .expect("pg")
            .is_empty()
    );
}

#[test]
fn unterminated_constructs_are_errors_with_their_line() {
    for (sql, dialect, line) in [
        ("SELECT 1;\nSELECT 'open", Dialect::Postgres, 2),
        ("SELECT 1;\n\nSELECT $x$ open $y$", Dialect::Postgres, 3),
        ("/* open /* nested */", Dialect::Postgres, 1),
        (
            "SELECT 1;\nCREATE FUNCTION f() RETURNS int LANGUAGE SQL\nBEGIN ATOMIC SELECT 1;",
            Dialect::Postgres,
            2,
        ),
        ("SELECT `open", Dialect::Mysql, 1),
        ("SELECT 1;\nDELIMITER\n", Dialect::Mysql, 2),
    ] {
        let err = split(sql, dialect).expect_err(sql);
        assert_eq!(err.line, line, "{sql}: {err:?}");
    }
    // MySQL comments do not nest, so this one is closed.
    assert_eq!(
        split("/* a /* b */ SELECT 1", Dialect::Mysql)
            .expect("closed")
            .len(),
        1
    );
}

fn sql_alphabet() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        ";",
        "'",
        "\"",
        "`",
        "$",
        "$$",
        "$a$",
        "E'",
        "\\",
        "--",
        "#",
        "/*",
        "*/",
        "\n",
        " ",
        "BEGIN",
        "ATOMIC",
        "END",
        "CASE",
        "DELIMITER ",
        "//",
        "x",
        "1",
        "é",
        "\t",
        "-- ",
        "e",
    ]);
    prop::collection::vec(atoms, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn never_panics_and_pieces_partition_the_input(
        sql in prop_oneof![sql_alphabet(), any::<String>()],
        mysql in any::<bool>(),
    ) {
        let dialect = if mysql { Dialect::Mysql } else { Dialect::Postgres };
        let Ok(pieces) = pieces(&sql, dialect) else { return Ok(()); };
        let mut at = 0;
        let mut without_separators = String::new();
        for p in &pieces {
            prop_assert_eq!(p.range.start, at, "pieces are contiguous");
            prop_assert!(p.range.end > p.range.start, "no empty piece");
            let text = sql.get(p.range.clone()).expect("pieces end on char boundaries");
            if p.kind == PieceKind::Body {
                without_separators.push_str(text);
            } else {
                prop_assert!(p.first_code.is_none());
            }
            at = p.range.end;
        }
        prop_assert_eq!(at, sql.len(), "pieces cover the input");
        // Joining the statement bodies keeps every byte that is not a separator or directive.
        let mut expected = String::new();
        let mut last = 0;
        for p in pieces.iter().filter(|p| p.kind != PieceKind::Body) {
            expected.push_str(&sql[last..p.range.start]);
            last = p.range.end;
        }
        expected.push_str(&sql[last..]);
        prop_assert_eq!(&without_separators, &expected);
        let statements = split(&sql, dialect).expect("pieces succeeded, so split does");
        for s in &statements {
            prop_assert!(!s.sql.is_empty());
            prop_assert!(without_separators.contains(&s.sql), "a statement is a slice of a body");
        }
    }

    #[test]
    fn statements_joined_by_semicolons_split_back(
        parts in prop::collection::vec(prop::sample::select(vec![
            "SELECT 1", "SELECT ';'", "SELECT $q$ ; $q$", "SELECT \"a;b\"", "SELECT 1 /* ; */",
            "SELECT E'\\';'", "CREATE FUNCTION f() RETURNS int LANGUAGE SQL BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 1 END; END",
        ]), 1..8),
    ) {
        let sql = parts.join(";\n");
        let got: Vec<String> = split(&sql, Dialect::Postgres).expect("splits").into_iter().map(|s| s.sql).collect();
        prop_assert_eq!(got, parts.iter().map(|p| p.to_string()).collect::<Vec<_>>());
    }
}
