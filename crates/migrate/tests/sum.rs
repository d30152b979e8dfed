//! `ptah.sum` against text computed independently with `sha256sum | xxd -r -p | base64`.

use std::path::{Path, PathBuf};

use ptah_migrate::{Directory, Error, SumCheck, SumFile, verify_directory};

/// Computed in a shell over `tests/fixtures/sumdir` (see the brief's recipe), not by this crate.
const EXPECTED: &str = "h1:wfR77OmsofRGi9ZQwaD0VPnZMt5OzwUn/CiXPClXLws=
1785255952_create_invoices.down.sql h1:q8bMX8N+42SzckgE33HkAA0W45SnUVkEgGEEEZeReLQ=
1785255952_create_invoices.up.sql h1:F0axxuCc/Lpo0ZEvJUfTt/PVbvkyhlJdvzPV1o9J2o4=
sub/1785300000_add index.down.sql h1:MZyipM6kuuBsmMrGcfAWfXAoc+E1uoBuyrYuHBtR578=
sub/1785300000_add index.up.sql h1:4COXsixgCHw7hJ1LUjLbMU6vaLXV/O9FFWjseT7fpl4=
";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sumdir")
}

fn copy_fixture(name: &str) -> PathBuf {
    let dest = std::env::temp_dir().join(format!("ptah-sum-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dest);
    std::fs::create_dir_all(dest.join("sub")).expect("mkdir");
    for f in [
        "1785255952_create_invoices.up.sql",
        "1785255952_create_invoices.down.sql",
        "sub/1785300000_add index.up.sql",
        "sub/1785300000_add index.down.sql",
        "README.md",
    ] {
        std::fs::copy(fixture().join(f), dest.join(f)).expect("copy");
    }
    dest
}

#[test]
fn computes_the_reference_text_byte_for_byte() {
    let dir = Directory::read(&fixture()).expect("read");
    assert_eq!(dir.migrations().len(), 2);
    assert_eq!(dir.migrations()[1].description, "add index");
    assert_eq!(SumFile::compute(&dir).render(), EXPECTED);
}

#[test]
fn parses_its_own_output_and_tolerates_crlf() {
    let dir = Directory::read(&fixture()).expect("read");
    let computed = SumFile::compute(&dir);
    assert_eq!(SumFile::parse(EXPECTED.as_bytes()).expect("parse"), computed);
    let crlf = EXPECTED.replace('\n', "\r\n");
    let parsed = SumFile::parse(crlf.as_bytes()).expect("crlf");
    parsed.verify(&computed).expect("crlf verifies");
    let no_trailing = EXPECTED.trim_end();
    SumFile::parse(no_trailing.as_bytes())
        .expect("no trailing newline")
        .verify(&computed)
        .expect("verifies");
}

#[test]
fn malformed_sums_are_usage_errors() {
    let lines: Vec<&str> = EXPECTED.lines().collect();
    let cases = [
        (
            "bad first line",
            format!("sha256:abc\n{}\n", lines[1..].join("\n")),
        ),
        (
            "short hash",
            EXPECTED.replace(
                "h1:q8bMX8N+42SzckgE33HkAA0W45SnUVkEgGEEEZeReLQ=",
                "h1:q8bMX8N+42Szck",
            ),
        ),
        (
            "not base64",
            EXPECTED.replace("h1:q8bMX8N+42SzckgE33HkAA0W45SnUVkEgGEEEZeReLQ=", "h1:!!!!"),
        ),
        (
            "no space",
            EXPECTED.replace(
                "1785255952_create_invoices.up.sql h1:",
                "1785255952_create_invoices.up.sqlh1:",
            ),
        ),
        ("duplicate", format!("{EXPECTED}{}\n", lines[1])),
        ("blank line", format!("{EXPECTED}\n\n")),
        ("empty", String::new()),
    ];
    for (what, text) in cases {
        let err = SumFile::parse(text.as_bytes()).expect_err(what);
        assert!(matches!(err, Error::SumMalformed { .. }), "{what}: {err}");
        assert!(err.is_usage(), "{what}: a malformed sum exits 2");
    }
}

#[test]
fn drift_names_the_file_and_is_not_a_usage_error() {
    let dest = copy_fixture("drift");
    std::fs::write(dest.join("ptah.sum"), EXPECTED).expect("write sum");
    let dir = Directory::read(&dest).expect("read");
    assert_eq!(verify_directory(&dir, true).expect("clean"), SumCheck::Verified);

    std::fs::write(
        dest.join("1785255952_create_invoices.up.sql"),
        "CREATE TABLE invoices (id int);\n",
    )
    .expect("tamper");
    let err = verify_directory(&Directory::read(&dest).expect("read"), false).expect_err("drift");
    assert!(matches!(err, Error::SumDrift { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("changed 1785255952_create_invoices.up.sql"),
        "{err}"
    );
    assert!(!err.is_usage(), "drift exits 1");

    // The README is not covered, as in the reference.
    std::fs::write(dest.join("README.md"), "edited").expect("edit readme");
    ptah_migrate::hash(&Directory::read(&dest).expect("read")).expect("rehash");
    assert_eq!(
        verify_directory(&Directory::read(&dest).expect("read"), true).expect("ok"),
        SumCheck::Verified
    );

    // A tampered directory hash is drift too.
    let sum = std::fs::read_to_string(dest.join("ptah.sum")).expect("read sum");
    let rest = &sum[sum.find('\n').expect("newline")..];
    let forged = format!("h1:q8bMX8N+42SzckgE33HkAA0W45SnUVkEgGEEEZeReLQ={rest}");
    std::fs::write(dest.join("ptah.sum"), forged).expect("forge");
    let err = verify_directory(&Directory::read(&dest).expect("read"), false).expect_err("dir hash");
    assert!(matches!(err, Error::SumDrift { .. }), "{err}");
    std::fs::remove_dir_all(&dest).expect("cleanup");
}

#[test]
fn hash_writes_exactly_the_reference_text() {
    let dest = copy_fixture("hash");
    let dir = Directory::read(&dest).expect("read");
    assert_eq!(verify_directory(&dir, false).expect("absent"), SumCheck::Absent);
    assert!(matches!(
        verify_directory(&dir, true),
        Err(Error::SumMissing { .. })
    ));
    ptah_migrate::hash(&dir).expect("hash");
    assert_eq!(
        std::fs::read_to_string(dest.join("ptah.sum")).expect("read"),
        EXPECTED
    );
    std::fs::remove_dir_all(&dest).expect("cleanup");
}
