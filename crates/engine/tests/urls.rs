//! URL parsing: every refusal is typed, and no rendering ever shows the password.

use ptah_engine::{DatabaseUrl, Dialect, Error};

#[test]
fn parses_both_dialects_with_defaults() {
    let pg = DatabaseUrl::parse("postgresql://app:s3cret@db.internal/orders").expect("pg");
    assert_eq!(pg.dialect(), Dialect::Postgres);
    assert_eq!(
        (pg.host(), pg.port(), pg.user(), pg.database()),
        ("db.internal", 5432, "app", "orders")
    );
    let my = DatabaseUrl::parse("mariadb://app:p%40ss@127.0.0.1:3307/shop?sslmode=disable").expect("mysql");
    assert_eq!(my.dialect(), Dialect::Mysql);
    assert_eq!((my.port(), my.database()), (3307, "shop"));
}

#[test]
fn display_and_debug_mask_the_password() {
    let url = DatabaseUrl::parse("postgres://app:hunter2-very-secret@127.0.0.1:5432/app").expect("valid");
    for shown in [url.to_string(), format!("{url:?}")] {
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("app:***@127.0.0.1:5432/app"), "{shown}");
    }
    assert_eq!(
        url.scrub("auth failed for hunter2-very-secret"),
        "auth failed for ***"
    );
}

#[test]
fn refusals_are_typed_and_never_echo_the_password() {
    let cases = [
        ("", "empty"),
        (" postgres://a:pw@h/d", "whitespace"),
        ("ftp://a:pw@h/d", "unsupported scheme"),
        ("postgres://a:pw@h1,h2/d", "several hosts"),
        ("postgres://a:pw@h/d?host=other", "several hosts"),
        ("mysql://a:pw@h/d?multiStatements=true", "multi-statement"),
        ("mysql://a:pw@h/d?allowMultiQueries=1", "multi-statement"),
        ("mysql://a:pw@h/d?multi_statements=1", "multi-statement"),
        ("postgres://a:pw@h/", "exactly one database"),
        ("postgres://:pw@h/d", "no user"),
        ("postgres://a:pw@h/d?sslmode=prefer", "TLS mode"),
        ("postgres://a:pw@h/d?password=x", "belongs in the URL"),
        (
            "postgres://a:pw@h/d?options=-csearch_path",
            "unsupported query parameter",
        ),
    ];
    for (input, want) in cases {
        let err = DatabaseUrl::parse(input).expect_err(input);
        let text = err.to_string();
        assert!(
            text.contains(want),
            "{input:?} gave {text:?}, want it to mention {want:?}"
        );
        assert!(!text.contains(":pw@"), "{text}");
    }
    assert!(matches!(
        DatabaseUrl::parse("mysql://a:pw@h/d?multiStatements=1"),
        Err(Error::MultiStatements)
    ));
    assert!(matches!(
        DatabaseUrl::parse("postgres://a:pw@h1,h2/d"),
        Err(Error::SeveralHosts)
    ));
}
