//! MySQL stored routines, events and view options.
//!
//! Routines are created in PostgreSQL's routine phase (right after the enums: MySQL checks no
//! table a body names until it runs, and a view or trigger may call one) and dropped after the
//! tables; events are created after everything else and dropped before any table changes. A
//! changed routine or event is dropped and created again. No `DEFINER` is written: the applying
//! user becomes the definer, as in a restore by that user.

use super::sql::Sql;
use super::{Out, stmt};
use crate::diff::{DiffCategory as C, SchemaDiff};
use crate::model::{Dialect, Event, Index, QualifiedName, StoredRoutine, ViewOptions};
use crate::plan::{PlannedStatement, Severity};

const SQL: Sql = Sql {
    dialect: Dialect::Mysql,
};

/// Creates the routines added, and drops and creates again those that change.
pub(super) fn routines(diff: &SchemaDiff, out: &mut Out) {
    for r in &diff.stored_routines_added {
        out.push(
            C::FunctionsAdded,
            stmt(create_routine(r), Severity::Safe, "creates a routine"),
        );
    }
    for c in &diff.stored_routines_modified {
        let reason = "drops a routine to create it again with its new definition; callers in between fail";
        out.push(
            C::FunctionsModified,
            stmt(drop_routine(&c.from), Severity::Warning, reason),
        );
        out.push(
            C::FunctionsModified,
            stmt(create_routine(&c.to), Severity::Warning, reason),
        );
    }
}

/// Drops the routines no longer declared.
pub(super) fn routine_drops(diff: &SchemaDiff, out: &mut Out) {
    for r in &diff.stored_routines_removed {
        let s = stmt(
            drop_routine(r),
            Severity::Destructive,
            "drops a routine no longer declared; its callers fail",
        );
        out.push(C::FunctionsRemoved, s);
    }
}

/// Drops the events that go or change (before the tables they may read change).
pub(super) fn event_drops(diff: &SchemaDiff, out: &mut Out) {
    for e in &diff.events_removed {
        let s = stmt(
            drop_event(e),
            Severity::Destructive,
            "drops an event no longer declared; the scheduler stops running it",
        );
        out.push(C::FunctionsRemoved, s);
    }
    for c in &diff.events_modified {
        let s = stmt(
            drop_event(&c.from),
            Severity::Warning,
            "drops an event to create it again with its new definition",
        );
        out.push(C::FunctionsModified, s);
    }
}

/// Creates the events added and those that change.
pub(super) fn event_creates(diff: &SchemaDiff, out: &mut Out) {
    for e in &diff.events_added {
        let s = stmt(
            create_event(e),
            Severity::Warning,
            "creates an event; the scheduler runs it from now on",
        );
        out.push(C::FunctionsAdded, s);
    }
    for c in &diff.events_modified {
        let s = stmt(
            create_event(&c.to),
            Severity::Warning,
            "creates an event again with its new definition",
        );
        out.push(C::FunctionsModified, s);
    }
}

fn kind(r: &StoredRoutine) -> &'static str {
    r.kind.keyword()
}

/// `CREATE FUNCTION|PROCEDURE` with every characteristic that is not the default.
pub(crate) fn create_routine(r: &StoredRoutine) -> String {
    let mut s = format!("CREATE {} {}({})", kind(r), SQL.ident(&r.name), r.parameters);
    if let Some(returns) = &r.returns {
        s.push_str(&format!(" RETURNS {returns}"));
    }
    if r.deterministic {
        s.push_str("\n    DETERMINISTIC");
    }
    if let Some(access) = &r.data_access {
        s.push_str(&format!("\n    {access}"));
    }
    if r.security_invoker {
        s.push_str("\n    SQL SECURITY INVOKER");
    }
    if let Some(comment) = &r.comment {
        s.push_str(&format!("\n    COMMENT {}", SQL.string(comment)));
    }
    s.push('\n');
    s.push_str(&r.body);
    s
}

fn drop_routine(r: &StoredRoutine) -> String {
    format!("DROP {} {}", kind(r), SQL.ident(&r.name))
}

