//! One database session per dialect: the unit that holds an advisory lock and runs DDL.

use std::time::Duration;

use tokio::task::JoinHandle;

use crate::{DatabaseUrl, Dialect, Error};

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
    pub async fn connect(url: &DatabaseUrl, timeout: Duration) -> Result<Session, Error> {
        let attempt = async {
            match url.dialect() {
                Dialect::Postgres => connect_postgres(url, timeout).await,
                Dialect::Mysql => connect_mysql(url).await,
            }
        };
        match tokio::time::timeout(timeout, attempt).await {
            Ok(result) => result,
            Err(_) => Err(Error::ConnectTimeout {
                target: url.to_string(),
                after: timeout,
            }),
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
    let (client, connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .map_err(|e| Error::Connect {
            target: url.to_string(),
            message: url.scrub(&crate::postgres_message(&e)),
        })?;
    let connection = tokio::spawn(async move {
        if let Err(err) = connection.await {
            tracing::debug!(error = %err, "postgres connection ended with an error");
        }
    });
    Ok(Session::Postgres { client, connection })
}

async fn connect_mysql(url: &DatabaseUrl) -> Result<Session, Error> {
    let opts = mysql_async::OptsBuilder::default()
        .ip_or_hostname(url.host())
        .tcp_port(url.port())
        .user(Some(url.user()))
        .pass(url.password())
        .db_name(Some(url.database()))
        .prefer_socket(false);
    mysql_async::Conn::new(opts)
        .await
        .map(Session::MySql)
        .map_err(|e| Error::Connect {
            target: url.to_string(),
            message: url.scrub(&e.to_string()),
        })
}
