//! The target identity: equivalent spellings agree, secrets and timing knobs do not count,
//! refusals are typed.

use ptah_dataplane::{IdentityError, TargetIdentity};

fn digest(url: &str) -> String {
    TargetIdentity::from_url(url)
        .unwrap_or_else(|e| panic!("{url}: {e}"))
        .digest()
        .expect("digest")
        .to_string()
}

#[test]
fn equivalent_spellings_have_one_identity() {
    let groups: &[&[&str]] = &[
        &[
            "postgres://app:pw@db.example.com/app",
            "postgresql://app:other@DB.Example.COM:5432/app",
            "postgres://app@db.example.com:5432/app?sslmode=disable",
            "postgres://app:pw@db.example.com/app?connect_timeout=5&application_name=x",
            "postgres://%61pp:pw@db.example.com/%61pp",
        ],
        &[
            "mysql://u:p@10.0.0.1/shop",
            "mariadb://u:q@10.0.0.1:3306/shop?ssl-mode=DISABLED",
            "mysql://u@10.0.0.1/shop?readTimeout=3s&writeTimeout=1s&timeout=9s",
        ],
        &[
            "mysql://u:p@[::1]:3306/shop",
            "mysql://u:p@[0:0:0:0:0:0:0:1]:3306/shop",
        ],
        &[
            "postgres://u@h/d?sslmode=require",
            "postgres://u@h/d?ssl_mode=REQUIRED",
        ],
    ];
    for group in groups {
        let first = digest(group[0]);
        for url in &group[1..] {
            assert_eq!(digest(url), first, "{url} differs from {}", group[0]);
        }
    }
}

#[test]
fn what_selects_another_target_changes_the_identity() {
    let base = digest("postgres://app:pw@db.example.com/app");
    for other in [
        "postgres://app:pw@db.example.com./app",
        "postgres://app:pw@db.example.org/app",
        "postgres://app:pw@db.example.com:5433/app",
        "postgres://app:pw@db.example.com/App",
        "postgres://admin:pw@db.example.com/app",
        "postgres://app:pw@db.example.com/app?sslmode=verify-full",
        "mysql://app:pw@db.example.com:5432/app",
    ] {
        assert_ne!(digest(other), base, "{other}");
    }
    assert_ne!(digest("mysql://u@h:3306/Shop"), digest("mysql://u@h:3306/shop"));
    assert_ne!(
        digest("mysql://u@127.0.0.1/shop"),
        digest("mysql://u@localhost/shop")
    );
}

#[test]
fn the_password_never_reaches_the_identity() {
    let id = TargetIdentity::from_url("postgres://app:s3cr%40t-pw@h/app").expect("identity");
    let json = serde_json::to_string(&id).expect("json");
    assert!(!json.contains("s3cr"), "{json}");
    assert!(!format!("{id:?}").contains("s3cr"));
}

#[test]
fn refusals_are_typed() {
    use IdentityError as E;
    let cases: &[(&str, IdentityError)] = &[
        ("mysql://u:p@h/d?multiStatements=true", E::MultiStatements),
        ("mysql://u:p@h/d?multi_statements=1", E::MultiStatements),
        ("mysql://u:p@h/d?CLIENT_MULTI_QUERIES=1", E::MultiStatements),
        ("postgres://u:p@a,b/d", E::SeveralHosts),
        ("postgres://u:p@a/d?host=b", E::SeveralHosts),
        ("postgres://u:p@a/d?hostaddr=10.0.0.2", E::SeveralHosts),
        (
            "mysql://u:p@h/d?init_command=SET%20x%3D1",
            E::SessionSql("init_command".into()),
        ),
        (
            "mysql://u:p@h/d?sessionVariables=x",
            E::SessionSql("sessionVariables".into()),
        ),
        (
            "postgres://u@h/d?sslmode=disable&sslmode=require",
            E::Ambiguous("sslmode".into()),
        ),
        (
            "postgres://u@h/d?sslmode=disable&ssl-mode=disable",
            E::Ambiguous("ssl-mode".into()),
        ),
        (
            "postgres://u@h/d?application_name=a&application_name=b",
            E::Ambiguous("application_name".into()),
        ),
        ("postgres://u@h/d?sslmode=sometimes", E::UnsupportedTls),
        ("postgres://u@h/d?sslmode=prefer", E::UnsupportedTls),
        (
            "postgres://u@h/d?options=-c%20search_path%3Dother",
            E::UnsupportedParameter("options".into()),
        ),
        (
            "mysql://u@h/d?charset=utf8mb4",
            E::UnsupportedParameter("charset".into()),
        ),
        (
            "postgres://u@h/d?frobnicate=1",
            E::UnsupportedParameter("frobnicate".into()),
        ),
        ("mysql://u:p@[::1]/d", E::Ipv6WithoutPort),
        ("redis://u@h/d", E::UnsupportedScheme),
    ];
    for (url, want) in cases {
        assert_eq!(TargetIdentity::from_url(url).as_ref().err(), Some(want), "{url}");
    }
    for url in [
        "",
        "postgres://u@h/",
        "postgres://u@h",
        "postgres://@h/d",
        "postgres://u@h/d/e",
        "postgres://u@h/d#frag",
        "postgres://u:p@h/d?password=x",
        "postgres://u@h/d?user=v",
        "postgres://u @h/d",
        "postgres://u@h/%ff",
        "postgres://u:%ff@h/d",
    ] {
        assert!(
            matches!(TargetIdentity::from_url(url), Err(E::Invalid(_))),
            "{url}: {:?}",
            TargetIdentity::from_url(url)
        );
    }
}

#[test]
fn refusal_messages_carry_no_password() {
    for url in [
        "mysql://u:hunter2secret@h/d?multiStatements=true",
        "postgres://u:hunter2secret@a,b/d",
        "postgres://u:hunter2secret@h/d?password=hunter2secret",
        "postgres://u:hunter2secret@h/d?sslmode=hunter2secret",
    ] {
        let err = TargetIdentity::from_url(url).expect_err("refused");
        assert!(!format!("{err} {err:?}").contains("hunter2"), "{url}: {err:?}");
    }
}