/// `CREATE EVENT` with its schedule, completion, status and comment.
pub(crate) fn create_event(e: &Event) -> String {
    let mut s = format!("CREATE EVENT {} ON SCHEDULE {}", SQL.ident(&e.name), e.schedule);
    if let Some(starts) = &e.starts {
        s.push_str(&format!(" STARTS {}", SQL.string(starts)));
    }
    if let Some(ends) = &e.ends {
        s.push_str(&format!(" ENDS {}", SQL.string(ends)));
    }
    s.push_str(if e.preserve {
        " ON COMPLETION PRESERVE"
    } else {
        " ON COMPLETION NOT PRESERVE"
    });
    s.push(' ');
    s.push_str(e.status.as_deref().unwrap_or("ENABLE"));
    if let Some(comment) = &e.comment {
        s.push_str(&format!(" COMMENT {}", SQL.string(comment)));
    }
    s.push_str(" DO ");
    s.push_str(&e.body);
    s
}

fn drop_event(e: &Event) -> String {
    format!("DROP EVENT {}", SQL.ident(&e.name))
}

/// What stands between `CREATE` and `VIEW` for a view with `options` (`ALGORITHM=MERGE SQL
/// SECURITY INVOKER `), and what follows its query (`\nWITH CASCADED CHECK OPTION`).
pub(super) fn view_clauses(options: Option<&ViewOptions>) -> (String, String) {
    let Some(o) = options else {
        return (String::new(), String::new());
    };
    let mut before = String::new();
    if let Some(a) = &o.algorithm {
        before.push_str(&format!("ALGORITHM={a} "));
    }
    if o.security_invoker {
        before.push_str("SQL SECURITY INVOKER ");
    }
    let after = o
        .check_option
        .as_ref()
        .map(|c| format!("\nWITH {c} CHECK OPTION"))
        .unwrap_or_default();
    (before, after)
}

/// `CREATE INDEX` as the dialect writes it, with the index's comment on MySQL (where a comment is
/// part of the index: there is no statement that sets it alone).
pub(super) fn create_index(
    diff: &SchemaDiff,
    dialect: Dialect,
    table: &QualifiedName,
    i: &Index,
) -> PlannedStatement {
    let mut s = super::create_index(dialect, table, i);
    if dialect == Dialect::Mysql
        && let Some(comment) = diff
            .mysql_index_comments
            .get(&table.name)
            .and_then(|c| c.get(&i.name))
    {
        // The index options come before the algorithm clause.
        let online = s.sql.strip_suffix(super::ONLINE_INDEX).map(str::to_owned);
        let comment = format!(" COMMENT {}", SQL.string(comment));
        s.sql = match online {
            Some(base) => format!("{base}{comment}{}", super::ONLINE_INDEX),
            None => format!("{}{comment}", s.sql),
        };
    }
    if !diff.online(table)
        && let Some(plain) = s.sql.strip_suffix(super::ONLINE_INDEX)
    {
        s.sql = plain.to_owned();
    }
    s
}

/// Sets or clears the comment of a MySQL index that is otherwise kept: dropped and added again in
/// one `ALTER TABLE`, so the table is never without it.
pub(super) fn index_comment_rebuilds(diff: &SchemaDiff, out: &mut Out) {
    for r in &diff.mysql_index_rebuilds {
        let i = &r.index;
        let kind = match i.method.as_deref() {
            Some("fulltext") => "FULLTEXT ",
            Some("spatial") => "SPATIAL ",
            _ if i.unique => "UNIQUE ",
            _ => "",
        };
        let mut sql = format!(
            "ALTER TABLE {} DROP INDEX {name}, ADD {kind}INDEX {name} {}",
            SQL.qualified(&r.table),
            SQL.index_parts(&i.parts),
            name = SQL.ident(&i.name),
        );
        if i.method.as_deref() == Some("hash") {
            sql.push_str(" USING HASH");
        }
        if let Some(comment) = diff
            .mysql_index_comments
            .get(&r.table.name)
            .and_then(|c| c.get(&i.name))
        {
            sql.push_str(&format!(" COMMENT {}", SQL.string(comment)));
        }
        let s = stmt(sql, Severity::Warning, "rebuilds an index to change its comment");
        out.push(C::IndexesModified, s);
    }
}
