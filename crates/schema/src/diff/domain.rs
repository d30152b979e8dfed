//! Domains: matched by name, compared part by part.

use serde::{Deserialize, Serialize};

use super::SchemaDiff;
use crate::model::{Domain, Schema};

/// A domain whose definition changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DomainChange {
    /// The actual domain.
    pub from: Domain,
    /// The desired domain.
    pub to: Domain,
}

impl DomainChange {
    /// Whether `ALTER DOMAIN` can make the change: a base type or collation cannot change in place.
    pub fn alterable(&self) -> bool {
        self.from.base == self.to.base && self.from.collation == self.to.collation
    }
}

/// Fills the domain parts of `d`.
pub(super) fn diff_domains(desired: &Schema, actual: &Schema, d: &mut SchemaDiff) {
    for (name, want) in &desired.domains {
        match actual.domains.get(name) {
            None => d.domains_added.push(want.clone()),
            Some(have) if !super::loose::same_domain(have, want) => d.domains_modified.push(DomainChange {
                from: have.clone(),
                to: want.clone(),
            }),
            Some(_) => {}
        }
    }
    d.domains_removed = actual
        .domains
        .iter()
        .filter(|(n, _)| !desired.domains.contains_key(*n))
        .map(|(_, v)| v.clone())
        .collect();
}
