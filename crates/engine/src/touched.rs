//! The part of a schema a plan between two schemas touches, so a rehearsal can recreate that part
//! on the dev database instead of every table (a column added to one table of 5,000 rehearses on
//! a handful).
//!
//! An object is touched when a statement of the plan names it. The part also holds what depends on a
//! touched object (views, routines and triggers, transitively, and the tables that name it
//! directly, such as a foreign key's table, whose constraint a change may break), and then
//! everything those need to be created (what they name, transitively). "Names" is read from the
//! object's model as words, so a column that happens to share a table's name only adds that table:
//! the part may be larger than needed, never smaller. A rehearsal on the part that does not pass
//! is repeated on the whole schema before it counts (`rehearse`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use ptah_schema::{Plan, QualifiedName, Schema};

/// The kinds of keyed objects, in [`Schema`]'s maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Enum,
    Table,
    Domain,
    View,
    Routine,
    Trigger,
    Sequence,
    StoredRoutine,
    Event,
}

type Key = (Kind, QualifiedName);

/// One object of either schema: the words of both versions.
struct Object {
    words: BTreeSet<String>,
}

/// `observed` and `desired` restricted to what `plan` (between them) touches, or `None` when that
/// is at least half of their tables (a rehearsal of the whole is then as cheap).
pub(crate) fn touched(observed: &Schema, desired: &Schema, plan: &Plan) -> Option<(Schema, Schema)> {
    let objects = objects(observed, desired);
    let planned: BTreeSet<String> = plan.statements.iter().flat_map(|s| words(&s.sql)).collect();
    let mut by_name: BTreeMap<&str, Vec<&Key>> = BTreeMap::new();
    for key in objects.keys() {
        by_name.entry(bare(&key.1.name)).or_default().push(key);
    }
    let names = |key: &Key| -> Vec<&Key> {
        objects[key]
            .words
            .iter()
            .filter_map(|w| by_name.get(w.as_str()))
            .flatten()
            .copied()
            .filter(|k| *k != key)
            .collect()
    };
    let mut named_by: BTreeMap<&Key, Vec<&Key>> = BTreeMap::new();
    for key in objects.keys() {
        for target in names(key) {
            named_by.entry(target).or_default().push(key);
        }
    }
    let mut part: BTreeSet<&Key> = objects
        .keys()
        .filter(|k| planned.contains(bare(&k.1.name)))
        .collect();
    // What depends on a touched object: programs transitively, tables one step.
    let mut queue: VecDeque<&Key> = part.iter().copied().collect();
    while let Some(key) = queue.pop_front() {
        for &dependent in named_by.get(key).into_iter().flatten() {
            if part.insert(dependent) && dependent.0 != Kind::Table {
                queue.push_back(dependent);
            }
        }
    }
    // What the part needs to be created, transitively.
    let mut queue: VecDeque<&Key> = part.iter().copied().collect();
    while let Some(key) = queue.pop_front() {
        for target in names(key) {
            if part.insert(target) {
                queue.push_back(target);
            }
        }
    }
    let tables = objects.keys().filter(|k| k.0 == Kind::Table).count();
    let in_part = part.iter().filter(|k| k.0 == Kind::Table).count();
    if in_part * 2 >= tables {
        return None;
    }
    let keep = |kind: Kind, name: &QualifiedName| part.contains(&(kind, name.clone()));
    Some((restrict(observed, &keep), restrict(desired, &keep)))
}

/// A routine's key carries its arguments; the name other objects use is before them.
fn bare(name: &str) -> &str {
    name.split('(').next().unwrap_or(name)
}

fn objects(observed: &Schema, desired: &Schema) -> BTreeMap<Key, Object> {
    let mut out = BTreeMap::new();
    add(&mut out, Kind::Enum, &observed.enums, &desired.enums);
    add(&mut out, Kind::Table, &observed.tables, &desired.tables);
    add(&mut out, Kind::Domain, &observed.domains, &desired.domains);
    add(&mut out, Kind::View, &observed.views, &desired.views);
    add(&mut out, Kind::Routine, &observed.routines, &desired.routines);
    add(&mut out, Kind::Trigger, &observed.triggers, &desired.triggers);
    add(&mut out, Kind::Sequence, &observed.sequences, &desired.sequences);
    add(
        &mut out,
        Kind::StoredRoutine,
        &observed.stored_routines,
        &desired.stored_routines,
    );
    add(&mut out, Kind::Event, &observed.events, &desired.events);
    out
}

