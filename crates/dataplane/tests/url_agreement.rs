//! The manager's target identity and the executor's connection read a database URL the same
//! way: a table of URLs, each accepted by both with the same host, port, database, user and TLS
//! mode, or refused by both.

use ptah_dataplane::TargetIdentity;
use ptah_engine::DatabaseUrl;
use serde_json::Value;

/// What a URL must read as: host, port, database, user, TLS mode.
type Reading = (&'static str, u16, &'static str, &'static str, &'static str);

const ACCEPTED: &[(&str, Reading)] = &[
    (
        "postgres://app:pw@db.example.com/app",
        ("db.example.com", 5432, "app", "app", "disable"),
    ),
    (
        "postgresql://app:pw@DB.Example.COM:6432/app?sslmode=verify-full",
        ("db.example.com", 6432, "app", "app", "verify-full"),
    ),
    (
        "mysql://u:p@10.0.0.1/shop?ssl-mode=REQUIRED",
        ("10.0.0.1", 3306, "shop", "u", "require"),
    ),
    (
        "mariadb://u:p@[::1]:3307/Shop?ssl-mode=VERIFY_IDENTITY",
        ("::1", 3307, "Shop", "u", "verify-full"),
    ),
    (
        "postgres://%61pp:p%40ss@db%2Eexample.com/%61pp",
        ("db.example.com", 5432, "app", "app", "disable"),
    ),
    (
        "postgres://u@%31%32%37.0.0.1/d?ssl_mode=verify-ca",
        ("127.0.0.1", 5432, "d", "u", "verify-ca"),
    ),
    (
        "postgres://app@db.example.com./app?connect_timeout=5&application_name=x",
        ("db.example.com.", 5432, "app", "app", "disable"),
    ),
    (
        "mysql://u@h/shop?readTimeout=3s&writeTimeout=1s",
        ("h", 3306, "shop", "u", "disable"),
    ),
];

const REFUSED: &[&str] = &[
    "",
    "postgres://u@h/d?sslmode=prefer",
    "postgres://u@h/d?sslmode=allow",
    "mysql://u@h/d?ssl-mode=PREFERRED",
    "postgres://u@h/d?sslmode=sometimes",
    "postgres://u@a,b/d",
    "postgres://u@a%2Cb/d",
    "postgres://u@a/d?host=b",
    "postgres://u@h/d#frag",
    "postgres://u@h/d?sslmode=require&sslmode=disable",
    "postgres://u@h/d?sslmode=require&ssl-mode=require",
    "mysql://u@[::1]/d",
    "postgres://u@::1/d",
    "postgres://u@h/d?options=-c%20search_path%3Dother",
    "postgres://u@h/d?target_session_attrs=read-write",
    "mysql://u@h/d?charset=latin1",
    "mysql://u@h/d?collation=utf8mb4_bin",
    "mysql://u@h/d?init_command=SET%20x%3D1",
    "mysql://u@h/d?multiStatements=true",
    "postgres://u@h/d?password=x",
    "postgres://u@h/d?frobnicate=1",
    "postgres://u@h//d",
    "postgres://u@h/d/e",
    "postgres://u@h/",
    "postgres://@h/d",
    "postgres://u@h/%ff",
    "postgres://%ff@h/d",
    "postgres://u:%ff@h/d",
    "postgres://u @h/d",
    "redis://u@h/d",
];

/// A reading as owned values, to compare what each side returns.
type Read = (String, u16, String, String, String);

fn owned(r: &Reading) -> Read {
    (
        r.0.to_owned(),
        r.1,
        r.2.to_owned(),
        r.3.to_owned(),
        r.4.to_owned(),
    )
}

fn identity(url: &str) -> Option<Read> {
    let id = TargetIdentity::from_url(url).ok()?;
    let doc: Value = serde_json::to_value(&id).expect("identity document");
    let text = |key: &str| {
        doc[key]
            .as_str()
            .unwrap_or_else(|| panic!("{url}: {key}"))
            .to_owned()
    };
    let port = doc["port"].as_u64().and_then(|p| u16::try_from(p).ok());
    Some((
        text("host"),
        port.expect("port"),
        text("database"),
        text("user"),
        text("tls"),
    ))
}

fn engine(url: &str) -> Option<Read> {
    let parsed = DatabaseUrl::parse(url).ok()?;
    Some((
        parsed.host().to_owned(),
        parsed.port(),
        parsed.database().to_owned(),
        parsed.user().to_owned(),
        parsed.tls().as_str().to_owned(),
    ))
}

#[test]
fn both_read_accepted_urls_alike() {
    let mut disagreements = Vec::new();
    for (url, want) in ACCEPTED {
        let (id, en) = (identity(url), engine(url));
        let want = Some(owned(want));
        if id != want || en != want {
            disagreements.push(format!("{url}: identity {id:?}, engine {en:?}, want {want:?}"));
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}

#[test]
fn both_refuse_the_same_urls() {
    let mut accepted = Vec::new();
    for url in REFUSED {
        let (id, en) = (identity(url), engine(url));
        if id.is_some() || en.is_some() {
            accepted.push(format!("{url}: identity {id:?}, engine {en:?}"));
        }
    }
    assert!(accepted.is_empty(), "{accepted:#?}");
}
