//! How tools outside the operator read a resource's health: kstatus's rules (Flux, kpt, `kubectl
//! wait`-style tooling) and the Argo CD health scripts of `docs/integrations/argocd/`.
//!
//! Both are run over whole PtahSchema and PtahMigration objects whose statuses the decision
//! functions produced. The e2e runs save approvals, alert rules and manager logs but no whole
//! resource, so the objects come from the same worlds the lifecycle tests drive.

mod argocd;
mod kstatus;

/// A situation a resource can be in, named as a person would.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Situation {
    /// A fresh resource whose first operation runs.
    InProgress,
    /// A published plan waits for an approval.
    AwaitingApproval,
    /// Nothing moves until a person acts (a destructive plan refused, a dirty history).
    Blocked,
    /// A fault, retried after `failureRetryInterval`.
    Failed,
    /// The database matches the desired state.
    InSync,
    /// `spec.suspend` is true.
    Suspended,
    /// The spec changed after InSync and the manager has not taken it up yet.
    SpecChanged,
    /// The manager took up the changed spec; `Ready` is still the previous generation's.
    Replanning,
    /// A periodic re-check of a generation that is already in sync.
    Rechecking,
}

impl Situation {
    /// Every situation, each of which both kinds must be driven into.
    pub const ALL: [Situation; 9] = [
        Situation::InProgress,
        Situation::AwaitingApproval,
        Situation::Blocked,
        Situation::Failed,
        Situation::InSync,
        Situation::Suspended,
        Situation::SpecChanged,
        Situation::Replanning,
        Situation::Rechecking,
    ];
}

/// One whole object in a known situation.
pub struct Case {
    /// Where the decision function left it.
    pub situation: Situation,
    /// `PtahSchema` or `PtahMigration`.
    pub kind: &'static str,
    /// The object as the API server would return it.
    pub object: serde_json::Value,
}

/// Every situation of both kinds.
pub fn cases() -> Vec<Case> {
    let mut out = crate::schema::tests::situations::cases();
    out.extend(crate::migration::tests::situations::cases());
    for kind in ["PtahSchema", "PtahMigration"] {
        let mut seen: Vec<Situation> = out
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| c.situation)
            .collect();
        seen.sort();
        assert_eq!(seen, Situation::ALL, "{kind} is driven into each situation once");
    }
    out
}

/// The condition of `type_` of an object, if it has one.
pub fn condition<'a>(object: &'a serde_json::Value, type_: &str) -> Option<&'a serde_json::Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}
