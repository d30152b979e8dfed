//! Stored functions, procedures and events of the URL's database, each kind in set-based queries
//! (no `SHOW CREATE` per object), brought to the canonical forms the dump reader produces:
//! parameter lists and result types through [`ptah_schema::normalize::mysql_parameter_list`] and
//! [`ptah_schema::normalize::mysql_type`], bodies as the server stores them (they are what a
//! dump writes). DEFINER is not read: the applying user creates what a plan creates.

use std::collections::BTreeMap;

use mysql_async::Conn;
use ptah_schema::normalize::{MysqlParameter, mysql_data_access, mysql_parameter_list, mysql_type};
use ptah_schema::{Event, QualifiedName, StoredRoutine, StoredRoutineKind};

use super::{int, req, rows, text};
use crate::Error;

/// Routines with their characteristics and bodies.
const ROUTINES: &str = "SELECT ROUTINE_NAME, ROUTINE_TYPE, DTD_IDENTIFIER, ROUTINE_DEFINITION, \
     IS_DETERMINISTIC, SQL_DATA_ACCESS, SECURITY_TYPE, ROUTINE_COMMENT \
     FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?";

/// Parameters in order (position 0 is a function's result, read from ROUTINES instead).
const PARAMETERS: &str = "SELECT SPECIFIC_NAME, ROUTINE_TYPE, ORDINAL_POSITION, PARAMETER_MODE, \
     PARAMETER_NAME, DTD_IDENTIFIER FROM information_schema.PARAMETERS \
     WHERE SPECIFIC_SCHEMA = ? AND ORDINAL_POSITION > 0";

/// Events with their schedules, times printed as `SHOW CREATE EVENT` prints them (as text: the
/// protocol would hand a DATETIME over as a date value).
const EVENTS: &str = "SELECT EVENT_NAME, EVENT_DEFINITION, EVENT_TYPE, \
     DATE_FORMAT(EXECUTE_AT, '%Y-%m-%d %H:%i:%s'), INTERVAL_VALUE, INTERVAL_FIELD, \
     DATE_FORMAT(STARTS, '%Y-%m-%d %H:%i:%s'), DATE_FORMAT(ENDS, '%Y-%m-%d %H:%i:%s'), STATUS, \
     ON_COMPLETION, EVENT_COMMENT FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?";

fn kind(text: &str) -> StoredRoutineKind {
    if text.eq_ignore_ascii_case("PROCEDURE") {
        StoredRoutineKind::Procedure
    } else {
        StoredRoutineKind::Function
    }
}

/// The database's functions and procedures, keyed by [`StoredRoutine::key`].
pub(super) async fn routines(
    conn: &mut Conn,
    database: &str,
) -> Result<BTreeMap<QualifiedName, StoredRoutine>, Error> {
    type Params = BTreeMap<i64, MysqlParameter>;
    let mut parameters: BTreeMap<QualifiedName, Params> = BTreeMap::new();
    for row in rows(conn, PARAMETERS, database).await? {
        let kind = kind(&req::<String>(&row, 1)?);
        let key = StoredRoutine::key_for(kind, &req::<String>(&row, 0)?);
        let parameter = MysqlParameter {
            mode: match kind {
                StoredRoutineKind::Procedure => Some(text(&row, 3)?.unwrap_or_else(|| "IN".to_owned())),
                StoredRoutineKind::Function => None,
            },
            name: req(&row, 4)?,
            data_type: mysql_type(&req::<String>(&row, 5)?),
        };
        let position = int(&row, 2)?.unwrap_or_default();
        parameters.entry(key).or_default().insert(position, parameter);
    }
    let mut out = BTreeMap::new();
    for row in rows(conn, ROUTINES, database).await? {
        let kind = kind(&req::<String>(&row, 1)?);
        let name: String = req(&row, 0)?;
        let key = StoredRoutine::key_for(kind, &name);
        let list: Vec<MysqlParameter> = parameters
            .remove(&key)
            .unwrap_or_default()
            .into_values()
            .collect();
        let routine = StoredRoutine {
            name,
            kind,
            parameters: mysql_parameter_list(&list),
            returns: match kind {
                StoredRoutineKind::Function => text(&row, 2)?.map(|t| mysql_type(&t)),
                StoredRoutineKind::Procedure => None,
            },
            deterministic: text(&row, 4)?.is_some_and(|d| d.eq_ignore_ascii_case("YES")),
            data_access: text(&row, 5)?.and_then(|d| mysql_data_access(&d)),
            security_invoker: text(&row, 6)?.is_some_and(|s| s.eq_ignore_ascii_case("INVOKER")),
            comment: text(&row, 7)?.filter(|c| !c.is_empty()),
            body: text(&row, 3)?.unwrap_or_default().trim().to_owned(),
        };
        out.insert(key, routine);
    }
    Ok(out)
}

/// The database's events, keyed by name.
pub(super) async fn events(conn: &mut Conn, database: &str) -> Result<BTreeMap<QualifiedName, Event>, Error> {
    let mut out = BTreeMap::new();
    for row in rows(conn, EVENTS, database).await? {
        let name: String = req(&row, 0)?;
        let one_time = text(&row, 2)?.is_some_and(|t| t.eq_ignore_ascii_case("ONE TIME"));
        let schedule = if one_time {
            format!("AT '{}'", text(&row, 3)?.unwrap_or_default())
        } else {
            // INTERVAL_VALUE is printed as `SHOW CREATE EVENT` does: `1`, or `'1:30'` quoted.
            format!(
                "EVERY {} {}",
                text(&row, 4)?.unwrap_or_default(),
                text(&row, 5)?.unwrap_or_default()
            )
        };
        let status = match text(&row, 8)?.unwrap_or_default().to_ascii_uppercase().as_str() {
            "DISABLED" => Some("DISABLE".to_owned()),
            "SLAVESIDE_DISABLED" => Some("DISABLE ON SLAVE".to_owned()),
            _ => None,
        };
        let event = Event {
            name: name.clone(),
            schedule,
            starts: if one_time { None } else { text(&row, 6)? },
            ends: if one_time { None } else { text(&row, 7)? },
            preserve: text(&row, 9)?.is_some_and(|c| c.eq_ignore_ascii_case("PRESERVE")),
            status,
            comment: text(&row, 10)?.filter(|c| !c.is_empty()),
            body: text(&row, 1)?.unwrap_or_default().trim().to_owned(),
        };
        out.insert(QualifiedName::new("", name), event);
    }
    Ok(out)
}
