//! The directory reader on names written for golang-migrate, goose and dbmate: numeric order,
//! the digits as written, colliding versions, and single files holding both directions.

use ptah_migrate::{Directory, Error, Migration, Version};

fn f(p: &str) -> (String, Vec<u8>) {
    (p.to_owned(), b"SELECT 1;".to_vec())
}

#[test]
fn versions_of_any_width_sort_numerically() {
    let dir = Directory::from_files(
        "x",
        vec![
            f("10_ten.up.sql"),
            f("10_ten.down.sql"),
            f("9_nine.up.sql"),
            f("9_nine.down.sql"),
            f("000100_hundred.up.sql"),
            f("000100_hundred.down.sql"),
            f("schema.sql"),
        ],
        None,
    )
    .expect("read");
    let shown: Vec<String> = dir.migrations().iter().map(Migration::shown_version).collect();
    assert_eq!(shown, ["9", "10", "000100"]);
    let err = Directory::from_files(
        "x",
        vec![
            f("1_a.up.sql"),
            f("1_a.down.sql"),
            f("01_b.up.sql"),
            f("01_b.down.sql"),
        ],
        None,
    )
    .expect_err("equal versions");
    assert!(
        matches!(
            err,
            Error::VersionCollision {
                version: Version(1),
                ..
            }
        ),
        "{err}"
    );
    let err = Directory::from_files("x", vec![f("1_a.up.sql"), f("01_a.down.sql")], None)
        .expect_err("halves written differently");
    assert!(matches!(err, Error::VersionCollision { .. }), "{err}");
}

#[test]
fn single_files_hold_both_directions() {
    let goose = (
        "20230101120000_users.sql".to_owned(),
        b"-- +goose Up\nCREATE TABLE u (id int);\n-- +goose Down\nDROP TABLE u;\n".to_vec(),
    );
    let dir = Directory::from_files("x", vec![goose.clone()], None).expect("goose file");
    let m = &dir.migrations()[0];
    assert!(m.is_single_file());
    assert_eq!(m.shown_version(), "20230101120000");
    assert_eq!(dir.files().len(), 1, "ptah.sum lists the file once");
    let err = Directory::from_files("x", vec![f("3_plain.sql")], None).expect_err("no sections");
    assert!(matches!(err, Error::Header { .. }), "{err}");
    let mut both = goose;
    both.0 = "20230101120000_users.up.sql".into();
    let err = Directory::from_files(
        "x",
        vec![
            both,
            f("20230101120000_users.down.sql"),
            (
                "20230101120000_users.sql".into(),
                b"-- migrate:up\nSELECT 1;\n".to_vec(),
            ),
        ],
        None,
    )
    .expect_err("a pair and a single file");
    assert!(matches!(err, Error::DuplicateVersion { .. }), "{err}");
}
