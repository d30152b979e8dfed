//! The realm census and realm identities: pure decisions taken before any Job or Lease.
//!
//! Two resources naming the same database must either be alone or all declare that they share
//! it; the census counts claimants of one coordination digest and says which. The digest is the
//! sha256 of canonical JSON whose field set differs between a namespace key and a PtahRealm, so
//! neither form can be written to collide with the other.

use ptah_api::{
    PtahRealm,
    realm::RealmSharing,
    shared::{DatabaseEngine, EngineFamily, Sha256Digest},
};
use serde_json::{Value, json};

/// The version of the coordination-digest document.
pub const CONTRACT_VERSION: u32 = 1;

/// One PtahSchema or PtahMigration that names a database, as the census sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimant {
    /// `PtahSchema` or `PtahMigration`.
    pub kind: &'static str,
    /// The resource's namespace.
    pub namespace: String,
    /// The resource's name.
    pub name: String,
    /// The resource's UID; tells the caller apart from the rest of `all`.
    pub uid: String,
    /// The realm it claims.
    pub coordination_digest: Sha256Digest,
    /// Whether it declares `sharedRealm`.
    pub shared_realm: bool,
    /// Suspended with nothing owed, or being deleted: it does not count.
    pub dormant: bool,
}

/// The census result for one claimant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CensusVerdict {
    /// No other active claimant.
    Sole,
    /// Other active claimants, and sharing is allowed by everyone involved.
    Shared,
    /// Other active claimants and sharing is not allowed: every one of them is refused.
    Conflict {
        /// How many active claimants besides the caller.
        others: usize,
    },
}

/// Counts the active claimants of `me`'s digest in `all` (which may include `me`).
///
/// `me` always counts, since asking means wanting to claim. `realm_allows_sharing` is `None` for
/// a key-coordinated target and the realm's `sharing == Shared` for a realm-coordinated one.
pub fn census(me: &Claimant, all: &[Claimant], realm_allows_sharing: Option<bool>) -> CensusVerdict {
    let others: Vec<&Claimant> = all
        .iter()
        .filter(|c| c.uid != me.uid && !c.dormant && c.coordination_digest == me.coordination_digest)
        .collect();
    if others.is_empty() {
        return CensusVerdict::Sole;
    }
    let everyone_shares = me.shared_realm && others.iter().all(|c| c.shared_realm);
    if everyone_shares && realm_allows_sharing != Some(false) {
        CensusVerdict::Shared
    } else {
        CensusVerdict::Conflict { others: others.len() }
    }
}

/// The canonical engine name (`postgresql`, `mysql`) of a written one, case-insensitively.
pub fn canonical_engine(engine: &str) -> Option<&'static str> {
    DatabaseEngine::new(engine).family().map(EngineFamily::as_str)
}

/// The coordination digest of a namespace-scoped coordination key.
pub fn coordination_digest(engine_canonical: &str, namespace: &str, key: &str) -> Sha256Digest {
    digest_of(&json!({
        "contract_version": CONTRACT_VERSION,
        "engine": engine_canonical,
        "namespace": namespace,
        "coordination_key": key,
    }))
}

/// The coordination digest of a PtahRealm.
pub fn realm_coordination_digest(engine_canonical: &str, realm: &str) -> Sha256Digest {
    digest_of(&json!({
        "contract_version": CONTRACT_VERSION,
        "engine": engine_canonical,
        "realm": realm,
    }))
}

fn digest_of(document: &Value) -> Sha256Digest {
    // Strings and a small integer always have a canonical form; were that ever to fail, the
    // compact text with sorted keys is the very same bytes for these documents.
    let bytes = ptah_fingerprint::canonical_json_value(document)
        .unwrap_or_else(|_| document.to_string().into_bytes());
    ptah_fingerprint::Digest::of(&bytes).into()
}

/// Whether `realm` grants `namespace` a database of engine `engine_canonical`.
///
/// The caller reports a refusal, a missing realm and a wrong engine with one identical message,
/// so a namespace learns nothing about realms it was not granted.
pub fn realm_authorizes(realm: &PtahRealm, namespace: &str, engine_canonical: &str) -> bool {
    realm.spec.namespaces.iter().any(|n| n == namespace)
        && realm.spec.engine.family().map(EngineFamily::as_str) == Some(engine_canonical)
}

/// Whether `realm` lets several claimants share it.
pub fn realm_allows_sharing(realm: &PtahRealm) -> bool {
    realm.spec.sharing == RealmSharing::Shared
}

#[cfg(test)]
mod tests {
    use ptah_api::PtahRealmSpec;
    use sha2::{Digest as _, Sha256};

    use super::*;

    fn digest(n: u8) -> Sha256Digest {
        Sha256Digest::parse(&format!("sha256:{}", hex::encode([n; 32]))).expect("digest")
    }

