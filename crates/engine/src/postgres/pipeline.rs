//! Inspection queries sent to the server together: it runs each one while the rows of the one
//! before are read into the model, instead of waiting for a round trip per query.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesOrdered;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row};

use crate::Error;

type Rows<'a> = Pin<Box<dyn Future<Output = Result<Vec<Row>, tokio_postgres::Error>> + Send + 'a>>;

/// Queries that each take the managed namespaces (`text[]`) as `$1`, answered in the order sent.
pub(super) struct Pipeline<'a> {
    pending: FuturesOrdered<Rows<'a>>,
    queries: VecDeque<&'static str>,
}

impl<'a> Pipeline<'a> {
    /// Prepares `queries`; they all go out on the first [`Pipeline::next`]. Each is sent typed
    /// (`query_typed`), so there is no separate prepare round trip either.
    pub(super) fn new(client: &'a Client, namespaces: &'a [String], queries: &[&'static str]) -> Self {
        let pending = queries
            .iter()
            .map(|&sql| -> Rows<'a> {
                Box::pin(async move {
                    let params: [(&(dyn ToSql + Sync), Type); 1] = [(&namespaces, Type::TEXT_ARRAY)];
                    client.query_typed(sql, &params).await
                })
            })
            .collect();
        Pipeline {
            pending,
            queries: queries.iter().copied().collect(),
        }
    }

    /// The rows of `sql`, which must be the next query in the order given to [`Pipeline::new`].
    pub(super) async fn next(&mut self, sql: &'static str) -> Result<Vec<Row>, Error> {
        let expected = self.queries.pop_front();
        debug_assert!(
            expected == Some(sql),
            "inspection queries are read in the order they were sent"
        );
        match self.pending.next().await {
            Some(rows) => rows.map_err(Error::postgres),
            None => Err(Error::Query(
                "an inspection query was read that was never sent".to_owned(),
            )),
        }
    }
}
