//! Table order along the foreign-key graph.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{QualifiedName, Table};

/// The tables' names with every referenced table before the tables that reference it, and every
/// partitioned table before its partitions.
///
/// Only references between the given tables count; self-references are ignored. Ties are broken by
/// name, and a cycle is broken by taking its smallest remaining name, so the order is a function of
/// the tables alone.
pub fn fk_order<'a>(tables: impl IntoIterator<Item = &'a Table>) -> Vec<QualifiedName> {
    let tables: BTreeMap<&QualifiedName, &Table> = tables.into_iter().map(|t| (&t.name, t)).collect();
    // waiting[t]: how many distinct tables t references that are not placed yet.
    let mut waiting: BTreeMap<&QualifiedName, usize> = BTreeMap::new();
    let mut children: BTreeMap<&QualifiedName, BTreeSet<&QualifiedName>> = BTreeMap::new();
    let mut parents: BTreeMap<&QualifiedName, BTreeSet<&QualifiedName>> = BTreeMap::new();
    for (name, table) in &tables {
        // A partition comes after its parent like a table after the tables it references.
        let refs: BTreeSet<&QualifiedName> = table
            .foreign_keys
            .values()
            .map(|fk| &fk.referenced_table)
            .chain(table.partition_of.as_ref().map(|p| &p.parent))
            .filter(|r| *r != *name && tables.contains_key(r))
            .collect();
        waiting.insert(name, refs.len());
        for parent in &refs {
            children.entry(parent).or_default().insert(name);
        }
        parents.insert(name, refs);
    }
    let mut ready: BTreeSet<&QualifiedName> = waiting
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(t, _)| *t)
        .collect();
    let mut order = Vec::with_capacity(tables.len());
    while !waiting.is_empty() {
        // With nothing ready, some remaining tables form a cycle: release its smallest table.
        let next = ready.pop_first().or_else(|| cycle_member(&waiting, &parents));
        let Some(name) = next else { break };
        if waiting.remove(name).is_none() {
            continue;
        }
        order.push(name.clone());
        for child in children.get(name).into_iter().flatten() {
            if let Some(n) = waiting.get_mut(child) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    ready.insert(child);
                }
            }
        }
    }
    order
}

/// The smallest table of a cycle among the waiting tables (each of which waits on another): walk
/// from the smallest waiting table along its smallest waiting parent until a table repeats.
fn cycle_member<'a>(
    waiting: &BTreeMap<&'a QualifiedName, usize>,
    parents: &BTreeMap<&'a QualifiedName, BTreeSet<&'a QualifiedName>>,
) -> Option<&'a QualifiedName> {
    let mut path: Vec<&QualifiedName> = Vec::new();
    let mut current = *waiting.keys().next()?;
    loop {
        if let Some(start) = path.iter().position(|n| *n == current) {
            return path[start..].iter().min().copied();
        }
        path.push(current);
        let next = parents
            .get(current)
            .and_then(|p| p.iter().find(|n| waiting.contains_key(*n)));
        match next {
            Some(n) => current = n,
            None => return Some(current),
        }
    }
}
