//! Statements for views, routines and triggers, on both dialects.
//!
//! Their phases in a plan: triggers and views that go are dropped before any table changes (views
//! each before the views they read), routines are created right after the enums (a default or a
//! check may call one) unless they need a table the plan creates, views and triggers are created
//! after every table change, and routines that go are dropped after the tables.

use std::collections::BTreeMap;

use super::sql::Sql;
use super::{Out, stmt};
use crate::diff::{DiffCategory as C, SchemaDiff, TriggerChange, ViewRebuild, view_order};
use crate::model::{Dialect, QualifiedName, Routine, RoutineKind, Trigger, View};
use crate::plan::{PlannedStatement, Severity};

mod routine;

pub use routine::create_routine_statement;
use routine::{create_routine, routine_kind};

/// Drops the triggers and views that are removed or rebuilt.
pub(super) fn drops(diff: &SchemaDiff, sql: Sql, out: &mut Out) {
    if sql.dialect == Dialect::Mysql {
        super::stored::event_drops(diff, out);
    }
    for t in &diff.triggers_removed {
        let s = stmt(
            drop_trigger(sql, t),
            Severity::Destructive,
            "drops a trigger no longer declared; writes to its table stop running it",
        );
        out.push(C::TriggersRemoved, s);
    }
    for c in diff.triggers_modified.iter().filter(|c| !comment_only(c)) {
        let s = stmt(
            drop_trigger(sql, &c.from),
            Severity::Warning,
            "drops a trigger to create it again with its new definition",
        );
        out.push(C::TriggersModified, s);
    }
    // Every view that goes, in one order: each before the live views it reads.
    let mut going: BTreeMap<QualifiedName, (C, &View)> = BTreeMap::new();
    for v in &diff.views_removed {
        going.insert(v.name.clone(), (C::ViewsRemoved, v));
    }
    for c in diff
        .views_modified
        .iter()
        .filter(|c| c.rebuild != ViewRebuild::Comment)
    {
        going.insert(c.from.name.clone(), (C::ViewsModified, &c.from));
    }
    let mut order = view_order(going.values().map(|(_, v)| *v));
    order.reverse();
    for name in order {
        let (category, view) = going[&name];
        let (severity, reason) = if category == C::ViewsRemoved {
            (
                Severity::Destructive,
                "drops a view no longer declared; queries that read it fail",
            )
        } else {
            (Severity::Warning, "drops a view to create it again")
        };
        out.push(category, stmt(drop_view(sql, view), severity, reason));
    }
}

/// Creates routines added and replaces routines changed.
pub(super) fn routines(diff: &SchemaDiff, sql: Sql, out: &mut Out) {
    if sql.dialect != Dialect::Postgres {
        super::stored::routines(diff, out);
        return;
    }
    for r in diff.routines_added.iter().filter(|r| !after_tables(diff, r)) {
        add_routine(sql, r, out);
    }
    for c in &diff.routines_modified {
        let comment_only = Routine {
            comment: c.to.comment.clone(),
            ..c.from.clone()
        } == c.to;
        if comment_only {
            out.push(C::FunctionsModified, routine_comment(sql, &c.to));
        } else if c.replaceable() {
            let s = stmt(
                create_routine(sql, &c.to, true),
                Severity::Warning,
                "replaces a routine's body or attributes; every caller runs the new one",
            );
            out.push(C::FunctionsModified, s);
            if c.from.comment != c.to.comment {
                out.push(C::FunctionsModified, routine_comment(sql, &c.to));
            }
        } else {
            let reason = "drops a routine whose signature or result changes, to create it again";
            out.push(
                C::FunctionsModified,
                stmt(drop_routine(sql, &c.from), Severity::Warning, reason),
            );
            let s = stmt(create_routine(sql, &c.to, false), Severity::Warning, reason);
            out.push(C::FunctionsModified, s);
            if c.to.comment.is_some() {
                out.push(C::FunctionsModified, routine_comment(sql, &c.to));
            }
        }
    }
}

