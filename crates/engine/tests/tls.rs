//! TLS to the real PostgreSQL and MariaDB of `cargo xtask services up`, which run with TLS on and
//! a certificate for `localhost` only: every mode, the mode the server reports as used, and a
//! typed refusal for a wrong CA, a wrong host name (dialling 127.0.0.1) and a plaintext-only
//! server.

use std::{path::PathBuf, time::Duration};

use ptah_engine::{DatabaseUrl, Dialect, Error, Session, TlsMode};
use ptah_testservices::{Database, TestServices};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpListener,
};

const TIMEOUT: Duration = Duration::from_secs(10);

struct Server {
    dialect: Dialect,
    db: Database,
    /// The other server's CA: a real CA that did not sign this server's certificate.
    foreign_ca: PathBuf,
}

fn servers() -> Vec<Server> {
    let services = TestServices::require();
    let pg_ca = services.postgres.require_tls_ca().to_owned();
    let my_ca = services.mysql.require_tls_ca().to_owned();
    vec![
        Server {
            dialect: Dialect::Postgres,
            db: services.postgres.clone(),
            foreign_ca: my_ca,
        },
        Server {
            dialect: Dialect::Mysql,
            db: services.mysql.clone(),
            foreign_ca: pg_ca,
        },
    ]
}

impl Server {
    /// The app URL dialled at `host` with `mode`, and the CA bundle `ca`.
    fn url(&self, host: &str, mode: &str, ca: Option<PathBuf>) -> DatabaseUrl {
        let text = self.db.url.expose().replace("@127.0.0.1:", &format!("@{host}:"));
        let param = match self.dialect {
            Dialect::Postgres => "sslmode",
            Dialect::Mysql => "ssl-mode",
        };
        DatabaseUrl::parse(&format!("{text}?{param}={mode}"))
            .expect("a valid URL")
            .with_ca_file(ca)
    }

    fn ca(&self) -> Option<PathBuf> {
        self.db.ca_path.clone()
    }

    fn password(&self) -> String {
        let url = self.db.url.expose();
        let after_user = &url[url.find("://").expect("scheme") + 3..];
        let colon = after_user.find(':').expect("user:password");
        let at = after_user.find('@').expect("@host");
        after_user[colon + 1..at].to_owned()
    }
}

async fn used_protocol(url: &DatabaseUrl) -> Option<String> {
    let mut session = Session::connect(url, TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("{url} ({:?}): {e}", url.tls()));
    session
        .batch("SELECT 1")
        .await
        .expect("a statement over the session");
    let protocol = session.tls_protocol().await.expect("the server reports its TLS");
    session.close().await.expect("close");
    protocol
}

#[tokio::test]
async fn every_verifying_mode_connects_and_the_server_reports_tls() {
    for s in servers() {
        let cases = [
            ("localhost", "verify-full", s.ca()),
            ("localhost", "VERIFY_IDENTITY", s.ca()),
            // The chain only: the certificate does not name 127.0.0.1.
            ("127.0.0.1", "verify-ca", s.ca()),
            ("127.0.0.1", "VERIFY_CA", s.ca()),
            ("127.0.0.1", "require", s.ca()),
            // No CA bundle: encrypted, the certificate not checked (libpq's and MySQL's rule).
            ("127.0.0.1", "required", None),
        ];
        for (host, mode, ca) in cases {
            let url = s.url(host, mode, ca);
            let protocol = used_protocol(&url).await;
            assert!(
                protocol.as_deref().is_some_and(|p| p.starts_with("TLSv1.")),
                "{:?} {host} {mode}: the server reports {protocol:?}",
                s.dialect
            );
        }
        let plain = s.url("127.0.0.1", "disable", None);
        assert_eq!(plain.tls(), TlsMode::Disable);
        assert_eq!(used_protocol(&plain).await, None, "{:?}", s.dialect);
    }
}

#[tokio::test]
async fn a_wrong_ca_is_refused_as_untrusted_in_every_checking_mode() {
    for s in servers() {
        for (host, mode) in [
            ("localhost", "verify-full"),
            ("127.0.0.1", "verify-ca"),
            ("127.0.0.1", "require"),
        ] {
            let url = s.url(host, mode, Some(s.foreign_ca.clone()));
            let err = Session::connect(&url, TIMEOUT)
                .await
                .err()
                .unwrap_or_else(|| panic!("{:?} {mode}: a foreign CA was accepted", s.dialect));
            assert!(
                matches!(err, Error::TlsUntrusted { .. }),
                "{:?} {mode}: {err:?}",
                s.dialect
            );
            let shown = format!("{err} {err:?}");
            assert!(shown.contains("not trusted"), "{shown}");
            assert!(!shown.contains(&s.password()), "the password leaked: {shown}");
        }
    }
}

#[tokio::test]
async fn the_public_roots_do_not_trust_a_private_ca() {
    for s in servers() {
        let url = s.url("localhost", "verify-full", None);
        let err = Session::connect(&url, TIMEOUT).await.err().expect("refused");
        assert!(
            matches!(err, Error::TlsUntrusted { .. }),
            "{:?}: {err:?}",
            s.dialect
        );
    }
}

