//! Long whitespace runs: a 16 MiB migration file of blanks splits into what it holds. (A MySQL
//! split once looked back over the whole run of blanks at every blank, so such a file never
//! finished; its speed is the `cargo xtask bench split` figure, not a timed test.)

use ptah_engine::Dialect;
use ptah_migrate::{Statement, split};

const SIXTEEN_MIB: usize = 16 * 1024 * 1024;

/// 16 MiB of spaces and tabs on one line, the run a backward look-up scans furthest.
fn blanks() -> String {
    " \t".repeat(SIXTEEN_MIB / 2)
}

fn split_both(sql: &str) -> [Vec<Statement>; 2] {
    [Dialect::Mysql, Dialect::Postgres].map(|d| split(sql, d).expect("splits"))
}

#[test]
fn sixteen_mib_of_blanks_hold_no_statement() {
    for got in split_both(&blanks()) {
        assert_eq!(got, vec![]);
    }
}

#[test]
fn sixteen_mib_of_newlines_hold_no_statement() {
    for got in split_both(&"\n".repeat(SIXTEEN_MIB)) {
        assert_eq!(got, vec![]);
    }
}

#[test]
fn a_statement_after_sixteen_mib_of_blanks_is_found_with_its_line() {
    let same_line = format!("{}CREATE TABLE t (id int);", blanks());
    for got in split_both(&same_line) {
        let want = Statement {
            sql: "CREATE TABLE t (id int)".to_owned(),
            line: 1,
        };
        assert_eq!(got, vec![want]);
    }
    let next_line = format!("{}\r\n\n  SELECT 1;\n{}", blanks(), blanks());
    for got in split_both(&next_line) {
        let want = Statement {
            sql: "SELECT 1".to_owned(),
            line: 3,
        };
        assert_eq!(got, vec![want]);
    }
}

#[test]
fn a_delimiter_directive_after_sixteen_mib_of_blanks_still_counts() {
    let sql = format!("{}DELIMITER $$\nSELECT 1; SELECT 2$$\n{}", blanks(), blanks());
    let got = split(&sql, Dialect::Mysql).expect("splits");
    let want = Statement {
        sql: "SELECT 1; SELECT 2".to_owned(),
        line: 2,
    };
    assert_eq!(got, vec![want]);
}

#[test]
fn a_vertical_tab_or_a_no_break_space_never_makes_an_empty_statement() {
    for dialect in [Dialect::Postgres, Dialect::Mysql] {
        let vt = split("SELECT 1;\u{0b}", dialect).expect("splits");
        assert_eq!(
            vt.iter().map(|s| s.sql.as_str()).collect::<Vec<_>>(),
            ["SELECT 1"],
            "{dialect:?}"
        );
        let nbsp = split("SELECT 1;\u{a0}", dialect).expect("splits");
        assert!(nbsp.iter().all(|s| !s.sql.is_empty()), "{dialect:?}: {nbsp:?}");
    }
}
