//! Views, routines and triggers: matched by name (routines by name and identity arguments),
//! compared by their canonical text.
//!
//! A view is rebuilt (dropped before the table changes, created after them) when its definition
//! changes, and also when a table or view it reads is dropped or has a column dropped or retyped,
//! because PostgreSQL refuses those changes while the view exists. Views are created in
//! dependency order and dropped in the reverse.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use sqlparser::ast::visit_relations;
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use super::{ColumnAspect, SchemaDiff};
use crate::model::{QualifiedName, Routine, RoutineKind, Schema, Trigger, View};

/// Why a view is dropped and created again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewRebuild {
    /// Its definition (or kind) changes.
    Definition,
    /// Only its comment changes: no rebuild, a `COMMENT ON`.
    Comment,
    /// A table or view it reads changes in a way the server refuses under a view.
    Dependency,
}

/// A view whose definition or comment changes, or that must be rebuilt for a dependency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewChange {
    /// The actual view.
    pub from: View,
    /// The desired view.
    pub to: View,
    /// Why it is listed.
    pub rebuild: ViewRebuild,
}

/// A routine whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutineChange {
    /// The actual routine.
    pub from: Routine,
    /// The desired routine.
    pub to: Routine,
}

impl RoutineChange {
    /// Whether `CREATE OR REPLACE` can make the change (PostgreSQL refuses a new result type,
    /// new argument names or defaults, and a function becoming a procedure).
    pub fn replaceable(&self) -> bool {
        // An aggregate is created anew: its result type follows options the model does not
        // resolve, and `CREATE OR REPLACE` refuses a new one.
        self.from.kind == self.to.kind
            && self.to.kind != RoutineKind::Aggregate
            && self.from.returns == self.to.returns
            && self.from.arguments == self.to.arguments
    }
}

/// A trigger whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggerChange {
    /// The actual trigger.
    pub from: Trigger,
    /// The desired trigger.
    pub to: Trigger,
}

/// Whether two routines are the same. An aggregate's result is not part of it: the model reads
/// none from a document (it follows from the options), and a signature brought to the server's
/// spelling comes back with the one the catalog prints.
fn same_routine(have: &Routine, want: &Routine) -> bool {
    if want.kind == RoutineKind::Aggregate && have.kind == RoutineKind::Aggregate {
        return Routine {
            returns: None,
            ..have.clone()
        } == Routine {
            returns: None,
            ..want.clone()
        };
    }
    have == want
}

/// Fills the view, routine and trigger parts of `d`; the table parts must be filled already.
pub(super) fn diff_programs(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    diff_views(desired, actual, d);
    for (key, want) in &desired.routines {
        match actual.routines.get(key) {
            None => d.routines_added.push(want.clone()),
            Some(have) if !same_routine(have, want) => d.routines_modified.push(RoutineChange {
                from: have.clone(),
                to: want.clone(),
            }),
            Some(_) => {}
        }
    }
    d.routines_removed = actual
        .routines
        .iter()
        .filter(|(k, _)| !desired.routines.contains_key(*k))
        .map(|(_, r)| r.clone())
        .collect();
    let dropped: BTreeSet<&QualifiedName> = d.tables_removed.iter().map(|t| &t.name).collect();
    for (key, want) in &desired.triggers {
        match actual.triggers.get(key) {
            None => d.triggers_added.push(want.clone()),
            // A comment alone is a change too (planned as `COMMENT ON TRIGGER`, the trigger kept).
            Some(have) if have.definition != want.definition || have.comment != want.comment => {
                d.triggers_modified.push(TriggerChange {
                    from: have.clone(),
                    to: want.clone(),
                });
            }
            Some(_) => {}
        }
    }
    // A trigger goes with its table: a DROP TABLE drops it.
    d.triggers_removed = actual
        .triggers
        .iter()
        .filter(|(k, t)| !desired.triggers.contains_key(*k) && !dropped.contains(&t.table))
        .map(|(_, t)| t.clone())
        .collect();
}

fn diff_views(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    let changed_tables = tables_changed_under_views(d);
    // Parsing every query is the cost here; an unchanged set of views needs none of it.
    let same_views = desired.views.len() == actual.views.len()
        && desired.views.iter().all(|(name, want)| {
            actual.views.get(name).is_some_and(|have| {
                have.definition == want.definition
                    && have.materialized == want.materialized
                    && have.comment == want.comment
                    && !super::mysql::view_options_differ(desired, actual, &name.name)
            })
        });
    if same_views && changed_tables.is_empty() {
        return;
    }
    let actual_reads: BTreeMap<&QualifiedName, BTreeSet<QualifiedName>> =
        actual.views.values().map(|v| (&v.name, relations(v))).collect();
    // Views rebuilt or dropped, then every live view that reads one of them, to a fixed point.
    let mut going: BTreeSet<QualifiedName> = BTreeSet::new();
    for (name, have) in &actual.views {
        let reads_changed = actual_reads[name].iter().any(|r| changed_tables.contains(r));
        let redefined =
            desired.views.get(name).is_none_or(|want| {
                want.definition != have.definition || want.materialized != have.materialized
            }) || super::mysql::view_options_differ(desired, actual, &name.name);
        if reads_changed || redefined {
            going.insert(name.clone());
        }
    }
    loop {
        let more: Vec<QualifiedName> = actual_reads
            .iter()
            .filter(|(name, reads)| !going.contains(**name) && reads.iter().any(|r| going.contains(r)))
            .map(|(name, _)| (*name).clone())
            .collect();
        if more.is_empty() {
            break;
        }
        going.extend(more);
    }

    for name in view_order(desired.views.values()) {
        let want = &desired.views[&name];
        match actual.views.get(&name) {
            None => d.views_added.push(want.clone()),
            Some(have) => {
                let rebuild = if want.definition != have.definition
                    || want.materialized != have.materialized
                    || super::mysql::view_options_differ(desired, actual, &name.name)
                {
                    ViewRebuild::Definition
                } else if going.contains(&name) {
                    ViewRebuild::Dependency
                } else if want.comment != have.comment {
                    ViewRebuild::Comment
                } else {
                    continue;
                };
                d.views_modified.push(ViewChange {
                    from: have.clone(),
                    to: want.clone(),
                    rebuild,
                });
            }
        }
    }
    let mut removed: Vec<View> = view_order(actual.views.values())
        .into_iter()
        .filter(|n| !desired.views.contains_key(n))
        .map(|n| actual.views[&n].clone())
        .collect();
    removed.reverse();
    d.views_removed = removed;
}