fn add_routine(sql: Sql, r: &Routine, out: &mut Out) {
    let s = stmt(create_routine(sql, r, false), Severity::Safe, "creates a routine");
    out.push(C::FunctionsAdded, s);
    if r.comment.is_some() {
        out.push(C::FunctionsAdded, routine_comment(sql, r));
    }
}

/// A new routine that names a table created by the same plan in its signature (`SETOF t`), or
/// reads one in a `LANGUAGE sql` body (the server checks those on creation), cannot come before
/// the tables; it is created after them, before the views.
fn after_tables(diff: &SchemaDiff, r: &Routine) -> bool {
    // An aggregate comes after every function (its support functions may be among those created
    // after the tables) and before the views that call it.
    if r.kind == RoutineKind::Aggregate {
        return true;
    }
    diff.tables_added.iter().any(|t| {
        let qualified = format!("{}.{}", t.name.schema, t.name.name);
        let names = |text: &str| text.contains(&qualified);
        names(&r.arguments)
            || r.returns.as_deref().is_some_and(names)
            || (r.language == "sql" && r.body.contains(&t.name.name))
    })
}

/// Creates the routines that read new tables, the views and triggers added or rebuilt, and sets
/// changed view comments.
pub(super) fn creates(diff: &SchemaDiff, sql: Sql, out: &mut Out) {
    if sql.dialect == Dialect::Postgres {
        let (aggregates, functions): (Vec<&Routine>, Vec<&Routine>) = diff
            .routines_added
            .iter()
            .filter(|r| after_tables(diff, r))
            .partition(|r| r.kind == RoutineKind::Aggregate);
        for r in functions.into_iter().chain(aggregates) {
            add_routine(sql, r, out);
        }
    }
    let mut coming: BTreeMap<QualifiedName, (C, &View, Option<ViewRebuild>)> = BTreeMap::new();
    for v in &diff.views_added {
        coming.insert(v.name.clone(), (C::ViewsAdded, v, None));
    }
    for c in &diff.views_modified {
        coming.insert(c.to.name.clone(), (C::ViewsModified, &c.to, Some(c.rebuild)));
    }
    for name in view_order(coming.values().map(|(_, v, _)| *v)) {
        let (category, view, rebuild) = coming[&name];
        match rebuild {
            Some(ViewRebuild::Comment) => {
                out.push(category, view_comment(sql, view));
            }
            _ => {
                let reason = match rebuild {
                    None => "creates a view",
                    Some(_) if view.materialized => {
                        "creates a materialized view again; its rows are computed anew"
                    }
                    Some(_) => "creates a view again",
                };
                let severity = if rebuild.is_some() {
                    Severity::Warning
                } else {
                    Severity::Safe
                };
                let options = diff.view_options.get(&view.name.name);
                out.push(category, stmt(create_view(sql, view, options), severity, reason));
                if view.comment.is_some() && sql.dialect == Dialect::Postgres {
                    out.push(category, view_comment(sql, view));
                }
            }
        }
    }
    for t in &diff.triggers_added {
        let s = stmt(
            t.definition.clone(),
            Severity::Warning,
            "creates a trigger; writes to its table run it from now on",
        );
        out.push(C::TriggersAdded, s);
        if t.comment.is_some() {
            out.push(C::TriggersAdded, trigger_comment(sql, t));
        }
    }
    for c in &diff.triggers_modified {
        if comment_only(c) {
            out.push(C::TriggersModified, trigger_comment(sql, &c.to));
            continue;
        }
        let s = stmt(
            c.to.definition.clone(),
            Severity::Warning,
            "creates a trigger again with its new definition",
        );
        out.push(C::TriggersModified, s);
        if c.to.comment.is_some() {
            out.push(C::TriggersModified, trigger_comment(sql, &c.to));
        }
    }
    if sql.dialect == Dialect::Mysql {
        super::stored::event_creates(diff, out);
    }
}

