//! One database session per dialect: the unit that holds an advisory lock and runs DDL.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::{DatabaseUrl, Dialect, Error, tls};

/// An open session. Locks are session-scoped, so the DDL must run on the session that holds one.
pub enum Session {
    /// A PostgreSQL session; the connection task runs until the client is dropped.
    Postgres {
        /// The client that sends queries.
        client: tokio_postgres::Client,
        /// The task driving the connection.
        connection: JoinHandle<()>,
    },
    /// A MySQL/MariaDB session.
    MySql(mysql_async::Conn),
}

impl Session {
    /// Opens a session, giving up after `timeout`; errors never contain the password.
    ///
    /// A connection that gets no answer at all (a flow lost on the way: a dropped SYN is
    /// retransmitted by the kernel, a blackholed one never is) is abandoned after its share of
    /// the timeout and a fresh one tried, until the timeout is spent. Nothing was sent on it but
    /// the handshake. An answer, even a refusal, is final.
    pub async fn connect(url: &DatabaseUrl, timeout: Duration) -> Result<Session, Error> {
        let started = tokio::time::Instant::now();
        let share = attempt_share(timeout);
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            let budget = share.min(left);
            let attempt = async {
                match url.dialect() {
                    // The driver's own socket timeout gets all that is left, so that a connect
                    // whose SYN is lost ends by the share below, which tries again, not by the
                    // driver's error, which is final.
                    Dialect::Postgres => connect_postgres(url, left).await,
                    Dialect::Mysql => connect_mysql(url).await,
                }
            };
            match tokio::time::timeout(budget, attempt).await {
                Ok(result) => return result,
                Err(_) if left > budget => {
                    tracing::debug!(after = ?budget, "no answer from the database; trying a fresh connection");
                }
                Err(_) => {
                    return Err(Error::ConnectTimeout {
                        target: url.to_string(),
                        after: timeout,
                    });
                }
            }
        }
    }

    /// The dialect this session speaks.
    pub fn dialect(&self) -> Dialect {
        match self {
            Session::Postgres { .. } => Dialect::Postgres,
            Session::MySql(_) => Dialect::Mysql,
        }
    }

    /// Runs statements that return no rows, as one text batch.
    pub async fn batch(&mut self, sql: &str) -> Result<(), Error> {
        match self {
            Session::Postgres { client, .. } => client.batch_execute(sql).await.map_err(Error::postgres),
            Session::MySql(conn) => {
                use mysql_async::prelude::Queryable;
                conn.query_drop(sql).await.map_err(Error::mysql)
            }
        }
    }

    /// The TLS protocol the server reports for this very session (`TLSv1.3`), `None` for
    /// plaintext: read from the server, so it is what was used, not what was asked for.
    pub async fn tls_protocol(&mut self) -> Result<Option<String>, Error> {
        match self {
            Session::Postgres { client, .. } => {
                let row = client
                    .query_opt(
                        "SELECT version FROM pg_catalog.pg_stat_ssl WHERE pid = pg_catalog.pg_backend_pid() AND ssl",
                        &[],
                    )
                    .await
                    .map_err(Error::postgres)?;
                Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
            }
            Session::MySql(conn) => {
                use mysql_async::prelude::Queryable;
                let row: Option<(String, String)> = conn
                    .query_first("SHOW SESSION STATUS LIKE 'Ssl_version'")
                    .await
                    .map_err(Error::mysql)?;
                Ok(row.map(|(_, v)| v).filter(|v| !v.is_empty()))
            }
        }
    }

    /// Closes the session cleanly.
    pub async fn close(self) -> Result<(), Error> {
        match self {
            Session::Postgres { client, connection } => {
                drop(client);
                // The connection task ends once its client is gone; its result carries nothing new.
                let _ = connection.await;
                Ok(())
            }
            Session::MySql(conn) => conn.disconnect().await.map_err(Error::mysql),
        }
    }
}

/// How long one connection attempt may wait for an answer: a third of the connect timeout, at
/// least [`MIN_ATTEMPT`] (a loaded server's TLS handshake), at most the whole timeout.
fn attempt_share(timeout: Duration) -> Duration {
    (timeout / 3).max(MIN_ATTEMPT).min(timeout)
}

/// The shortest wait for an answer before a fresh connection is tried.
const MIN_ATTEMPT: Duration = Duration::from_secs(5);

