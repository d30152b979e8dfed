//! Pure selection rules: checkpoints, dirty rows, expected sequences.

use ptah_migrate::{
    Directory, Error, ExecOrder, Revision, SequenceEntry, TxMode, Version, check_expected, parse_expected,
    read,
};

fn dir(names: &[&str]) -> Directory {
    let files = names
        .iter()
        .flat_map(|n| {
            [
                (format!("{n}.up.sql"), format!("-- {n}\nSELECT 1;").into_bytes()),
                (format!("{n}.down.sql"), b"SELECT 1;".to_vec()),
            ]
        })
        .collect();
    Directory::from_files("mem", files, None).expect("directory")
}

fn row(version: i64, state: &str, checksum: &str) -> Revision {
    Revision {
        version: Version(version),
        description: String::new(),
        applied_at: String::new(),
        state: state.into(),
        applied: 1,
        total: 1,
        error: None,
        error_stmt: None,
        execution_time_ms: 0,
        checksum: checksum.into(),
    }
}

fn pending(d: &Directory, rows: &[Revision]) -> Vec<i64> {
    read(d.migrations(), rows)
        .pending
        .iter()
        .map(|m| m.version.0)
        .collect()
}

#[test]
fn an_empty_table_starts_at_the_newest_checkpoint_and_a_used_one_ignores_them() {
    let d = dir(&[
        "0000000001_a",
        "0000000002_squash.checkpoint",
        "0000000003_b",
        "0000000004_squash2.checkpoint",
        "0000000005_c",
    ]);
    assert_eq!(pending(&d, &[]), [4, 5], "empty: newest checkpoint and later");
    let applied = |v: i64| row(v, "applied", &d.get(Version(v)).expect("file").checksum());
    assert_eq!(
        pending(&d, &[applied(1)]),
        [3, 5],
        "non-empty: checkpoints are ignored"
    );
    assert_eq!(
        pending(&d, &[applied(4)]),
        [5],
        "versions below an applied checkpoint are covered"
    );
}

#[test]
fn dirty_rows_and_modified_files_block_selection() {
    let d = dir(&["0000000001_a", "0000000002_b"]);
    let sum1 = d.get(Version(1)).expect("file").checksum();
    let rows = [row(1, "applied", &sum1), row(2, "pending", "")];
    let err = read(d.migrations(), &rows)
        .select(ExecOrder::Linear, None)
        .expect_err("dirty");
    assert!(
        matches!(
            err,
            Error::Dirty {
                version: Version(2),
                ..
            }
        ),
        "{err}"
    );
    let rows = [row(1, "applied", "0".repeat(64).as_str())];
    let err = read(d.migrations(), &rows)
        .select(ExecOrder::Linear, None)
        .expect_err("modified");
    assert!(matches!(err, Error::Modified { version: Version(1) }), "{err}");
    let rows = [row(1, "applied", "")];
    let sel = read(d.migrations(), &rows)
        .select(ExecOrder::Linear, Some(5))
        .expect("unknown checksum");
    assert_eq!(sel.len(), 1);
}

#[test]
fn expected_sequences_compare_exactly_and_parse_both_shapes() {
    let e = |v: i64, c: &str, t: TxMode| SequenceEntry {
        version: Version(v),
        checksum: c.into(),
        transaction: t,
    };
    let approved = vec![e(1, "aa", TxMode::File), e(2, "bb", TxMode::File)];
    check_expected(&approved, &approved).expect("same");
    let mode =
        check_expected(&approved, &[e(1, "aa", TxMode::File), e(2, "bb", TxMode::None)]).expect_err("mode");
    assert!(mode.to_string().contains("transaction mode"), "{mode}");
    let empty = check_expected(&approved, &[]).expect_err("shorter");
    assert!(
        empty.to_string().contains("expected 2 migrations, found 0"),
        "{empty}"
    );
    let list = r#"[{"version":1,"checksum":"aa","transaction":"file"},{"version":2,"checksum":"bb","transaction":"file"}]"#;
    assert_eq!(parse_expected(list).expect("list"), approved);
    let doc = format!(r#"{{"format_version":1,"pending_sequence":{list}}}"#);
    assert_eq!(parse_expected(&doc).expect("status document"), approved);
    for bad in [
        "",
        "{}",
        r#"[{"version":1}]"#,
        r#"[{"version":1,"checksum":"a","transaction":"all"}]"#,
    ] {
        assert!(
            matches!(parse_expected(bad), Err(Error::InvalidExpectedSequence(_))),
            "{bad}"
        );
    }
}
