//! The realm a resource claims and the census of its claimants across both kinds, and the
//! verification policy read uncached. Shared by both families.

use kube::{Api, ResourceExt};
use ptah_api::{
    PtahMigration, PtahRealm, PtahSchema,
    shared::{ConfigMapKeySelector, Coordination, DatabaseTargetSpec, Sha256Digest},
};
use ptah_targetlock::census::{self, Claimant};

use super::{Context, ShellError};
use crate::operation::{PolicyRead, Realm};

/// What the census needs of any claimant.
struct Candidate<'a> {
    kind: &'static str,
    namespace: String,
    name: String,
    uid: String,
    target: &'a DatabaseTargetSpec,
    /// Suspended with nothing in flight or owed, or being deleted.
    dormant: bool,
}

/// The realm of `target` in `ns` and what the census of every PtahSchema and PtahMigration
/// claiming the same database says about the resource `uid`.
pub async fn realm(
    ctx: &Context,
    target: &DatabaseTargetSpec,
    ns: &str,
    uid: &str,
) -> Result<Realm, ShellError> {
    let Some(family) = target.engine.family() else {
        return Ok(Realm::UnsupportedEngine);
    };
    let engine = family.as_str();
    let (digest, grant) = match target.coordination() {
        Some(Coordination::Key(key)) => (census::coordination_digest(engine, ns, key), None),
        Some(Coordination::Realm(r)) => {
            let realms: Api<PtahRealm> = Api::all(ctx.client.clone());
            match realms.get_opt(&r.name).await? {
                Some(realm) if census::realm_authorizes(&realm, ns, engine) => {
                    (census::realm_coordination_digest(engine, &r.name), Some(realm))
                }
                _ => return Ok(Realm::NotAuthorized),
            }
        }
        None => return Ok(Realm::NotAuthorized),
    };
    let schemas = ctx.schemas.state();
    let migrations = ctx.migrations.state();
    let candidates = schemas
        .iter()
        .map(|s| schema_candidate(s))
        .chain(migrations.iter().map(|m| migration_candidate(m)));
    let mut me = None;
    let mut all = Vec::new();
    for c in candidates {
        let Some(claimant) = claimant(&c, &digest, grant.as_ref()) else {
            continue;
        };
        if claimant.uid == uid {
            me = Some(claimant.clone());
        }
        all.push(claimant);
    }
    let me = me.unwrap_or_else(|| Claimant {
        kind: "unknown",
        namespace: ns.to_owned(),
        name: String::new(),
        uid: uid.to_owned(),
        coordination_digest: digest.clone(),
        shared_realm: target.shared_realm,
        dormant: false,
    });
    Ok(Realm::Claimable {
        engine,
        coordination_digest: digest,
        census: census::census(&me, &all, grant.as_ref().map(census::realm_allows_sharing)),
    })
}

/// The claimant `c` is when it claims `digest`; a realmRef claimant counts only when the realm
/// grants its namespace and engine.
fn claimant(c: &Candidate<'_>, digest: &Sha256Digest, grant: Option<&PtahRealm>) -> Option<Claimant> {
    let family = c.target.engine.family()?;
    let engine = family.as_str();
    let d = match c.target.coordination()? {
        Coordination::Key(key) => census::coordination_digest(engine, &c.namespace, key),
        Coordination::Realm(r) => {
            let d = census::realm_coordination_digest(engine, &r.name);
            // Same digest, same realm object: the one read for the caller.
            if d == *digest && !grant.is_some_and(|g| census::realm_authorizes(g, &c.namespace, engine)) {
                return None;
            }
            d
        }
    };
    (d == *digest).then(|| Claimant {
        kind: c.kind,
        namespace: c.namespace.clone(),
        name: c.name.clone(),
        uid: c.uid.clone(),
        coordination_digest: d,
        shared_realm: c.target.shared_realm,
        dormant: c.dormant,
    })
}

fn schema_candidate(s: &PtahSchema) -> Candidate<'_> {
    let busy = s
        .status
        .as_ref()
        .is_some_and(|st| st.active_operation.is_some() || st.pending_observation.is_some());
    Candidate {
        kind: "PtahSchema",
        namespace: s.namespace().unwrap_or_default(),
        name: s.name_any(),
        uid: s.uid().unwrap_or_default(),
        target: &s.spec.target,
        dormant: s.metadata.deletion_timestamp.is_some() || (s.spec.suspend && !busy),
    }
}

fn migration_candidate(m: &PtahMigration) -> Candidate<'_> {
    let busy = m
        .status
        .as_ref()
        .is_some_and(|st| st.active_operation.is_some() || st.unresolved_run.is_some());
    Candidate {
        kind: "PtahMigration",
        namespace: m.namespace().unwrap_or_default(),
        name: m.name_any(),
        uid: m.uid().unwrap_or_default(),
        target: &m.spec.target,
        dormant: m.metadata.deletion_timestamp.is_some() || (m.spec.suspend && !busy),
    }
}

/// The verification policy named by `from`, read uncached.
pub async fn policy(ctx: &Context, from: &ConfigMapKeySelector, ns: &str) -> Result<PolicyRead, ShellError> {
    match ptah_managercache::read_configmap_key(ctx.client.clone(), ns, &from.name, &from.key).await {
        Ok(read) => Ok(PolicyRead::Ok {
            uid: read.uid,
            digest: read.digest,
        }),
        Err(ptah_managercache::CacheError::Api { source, .. }) => Err(ShellError::Kube(*source)),
        Err(refused) => Ok(PolicyRead::Refused(refused.to_string())),
    }
}