/// Drops the routines no longer declared (after the tables, whose defaults may call them).
pub(super) fn routine_drops(diff: &SchemaDiff, sql: Sql, out: &mut Out) {
    if sql.dialect != Dialect::Postgres {
        super::stored::routine_drops(diff, out);
        return;
    }
    // An aggregate goes before the functions it calls, which cannot be dropped while it exists.
    let (aggregates, functions): (Vec<&Routine>, Vec<&Routine>) = diff
        .routines_removed
        .iter()
        .partition(|r| r.kind == RoutineKind::Aggregate);
    for r in aggregates.into_iter().chain(functions) {
        let s = stmt(
            drop_routine(sql, r),
            Severity::Destructive,
            "drops a routine no longer declared; its callers fail",
        );
        out.push(C::FunctionsRemoved, s);
    }
}

fn create_view(sql: Sql, v: &View, options: Option<&crate::model::ViewOptions>) -> String {
    let kind = if v.materialized {
        "MATERIALIZED VIEW"
    } else {
        "VIEW"
    };
    let (before, after) = super::stored::view_clauses(options);
    format!(
        "CREATE {before}{kind} {} AS\n{}{after}",
        sql.qualified(&v.name),
        v.definition
    )
}

fn drop_view(sql: Sql, v: &View) -> String {
    let kind = if v.materialized {
        "MATERIALIZED VIEW"
    } else {
        "VIEW"
    };
    format!("DROP {kind} {}", sql.qualified(&v.name))
}

fn view_comment(sql: Sql, v: &View) -> PlannedStatement {
    let kind = if v.materialized {
        "MATERIALIZED VIEW"
    } else {
        "VIEW"
    };
    let text = v
        .comment
        .as_deref()
        .map_or_else(|| "NULL".to_owned(), |c| sql.string(c));
    let s = format!("COMMENT ON {kind} {} IS {text}", sql.qualified(&v.name));
    stmt(s, Severity::Safe, "sets a view comment")
}

/// Whether a trigger change is its comment alone: one `COMMENT ON TRIGGER`, no rebuilt trigger.
fn comment_only(c: &TriggerChange) -> bool {
    Trigger {
        comment: c.to.comment.clone(),
        ..c.from.clone()
    } == c.to
}

/// `COMMENT ON TRIGGER name ON table IS …` (PostgreSQL).
fn trigger_comment(sql: Sql, t: &Trigger) -> PlannedStatement {
    let text = t
        .comment
        .as_deref()
        .map_or_else(|| "NULL".to_owned(), |c| sql.string(c));
    let s = format!(
        "COMMENT ON TRIGGER {} ON {} IS {text}",
        sql.ident(&t.name),
        sql.qualified(&t.table)
    );
    stmt(s, Severity::Safe, "sets a trigger comment")
}

fn drop_trigger(sql: Sql, t: &Trigger) -> String {
    match sql.dialect {
        Dialect::Postgres => format!(
            "DROP TRIGGER {} ON {}",
            sql.ident(&t.name),
            sql.qualified(&t.table)
        ),
        Dialect::Mysql => format!("DROP TRIGGER {}", sql.ident(&t.name)),
    }
}

fn drop_routine(sql: Sql, r: &Routine) -> String {
    let kind = routine_kind(r);
    format!("DROP {kind} {}({})", sql.qualified(&r.name), r.identity_arguments)
}

fn routine_comment(sql: Sql, r: &Routine) -> PlannedStatement {
    let text = r
        .comment
        .as_deref()
        .map_or_else(|| "NULL".to_owned(), |c| sql.string(c));
    let s = format!(
        "COMMENT ON {} {}({}) IS {text}",
        routine_kind(r),
        sql.qualified(&r.name),
        r.identity_arguments
    );
    stmt(s, Severity::Safe, "sets a routine comment")
}