/// Tables (and views) whose change the server refuses while a view reads them: dropped tables,
/// tables losing a column, and columns changing type.
fn tables_changed_under_views(d: &SchemaDiff) -> BTreeSet<QualifiedName> {
    let mut out: BTreeSet<QualifiedName> = d.tables_removed.iter().map(|t| t.name.clone()).collect();
    out.extend(d.columns_removed.iter().map(|c| c.table.clone()));
    out.extend(
        d.columns_modified
            .iter()
            .filter(|c| {
                c.changes.contains(&ColumnAspect::Type) || c.changes.contains(&ColumnAspect::Collation)
            })
            .map(|c| c.table.clone()),
    );
    for e in &d.enums_modified {
        if let super::EnumChangeMethod::Recreate(uses) = &e.method {
            out.extend(uses.iter().map(|u| u.table.clone()));
        }
    }
    out
}

/// The views' names, every view after the views it reads (ties by name; a cycle, which the server
/// cannot hold, is broken by name).
pub fn view_order<'a>(views: impl IntoIterator<Item = &'a View>) -> Vec<QualifiedName> {
    let views: BTreeMap<&QualifiedName, &View> = views.into_iter().map(|v| (&v.name, v)).collect();
    let reads: BTreeMap<&QualifiedName, BTreeSet<QualifiedName>> = views
        .iter()
        .map(|(n, v)| {
            let mut r = relations(v);
            r.retain(|x| x != *n && views.contains_key(x));
            (*n, r)
        })
        .collect();
    let mut placed: BTreeSet<QualifiedName> = BTreeSet::new();
    let mut order = Vec::with_capacity(views.len());
    while order.len() < views.len() {
        let next = reads
            .iter()
            .find(|(n, r)| !placed.contains(**n) && r.iter().all(|x| placed.contains(x)))
            .or_else(|| reads.iter().find(|(n, _)| !placed.contains(**n)))
            .map(|(n, _)| (*n).clone());
        let Some(name) = next else { break };
        placed.insert(name.clone());
        order.push(name);
    }
    order
}

/// The tables and views a view's query reads. Unqualified names are in the view's own namespace
/// on MySQL and in `public` on PostgreSQL (where dumps and the inspector qualify every name).
/// When the query does not parse here, every word of it that could be a name counts, which errs
/// towards rebuilding.
pub fn relations(view: &View) -> BTreeSet<QualifiedName> {
    let default_schema = if view.name.schema.is_empty() { "" } else { "public" };
    let mut out = BTreeSet::new();
    match Parser::parse_sql(&GenericDialect {}, &view.definition) {
        Ok(statements) => {
            let _ = visit_relations(&statements, |name| {
                let parts: Vec<String> = name
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
                    .collect();
                match parts.as_slice() {
                    [table] => out.insert(QualifiedName::new(default_schema, table.clone())),
                    // MySQL's one namespace is the URL's database, whatever a name says.
                    [.., schema, table] => {
                        let schema = if default_schema.is_empty() {
                            ""
                        } else {
                            schema.as_str()
                        };
                        out.insert(QualifiedName::new(schema, table.clone()))
                    }
                    [] => false,
                };
                ControlFlow::<()>::Continue(())
            });
        }
        Err(_) => {
            let words = view
                .definition
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
                .filter(|w| !w.is_empty());
            for w in words {
                match w.rsplit_once('.') {
                    Some((schema, table)) => {
                        let schema = if default_schema.is_empty() { "" } else { schema };
                        out.insert(QualifiedName::new(schema, table));
                        out.insert(QualifiedName::new(default_schema, schema));
                    }
                    None => {
                        out.insert(QualifiedName::new(default_schema, w));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(schema: &str, name: &str, definition: &str) -> View {
        View {
            name: QualifiedName::new(schema, name),
            materialized: false,
            definition: definition.to_owned(),
            comment: None,
        }
    }

    #[test]
    fn relations_are_qualified_per_dialect() {
        let pg = view("app", "v", "SELECT a.x FROM app.a JOIN b ON true");
        let found = relations(&pg);
        assert!(found.contains(&QualifiedName::new("app", "a")));
        assert!(found.contains(&QualifiedName::new("public", "b")));
        let my = view("", "v", "select `t`.`a` AS `a` from `shop`.`t`");
        assert_eq!(relations(&my), BTreeSet::from([QualifiedName::new("", "t")]));
    }

    #[test]
    fn views_come_after_the_views_they_read() {
        let a = view("public", "a", "SELECT 1 AS x FROM public.z_view");
        let z = view("public", "z_view", "SELECT 1 AS x FROM public.t");
        let order = view_order([&a, &z]);
        assert_eq!(order, vec![z.name.clone(), a.name.clone()]);
    }
}