fn add<T: std::fmt::Debug>(
    out: &mut BTreeMap<Key, Object>,
    kind: Kind,
    observed: &BTreeMap<QualifiedName, T>,
    desired: &BTreeMap<QualifiedName, T>,
) {
    for name in observed.keys().chain(desired.keys()) {
        let (a, b) = (observed.get(name), desired.get(name));
        out.entry((kind, name.clone())).or_insert_with(|| Object {
            words: words(&format!("{a:?} {b:?}")),
        });
    }
}

/// The identifier-like words of `text`, as written and lowercased (an unquoted name folds).
fn words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$')) {
        if !word.is_empty() {
            out.insert(word.to_lowercase());
            out.insert(word.to_owned());
        }
    }
    out
}

/// `schema` with only the objects `keep` accepts; namespaces, extensions, view options and
/// rename hints are kept whole.
fn restrict(schema: &Schema, keep: &impl Fn(Kind, &QualifiedName) -> bool) -> Schema {
    fn only<T: Clone>(
        map: &BTreeMap<QualifiedName, T>,
        kind: Kind,
        keep: &impl Fn(Kind, &QualifiedName) -> bool,
    ) -> BTreeMap<QualifiedName, T> {
        map.iter()
            .filter(|(k, _)| keep(kind, k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
    Schema {
        namespaces: schema.namespaces.clone(),
        extensions: schema.extensions.clone(),
        enums: only(&schema.enums, Kind::Enum, keep),
        tables: only(&schema.tables, Kind::Table, keep),
        domains: only(&schema.domains, Kind::Domain, keep),
        views: only(&schema.views, Kind::View, keep),
        routines: only(&schema.routines, Kind::Routine, keep),
        triggers: only(&schema.triggers, Kind::Trigger, keep),
        sequences: only(&schema.sequences, Kind::Sequence, keep),
        view_options: schema.view_options.clone(),
        stored_routines: only(&schema.stored_routines, Kind::StoredRoutine, keep),
        events: only(&schema.events, Kind::Event, keep),
        renames: schema.renames.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptah_schema::{Dialect, PlanOptions, read::sql};

    fn read(text: &str) -> Schema {
        sql::parse(Dialect::Postgres, "s.sql", text).expect("reads")
    }

    fn part(observed: &Schema, desired: &Schema) -> Option<(Schema, Schema)> {
        let plan =
            ptah_schema::plan(desired, observed, Dialect::Postgres, &PlanOptions::default()).expect("plans");
        touched(observed, desired, &plan)
    }

    fn tables(s: &Schema) -> Vec<&str> {
        s.tables.keys().map(|k| k.name.as_str()).collect()
    }

    const BASE: &str = "CREATE TABLE customers (id int PRIMARY KEY);\n\
        CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers (id));\n\
        CREATE TABLE lines (id int PRIMARY KEY, order_id int REFERENCES orders (id));\n\
        CREATE TABLE notes (id int PRIMARY KEY, body text);\n\
        CREATE TABLE tags (id int PRIMARY KEY);\n\
        CREATE TABLE audit (id int PRIMARY KEY);\n\
        CREATE TABLE sessions (id int PRIMARY KEY);\n\
        CREATE TABLE settings (id int PRIMARY KEY);\n\
        CREATE VIEW open_orders AS SELECT id FROM orders;\n";

    #[test]
    fn a_change_takes_what_names_it_and_what_it_needs() {
        let observed = read(BASE);
        let desired = read(&BASE.replace(
            "CREATE TABLE orders (id int PRIMARY KEY,",
            "CREATE TABLE orders (id int PRIMARY KEY, note text,",
        ));
        let (o, d) = part(&observed, &desired).expect("a part");
        // orders changed; lines names it (one step), the view depends on it; customers is needed.
        assert_eq!(tables(&o), ["customers", "lines", "orders"]);
        assert_eq!(tables(&d), tables(&o));
        assert_eq!(o.views.len(), 1);
        assert_eq!(
            d.tables
                .values()
                .find(|t| t.name.name == "orders")
                .map(|t| t.columns.len()),
            Some(3)
        );
    }

    #[test]
    fn a_new_table_takes_only_what_it_names() {
        let observed = read(BASE);
        let desired = read(&format!(
            "{BASE}CREATE TABLE items (id int PRIMARY KEY, tag_id int REFERENCES tags (id));\n"
        ));
        let (o, d) = part(&observed, &desired).expect("a part");
        assert_eq!(tables(&o), ["tags"]);
        assert_eq!(tables(&d), ["items", "tags"]);
    }

    #[test]
    fn a_change_of_most_tables_is_the_whole_schema() {
        let observed = read(BASE);
        let desired = read(&BASE.replace("id int PRIMARY KEY", "id bigint PRIMARY KEY"));
        assert!(part(&observed, &desired).is_none());
    }
}
