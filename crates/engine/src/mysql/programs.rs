//! Views and triggers of the URL's database, each kind in one set-based query (no per-view
//! `SHOW CREATE VIEW`, which costs a round trip per view). The texts are brought to the canonical
//! forms the dump reader produces ([`ptah_schema::normalize::mysql_view_definition`],
//! [`ptah_schema::normalize::mysql_trigger_definition`]).
//!
//! A view's `ALGORITHM`, `SQL SECURITY` and `CHECK OPTION` are read into
//! [`ptah_schema::ViewOptions`]. DEFINER, a trigger's `sql_mode` and its order among the triggers
//! of one event are not modelled; triggers ordered after another are listed as unmodelled
//! ([`crate::unmodelled`]).

use std::collections::BTreeMap;

use mysql_async::Conn;
use ptah_schema::normalize::{mysql_trigger_definition, mysql_view_definition};
use ptah_schema::{QualifiedName, Trigger, View, ViewOptions};

use super::{req, rows, text};
use crate::Error;

/// Views with their definitions as the server stores them, and their options (MariaDB's VIEWS
/// has the algorithm; MySQL 8's does not, and reads as `UNDEFINED`).
const VIEWS_MARIADB: &str = "SELECT TABLE_NAME, VIEW_DEFINITION, ALGORITHM, SECURITY_TYPE, CHECK_OPTION \
     FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?";

/// MySQL 8's views: no ALGORITHM column.
const VIEWS_MYSQL: &str = "SELECT TABLE_NAME, VIEW_DEFINITION, 'UNDEFINED', SECURITY_TYPE, CHECK_OPTION \
     FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?";

/// Triggers in the parts their definition is rebuilt from.
const TRIGGERS: &str = "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, EVENT_OBJECT_TABLE, \
     ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?";

/// The database's views keyed by name, and the options of those that do not keep the defaults.
pub(super) async fn views(
    conn: &mut Conn,
    database: &str,
    mariadb: bool,
) -> Result<(BTreeMap<QualifiedName, View>, BTreeMap<String, ViewOptions>), Error> {
    let mut out = BTreeMap::new();
    let mut options = BTreeMap::new();
    let query = if mariadb { VIEWS_MARIADB } else { VIEWS_MYSQL };
    for row in rows(conn, query, database).await? {
        let name = QualifiedName::new("", req::<String>(&row, 0)?);
        let raw: String = req(&row, 1)?;
        let view_options = ViewOptions {
            algorithm: text(&row, 2)?
                .map(|a| a.to_ascii_uppercase())
                .filter(|a| a != "UNDEFINED"),
            security_invoker: text(&row, 3)?.is_some_and(|s| s.eq_ignore_ascii_case("INVOKER")),
            check_option: text(&row, 4)?
                .map(|c| c.to_ascii_uppercase())
                .filter(|c| c != "NONE"),
        };
        if !view_options.is_default() {
            options.insert(name.name.clone(), view_options);
        }
        let view = View {
            name: name.clone(),
            materialized: false,
            definition: mysql_view_definition(&raw, database),
            comment: None,
        };
        out.insert(name, view);
    }
    Ok((out, options))
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
            comment: None,
        };
        out.insert(trigger.key(), trigger);
    }
    Ok(out)
}