async fn connect_postgres(url: &DatabaseUrl, timeout: Duration) -> Result<Session, Error> {
    let mut config = tokio_postgres::Config::new();
    config
        .host(url.host())
        .port(url.port())
        .user(url.user())
        .dbname(url.database())
        .connect_timeout(timeout)
        .application_name(url.application_name().unwrap_or("ptah"));
    if let Some(pw) = url.password() {
        config.password(pw);
    }
    let fail = |err: tokio_postgres::Error| {
        let message = url.scrub(&crate::postgres_message(&err));
        // tokio-postgres says so only in the error's source, as text.
        let refused_tls = std::iter::successors(std::error::Error::source(&err), |e| e.source())
            .any(|cause| cause.to_string().contains("server does not support TLS"));
        if refused_tls {
            return Error::TlsUnavailable {
                target: url.to_string(),
                mode: url.tls().as_str(),
            };
        }
        connect_error(url, &err, message)
    };
    let (client, connection) = match tls_config(url)? {
        None => {
            let (client, connection) = config.connect(tokio_postgres::NoTls).await.map_err(fail)?;
            (client, drive(connection))
        }
        Some(tls) => {
            config.ssl_mode(tokio_postgres::config::SslMode::Require);
            let connector = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
            let (client, connection) = config.connect(connector).await.map_err(fail)?;
            (client, drive(connection))
        }
    };
    Ok(Session::Postgres { client, connection })
}

/// The TLS client configuration the URL's mode asks for; `None` for plaintext.
fn tls_config(url: &DatabaseUrl) -> Result<Option<rustls::ClientConfig>, Error> {
    if url.tls() == crate::TlsMode::Disable {
        return Ok(None);
    }
    let roots = tls::Roots::load(url.ca_file())?;
    tls::Checks::of(url.tls(), &roots)
        .map(|checks| tls::client_config(&roots, checks, &url.to_string()))
        .transpose()
}

/// Runs the connection until its client is dropped.
fn drive<S, T>(connection: tokio_postgres::Connection<S, T>) -> JoinHandle<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::debug!(error = %err, "postgres connection ended with an error");
        }
    })
}

/// A failed connect as a typed TLS refusal when the handshake failed, else [`Error::Connect`].
fn connect_error(url: &DatabaseUrl, err: &(dyn std::error::Error + 'static), message: String) -> Error {
    let target = url.to_string();
    match tls::failure(err) {
        Some(tls::Failure::Untrusted(reason)) => Error::TlsUntrusted { target, reason },
        Some(tls::Failure::Hostname { presented }) => Error::TlsHostname {
            target,
            host: url.host().to_owned(),
            presented: if presented.is_empty() {
                "no name".to_owned()
            } else {
                presented.join(", ")
            },
        },
        Some(tls::Failure::Other(message)) => Error::Tls { target, message },
        None => Error::Connect { target, message },
    }
}

async fn connect_mysql(url: &DatabaseUrl) -> Result<Session, Error> {
    // Plaintext reads no CA bundle: a bundle set for other targets must not stop it.
    let roots = match url.tls() {
        crate::TlsMode::Disable => tls::Roots::none(),
        _ => tls::Roots::load(url.ca_file())?,
    };
    let checks = tls::Checks::of(url.tls(), &roots);
    let chain_only = checks.is_some_and(|c| c.chain && !c.name);
    let mut name = None;
    loop {
        let err = match mysql_async::Conn::new(mysql_opts(url, &roots, checks, name.clone())).await {
            Ok(conn) => return Ok(Session::MySql(conn)),
            Err(err) => err,
        };
        // mysql_async cannot check the chain without the name (its domain skip matches a message
        // rustls no longer writes), so verify-ca dials once more by a name the certificate
        // carries: the chain is checked again, and the name is one that chain vouches for.
        if chain_only
            && name.is_none()
            && let Some(tls::Failure::Hostname { presented }) = tls::failure(&err)
        {
            name = tls::presented_name(&presented);
            if name.is_some() {
                continue;
            }
        }
        return Err(match err {
            mysql_async::Error::Driver(mysql_async::DriverError::NoClientSslFlagFromServer) => {
                Error::TlsUnavailable {
                    target: url.to_string(),
                    mode: url.tls().as_str(),
                }
            }
            err => {
                let message = url.scrub(&err.to_string());
                connect_error(url, &err, message)
            }
        });
    }
}

fn mysql_opts(
    url: &DatabaseUrl,
    roots: &tls::Roots,
    checks: Option<tls::Checks>,
    name: Option<String>,
) -> mysql_async::OptsBuilder {
    let opts = mysql_async::OptsBuilder::default()
        .ip_or_hostname(url.host())
        .tcp_port(url.port())
        .user(Some(url.user()))
        .pass(url.password())
        .db_name(Some(url.database()))
        .prefer_socket(false);
    let Some(checks) = checks else {
        return opts;
    };
    let mut ssl = mysql_async::SslOpts::default()
        .with_danger_accept_invalid_certs(!checks.chain)
        .with_danger_tls_hostname_override(name);
    if let Some(pem) = &roots.pem {
        ssl = ssl
            .with_disable_built_in_roots(true)
            .with_root_certs(vec![pem.clone().into()]);
    }
    opts.ssl_opts(ssl)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_gets_a_third_of_the_timeout_but_never_less_than_five_seconds_or_more_than_all() {
        assert_eq!(attempt_share(Duration::from_secs(30)), Duration::from_secs(10));
        assert_eq!(attempt_share(Duration::from_secs(10)), Duration::from_secs(5));
        assert_eq!(attempt_share(Duration::from_secs(3)), Duration::from_secs(3));
    }
}
