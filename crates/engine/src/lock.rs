//! The one advisory lock that declarative apply and versioned migrations share per database.
//!
//! PostgreSQL takes `pg_try_advisory_lock(key)` with the key the reference CLI uses (FNV-1a 32-bit
//! of the name, widened to int64); MySQL/MariaDB take `GET_LOCK(name, …)`. Both are session locks,
//! so the caller must run its DDL on the same [`Session`] it locked.

use std::time::{Duration, Instant};

use crate::{Error, Session};

/// The lock name shared with the reference CLI, so both tools serialize against each other.
pub const LOCK_NAME: &str = "ptah_migrate";

/// How often a PostgreSQL lock attempt is retried while waiting.
const POLL: Duration = Duration::from_millis(100);

/// FNV-1a over the name's bytes, 32 bits.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, b| {
        (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The PostgreSQL advisory lock key for [`LOCK_NAME`].
pub fn postgres_lock_key() -> i64 {
    i64::from(fnv1a32(LOCK_NAME.as_bytes()))
}

impl Session {
    /// Takes the shared lock, waiting at most `wait`; `Error::LockBusy` when another session holds it.
    pub async fn lock(&mut self, wait: Duration) -> Result<(), Error> {
        let deadline = Instant::now() + wait;
        match self {
            Session::Postgres { client, .. } => loop {
                let row = client
                    .query_one("SELECT pg_try_advisory_lock($1)", &[&postgres_lock_key()])
                    .await
                    .map_err(Error::postgres)?;
                if row.try_get::<_, bool>(0).map_err(Error::postgres)? {
                    return Ok(());
                }
                if Instant::now() >= deadline {
                    return Err(Error::LockBusy { waited: wait });
                }
                tokio::time::sleep(POLL).await;
            },
            Session::MySql(conn) => {
                use mysql_async::prelude::Queryable;
                // GET_LOCK waits server-side in whole seconds; round up so a short wait still tries once.
                let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                let got: Option<Option<i64>> = conn
                    .exec_first("SELECT GET_LOCK(?, ?)", (LOCK_NAME, seconds))
                    .await
                    .map_err(Error::mysql)?;
                match got.flatten() {
                    Some(1) => Ok(()),
                    _ => Err(Error::LockBusy { waited: wait }),
                }
            }
        }
    }

    /// Releases the shared lock; `false` when this session did not hold it.
    pub async fn unlock(&mut self) -> Result<bool, Error> {
        match self {
            Session::Postgres { client, .. } => {
                let row = client
                    .query_one("SELECT pg_advisory_unlock($1)", &[&postgres_lock_key()])
                    .await
                    .map_err(Error::postgres)?;
                row.try_get::<_, bool>(0).map_err(Error::postgres)
            }
            Session::MySql(conn) => {
                use mysql_async::prelude::Queryable;
                let released: Option<Option<i64>> = conn
                    .exec_first("SELECT RELEASE_LOCK(?)", (LOCK_NAME,))
                    .await
                    .map_err(Error::mysql)?;
                Ok(released.flatten() == Some(1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_published_vectors() {
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn postgres_key_is_the_widened_hash_of_the_name() {
        assert_eq!(postgres_lock_key(), i64::from(fnv1a32(b"ptah_migrate")));
        assert!(
            postgres_lock_key() >= 0,
            "widening an unsigned 32-bit value never goes negative"
        );
    }
}
