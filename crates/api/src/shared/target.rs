//! Which database a resource manages and how the operator coordinates access to it.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use super::{ConfigMapKeySelector, DatabaseEngine, RealmReference, SecretKeySelector};

/// The database a PtahSchema or PtahMigration manages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, KubeSchema)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.coordinationKey) != has(self.realmRef)").message("exactly one of coordinationKey or realmRef must be set"))]
pub struct DatabaseTargetSpec {
    /// The database family (stored as written; unsupported values are reported, not run).
    pub engine: DatabaseEngine,
    /// A non-secret, stable name of the physical database, scoped to the namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        length(min = 1, max = 253),
        regex(pattern = r"^[a-z0-9](?:[a-z0-9._:/-]{0,251}[a-z0-9])?$")
    )]
    pub coordination_key: Option<String>,
    /// A cluster-scoped PtahRealm that grants this namespace the database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realm_ref: Option<RealmReference>,
    /// Declares that this resource manages only part of the database, alongside others.
    #[serde(default)]
    pub shared_realm: bool,
    /// The Secret key holding the connection URL (read by the kubelet, never the manager).
    pub url_from: SecretKeySelector,
    /// A ConfigMap key holding the PEM CA bundle that the URL's TLS mode (`sslmode=require`,
    /// `verify-ca`, `verify-full`; MySQL `ssl-mode=REQUIRED`, `VERIFY_CA`, `VERIFY_IDENTITY`)
    /// checks the server's certificate against; without it the public web PKI roots are trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_from: Option<ConfigMapKeySelector>,
}

/// How a target is coordinated with others naming the same database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coordination<'a> {
    /// A namespace-scoped coordination key.
    Key(&'a str),
    /// A cluster-scoped realm.
    Realm(&'a RealmReference),
}

impl DatabaseTargetSpec {
    /// The coordination this target names; `None` when the object breaks the exactly-one rule
    /// (the API server refuses that, so only a hand-built value can).
    pub fn coordination(&self) -> Option<Coordination<'_>> {
        match (&self.coordination_key, &self.realm_ref) {
            (Some(key), None) => Some(Coordination::Key(key)),
            (None, Some(realm)) => Some(Coordination::Realm(realm)),
            _ => None,
        }
    }
}