    fn claimant(uid: &str, realm: u8, shared: bool, dormant: bool) -> Claimant {
        Claimant {
            kind: "PtahSchema",
            namespace: "ns".into(),
            name: uid.into(),
            uid: uid.into(),
            coordination_digest: digest(realm),
            shared_realm: shared,
            dormant,
        }
    }

    #[test]
    fn census_verdicts() {
        let me = claimant("a", 1, false, false);
        assert_eq!(census(&me, std::slice::from_ref(&me), None), CensusVerdict::Sole);
        assert_eq!(census(&me, &[], None), CensusVerdict::Sole);
        // Another realm does not count.
        assert_eq!(
            census(&me, &[me.clone(), claimant("b", 2, false, false)], None),
            CensusVerdict::Sole
        );
        let two = [me.clone(), claimant("b", 1, false, false)];
        assert_eq!(census(&me, &two, None), CensusVerdict::Conflict { others: 1 });
        // A dormant one does not count.
        assert_eq!(
            census(&me, &[me.clone(), claimant("b", 1, false, true)], None),
            CensusVerdict::Sole
        );
    }

    #[test]
    fn sharing_needs_every_claimant_and_the_realm() {
        let me = claimant("a", 1, true, false);
        let shared = [
            me.clone(),
            claimant("b", 1, true, false),
            claimant("c", 1, true, false),
        ];
        assert_eq!(census(&me, &shared, None), CensusVerdict::Shared);
        assert_eq!(census(&me, &shared, Some(true)), CensusVerdict::Shared);
        assert_eq!(
            census(&me, &shared, Some(false)),
            CensusVerdict::Conflict { others: 2 }
        );
        let one_not = [
            me.clone(),
            claimant("b", 1, true, false),
            claimant("c", 1, false, false),
        ];
        assert_eq!(census(&me, &one_not, None), CensusVerdict::Conflict { others: 2 });
        let me_not = claimant("a", 1, false, false);
        let others_shared = [claimant("b", 1, true, false)];
        assert_eq!(
            census(&me_not, &others_shared, Some(true)),
            CensusVerdict::Conflict { others: 1 }
        );
    }

    #[test]
    fn engines_canonicalise_case_insensitively() {
        for (written, want) in [
            ("postgres", Some("postgresql")),
            ("PostgreSQL", Some("postgresql")),
            ("PGX", Some("postgresql")),
            ("mariadb", Some("mysql")),
            ("MySQL", Some("mysql")),
            ("sqlite", None),
            ("", None),
        ] {
            assert_eq!(canonical_engine(written), want, "{written}");
        }
    }

    #[test]
    fn digests_hash_the_canonical_documents_and_never_collide_across_forms() {
        let sha = |text: &str| format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())));
        let key = coordination_digest("postgresql", "team-a", "orders");
        assert_eq!(
            key.as_str(),
            sha(
                r#"{"contract_version":1,"coordination_key":"orders","engine":"postgresql","namespace":"team-a"}"#
            )
        );
        let realm = realm_coordination_digest("postgresql", "orders");
        assert_eq!(
            realm.as_str(),
            sha(r#"{"contract_version":1,"engine":"postgresql","realm":"orders"}"#)
        );
        assert_ne!(key, realm);
        assert_ne!(
            realm_coordination_digest("postgresql", "team-a"),
            coordination_digest("postgresql", "team-a", "")
        );
        assert_ne!(key, coordination_digest("mysql", "team-a", "orders"));
        assert_ne!(key, coordination_digest("postgresql", "team-b", "orders"));
    }

    fn realm(engine: &str, namespaces: &[&str], sharing: RealmSharing) -> PtahRealm {
        PtahRealm::new(
            "orders",
            PtahRealmSpec {
                engine: DatabaseEngine::new(engine),
                namespaces: namespaces.iter().map(|n| (*n).to_owned()).collect(),
                sharing,
            },
        )
    }

    #[test]
    fn realm_authorizes_listed_namespaces_of_its_engine() {
        let r = realm("Postgres", &["team-a", "team-b"], RealmSharing::Exclusive);
        assert!(realm_authorizes(&r, "team-a", "postgresql"));
        assert!(realm_authorizes(&r, "team-b", "postgresql"));
        assert!(!realm_authorizes(&r, "team-c", "postgresql"));
        assert!(!realm_authorizes(&r, "team-a", "mysql"));
        assert!(!realm_authorizes(
            &realm("oracle", &["team-a"], RealmSharing::Exclusive),
            "team-a",
            "oracle"
        ));
        assert!(!realm_allows_sharing(&r));
        assert!(realm_allows_sharing(&realm(
            "mysql",
            &["x"],
            RealmSharing::Shared
        )));
    }
}
