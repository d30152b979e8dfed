//! PostgreSQL domains: a base type with a default, NOT NULL and named checks, which columns use as
//! their type (a column of a domain type reads as [`super::DataType::Other`] named like it).
//!
//! The base type, default and check expressions are held in the canonical forms of
//! [`crate::normalize`], so a hand-written domain and the catalog's compare equal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::keyed::Keyed;
use super::name::QualifiedName;
use super::value::DefaultValue;

/// A `CREATE DOMAIN`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    /// The domain's name.
    pub name: QualifiedName,
    /// The base type, canonical ([`crate::normalize::domain_base`]).
    pub base: String,
    /// The collation, when not the base type's (`pg_catalog."C"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// The default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<DefaultValue>,
    /// `NOT NULL`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_null: bool,
    /// CHECK constraints by name: the expression, canonical ([`crate::normalize::domain_check`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, String>,
    /// The domain's comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

impl Keyed for Domain {
    fn key(&self) -> QualifiedName {
        self.name.clone()
    }
}
