//! What refuses every Job of a resource, whatever its family: an unsupported engine, a realm
//! that does not authorize it or that another resource contests, a verification policy that
//! cannot be used.

use ptah_api::conditions::Reason;
use ptah_targetlock::census::CensusVerdict;

use super::observed::{PolicyRead, Realm};

/// A refusal: its condition reason, the message for a person, and the Event reason.
pub type Refusal = (Reason, String, &'static str);

/// Why no Job may run now, if anything refuses it; `policy` is `None` when it is not in question.
pub fn refusal(realm: &Realm, policy: Option<&PolicyRead>, engine: &str) -> Option<Refusal> {
    Some(match realm {
        Realm::UnsupportedEngine => (
            Reason::UnsupportedEngine,
            format!("engine {engine:?} is not supported (PostgreSQL, MySQL)"),
            "UnsupportedEngine",
        ),
        // One message for a missing realm, another namespace or another engine: never probing.
        Realm::NotAuthorized => (
            Reason::RealmNotAuthorized,
            "the realm named by spec.target.realmRef does not authorize this namespace and engine".to_owned(),
            "RealmNotAuthorized",
        ),
        Realm::Claimable {
            census: CensusVerdict::Conflict { others },
            ..
        } => (
            Reason::RealmConflict,
            format!(
                "{others} other resource(s) claim the same database; declare sharedRealm on all of them or give each its own target"
            ),
            "RealmConflict",
        ),
        Realm::Claimable { .. } => match policy {
            Some(PolicyRead::Refused(why)) => (
                Reason::ConfigurationError,
                format!("verification policy: {why}"),
                "VerificationPolicyRefused",
            ),
            Some(PolicyRead::Ok { .. }) | None => return None,
        },
    })
}

/// The condition reason of a registry grant refusal by the runner of a Resolve or Verify, by its
/// frame code (the codes the fetch containers write, `prestart::GRANT_CODES`). Retried at the
/// failure interval like any failed read: the Secret may be fixed, and the manager cannot watch it.
pub fn grant_reason(code: &str) -> Option<Reason> {
    super::prestart::GRANT_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, reason)| *reason)
}
