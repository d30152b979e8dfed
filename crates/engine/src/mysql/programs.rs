//! Views and triggers of the URL's database, each kind in one set-based query (no per-view
//! `SHOW CREATE VIEW`, which costs a round trip per view). The texts are brought to the canonical
//! forms the dump reader produces ([`ptah_schema::normalize::mysql_view_definition`],
//! [`ptah_schema::normalize::mysql_trigger_definition`]).
//!
//! DEFINER, `ALGORITHM`, `SQL SECURITY`, `CHECK OPTION`, a trigger's `sql_mode` and its order among
//! the triggers of one event are not modelled; the views and triggers that use anything but the
//! defaults are listed as unmodelled ([`crate::unmodelled`]).

use std::collections::BTreeMap;

use mysql_async::Conn;
use ptah_schema::normalize::{mysql_trigger_definition, mysql_view_definition};
use ptah_schema::{QualifiedName, Trigger, View};

use super::{req, rows};
use crate::Error;

/// Views with their definitions as the server stores them.
const VIEWS: &str = "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?";

/// Triggers in the parts their definition is rebuilt from.
const TRIGGERS: &str = "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, EVENT_OBJECT_TABLE, \
     ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?";

/// The database's views, keyed by name.
pub(super) async fn views(conn: &mut Conn, database: &str) -> Result<BTreeMap<QualifiedName, View>, Error> {
    let mut out = BTreeMap::new();
    for row in rows(conn, VIEWS, database).await? {
        let name = QualifiedName::new("", req::<String>(&row, 0)?);
        let raw: String = req(&row, 1)?;
        let view = View {
            name: name.clone(),
            materialized: false,
            definition: mysql_view_definition(&raw, database),
            comment: None,
        };
        out.insert(name, view);
    }
    Ok(out)
}

/// The database's triggers, keyed by [`Trigger::key`].
pub(super) async fn triggers(
    conn: &mut Conn,
    database: &str,
) -> Result<BTreeMap<QualifiedName, Trigger>, Error> {
    let mut out = BTreeMap::new();
    for row in rows(conn, TRIGGERS, database).await? {
        let (name, timing, event, table, body): (String, String, String, String, String) = (
            req(&row, 0)?,
            req(&row, 1)?,
            req(&row, 2)?,
            req(&row, 3)?,
            req(&row, 4)?,
        );
        let trigger = Trigger {
            definition: mysql_trigger_definition(&name, &timing, &event, &table, &body),
            table: QualifiedName::new("", table),
            name,
        };
        out.insert(trigger.key(), trigger);
    }
    Ok(out)
}