#[tokio::test]
async fn a_wrong_host_name_is_refused_with_the_names_the_certificate_carries() {
    for s in servers() {
        let url = s.url("127.0.0.1", "verify-full", s.ca());
        let err = Session::connect(&url, TIMEOUT).await.err().expect("refused");
        let Error::TlsHostname { host, presented, .. } = &err else {
            panic!("{:?}: {err:?}", s.dialect);
        };
        assert_eq!(host, "127.0.0.1");
        assert!(presented.contains("localhost"), "{presented}");
        assert!(err.to_string().contains("not valid for \"127.0.0.1\""), "{err}");
        assert!(!format!("{err:?}").contains(&s.password()));
    }
}

/// A plaintext-only server. This one listener is a stand-in (the services run with TLS on and
/// turning it off would break every other test sharing them): it answers exactly what a real
/// server without TLS answers, PostgreSQL's `N` to an SSLRequest and MySQL's greeting without
/// the CLIENT_SSL capability, and nothing after that.
async fn plaintext_only(dialect: Dialect) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            match dialect {
                Dialect::Postgres => {
                    let mut request = [0u8; 8];
                    if stream.read_exact(&mut request).await.is_ok() {
                        let _ = stream.write_all(b"N").await;
                    }
                }
                Dialect::Mysql => {
                    let _ = stream.write_all(&mysql_greeting_without_tls()).await;
                }
            }
            let mut rest = Vec::new();
            let _ = stream.read_to_end(&mut rest).await;
        }
    });
    port
}

/// A protocol-10 handshake whose capabilities lack CLIENT_SSL (0x0800).
fn mysql_greeting_without_tls() -> Vec<u8> {
    let capabilities: u32 = 0x0000_0001 | 0x0000_0008 | 0x0000_0200 | 0x0000_2000 | 0x0000_8000 | 0x0008_0000;
    let mut payload = vec![10u8];
    payload.extend_from_slice(b"10.11.0-plaintext-only\0");
    payload.extend_from_slice(&7u32.to_le_bytes());
    payload.extend_from_slice(b"abcdefgh\0");
    payload.extend_from_slice(&(capabilities as u16).to_le_bytes());
    payload.push(45);
    payload.extend_from_slice(&2u16.to_le_bytes());
    payload.extend_from_slice(&((capabilities >> 16) as u16).to_le_bytes());
    payload.push(21);
    payload.extend_from_slice(&[0u8; 10]);
    payload.extend_from_slice(b"ijklmnopqrst\0");
    payload.extend_from_slice(b"mysql_native_password\0");
    let mut packet = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    packet.push(0);
    packet.extend(payload);
    packet
}

#[tokio::test]
async fn a_plaintext_only_server_is_refused_when_tls_is_asked_for() {
    for s in servers() {
        let port = plaintext_only(s.dialect).await;
        let scheme = match s.dialect {
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
        };
        for mode in ["require", "verify-full"] {
            let url = DatabaseUrl::parse(&format!(
                "{scheme}://app:s3cret-xyzzy@localhost:{port}/app?sslmode={mode}"
            ))
            .expect("url")
            .with_ca_file(s.ca());
            let err = Session::connect(&url, TIMEOUT).await.err().expect("refused");
            assert!(
                matches!(err, Error::TlsUnavailable { .. }),
                "{:?} {mode}: {err:?}",
                s.dialect
            );
            assert!(err.to_string().contains("does not offer TLS"), "{err}");
            assert!(!format!("{err} {err:?}").contains("s3cret-xyzzy"));
        }
    }
}

#[test]
fn modes_that_fall_back_to_plaintext_are_refused() {
    for text in [
        "postgres://a:pw@h/d?sslmode=prefer",
        "postgres://a:pw@h/d?sslmode=allow",
        "mysql://a:pw@h/d?ssl-mode=PREFERRED",
        "mysql://a:pw@h/d?ssl-mode=sometimes",
    ] {
        let err = DatabaseUrl::parse(text).expect_err(text);
        assert!(matches!(err, Error::UnsupportedTls), "{text}: {err:?}");
        assert!(err.to_string().contains("falls back to plaintext"), "{err}");
    }
    let modes = [
        ("sslmode=disable", TlsMode::Disable),
        ("ssl-mode=DISABLED", TlsMode::Disable),
        ("sslmode=require", TlsMode::Require),
        ("ssl_mode=REQUIRED", TlsMode::Require),
        ("sslmode=verify-ca", TlsMode::VerifyCa),
        ("ssl-mode=VERIFY_CA", TlsMode::VerifyCa),
        ("sslmode=verify-full", TlsMode::VerifyFull),
        ("ssl-mode=VERIFY_IDENTITY", TlsMode::VerifyFull),
    ];
    for (query, mode) in modes {
        let url = DatabaseUrl::parse(&format!("postgres://a:pw@h/d?{query}")).expect(query);
        assert_eq!(url.tls(), mode, "{query}");
    }
}

#[tokio::test]
async fn a_plaintext_url_ignores_the_ca_bundle() {
    for s in servers() {
        let url = s.url("127.0.0.1", "disable", Some(PathBuf::from("/nonexistent/ca.pem")));
        assert_eq!(used_protocol(&url).await, None, "{:?}", s.dialect);
    }
}
