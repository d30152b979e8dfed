//! The write guard: plans, chunks and the manager's Jobs and ConfigMaps are written by the
//! manager alone. Kubernetes' own controllers may delete them (garbage collection, namespace
//! deletion, Job TTL) and the Job controller may write Job status; a cluster administrator
//! (`system:masters`) may delete them; everyone else is refused.

use k8s_openapi::api::authentication::v1::UserInfo;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, Operation};
use ptah_workload::{MANAGED_BY_LABEL, MANAGED_BY_VALUE};
use serde_json::Value;

use crate::Admission;
use crate::review::{Verdict, label};

/// The garbage collector's username.
pub const GARBAGE_COLLECTOR: &str = "system:serviceaccount:kube-system:generic-garbage-collector";
/// The namespace controller's username (deletes everything in a deleted namespace).
pub const NAMESPACE_CONTROLLER: &str = "system:serviceaccount:kube-system:namespace-controller";
/// The TTL-after-finished controller's username (deletes finished Jobs).
pub const TTL_CONTROLLER: &str = "system:serviceaccount:kube-system:ttl-after-finished-controller";
/// The Job controller's username (writes Job status).
pub const JOB_CONTROLLER: &str = "system:serviceaccount:kube-system:job-controller";
/// The group whose members may delete (never create or change) manager-owned objects. Its
/// members bypass RBAC and may remove this webhook's configuration anyway, so refusing them only
/// forces a cruder break glass; the manager treats a Job deleted under a claim as lost (an Apply's
/// outcome as unknown, never replayed) and a missing plan or chunk as a stale plan.
pub const CLUSTER_ADMIN_GROUP: &str = "system:masters";

const ALWAYS_OWNED: [&str; 4] = [
    "PtahSchemaPlan",
    "PtahSchemaPlanChunk",
    "PtahMigrationPlan",
    "PtahResultRecord",
];
const OWNED_WHEN_LABELLED: [&str; 2] = ["Job", "ConfigMap"];

fn labelled(object: Option<&Value>) -> bool {
    object.is_some_and(|o| label(o, MANAGED_BY_LABEL) == Some(MANAGED_BY_VALUE))
}

/// Whether `old` and `new` differ only in metadata and status (finalizers, owner references).
fn only_metadata(old: Option<&Value>, new: Option<&Value>) -> bool {
    let strip = |v: Option<&Value>| {
        v.and_then(Value::as_object).map(|o| {
            let mut o = o.clone();
            o.remove("metadata");
            o.remove("status");
            o
        })
    };
    matches!((strip(old), strip(new)), (Some(a), Some(b)) if a == b)
}

/// The guard's decision, pure. An object is owned when its kind is a plan or chunk, or when it
/// is a Job/ConfigMap whose old *or* new labels carry `managed-by=ptah-operator` (so the label
/// can be neither forged onto nor stripped from an object).
pub fn guard_decision(
    kind: &str,
    operation: &Operation,
    sub_resource: Option<&str>,
    user: &UserInfo,
    manager_username: &str,
    object: Option<&Value>,
    old_object: Option<&Value>,
) -> Verdict {
    let username = user.username.as_deref().unwrap_or_default();
    let cluster_admin = user
        .groups
        .as_ref()
        .is_some_and(|g| g.iter().any(|g| g == CLUSTER_ADMIN_GROUP));
    let owned = ALWAYS_OWNED.contains(&kind)
        || (OWNED_WHEN_LABELLED.contains(&kind) && (labelled(object) || labelled(old_object)));
    if !owned {
        return Verdict::Allow;
    }
    // An unset manager username matches nobody: the guard then refuses every write (fail-closed).
    if !manager_username.is_empty() && username == manager_username {
        return Verdict::Allow;
    }
    let system_ok = match operation {
        Operation::Delete => {
            [GARBAGE_COLLECTOR, NAMESPACE_CONTROLLER].contains(&username)
                || (kind == "Job" && username == TTL_CONTROLLER)
                || cluster_admin
        }
        Operation::Update => {
            (username == GARBAGE_COLLECTOR && only_metadata(old_object, object))
                || (kind == "Job"
                    && username == JOB_CONTROLLER
                    && (sub_resource == Some("status") || only_metadata(old_object, object)))
        }
        _ => false,
    };
    if system_ok {
        return Verdict::Allow;
    }
    let verb = match operation {
        Operation::Create => "create",
        Operation::Update => "update",
        Operation::Delete => "delete",
        Operation::Connect => "connect to",
    };
    Verdict::deny(format!(
        "{kind} objects of ptah-operator are written by the manager only: {username} may not {verb} this one"
    ))
}

impl Admission {
    /// Validating (CREATE/UPDATE/DELETE of plans, chunks, Jobs, ConfigMaps): the write guard.
    pub fn validate_manager_owned(&self, req: &AdmissionRequest<DynamicObject>) -> Verdict {
        let object = req.object.as_ref().and_then(|o| serde_json::to_value(o).ok());
        let old = req.old_object.as_ref().and_then(|o| serde_json::to_value(o).ok());
        guard_decision(
            &req.kind.kind,
            &req.operation,
            req.sub_resource.as_deref(),
            &req.user_info,
            &self.config.manager_username,
            object.as_ref(),
            old.as_ref(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MGR: &str = "system:serviceaccount:ptah-system:ptah-operator";

    fn user_in(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            username: Some(name.to_owned()),
            groups: Some(groups.iter().map(|g| (*g).to_owned()).collect()),
            ..UserInfo::default()
        }
    }

    fn decide(
        kind: &str,
        op: Operation,
        sub: Option<&str>,
        user: &str,
        new: Option<&Value>,
        old: Option<&Value>,
    ) -> bool {
        guard_decision(kind, &op, sub, &user_in(user, &[]), MGR, new, old) == Verdict::Allow
    }

    #[test]
    fn plans_and_chunks_belong_to_the_manager() {
        let p = json!({"metadata": {"name": "p"}, "spec": {}});
        // (kind, operation, user, admitted). Migration plans too: the webhook rule names them, so
        // the guard must own them (it let anyone through before, RBAC alone standing in the way).
        let cases = [
            ("PtahSchemaPlan", Operation::Create, MGR, true),
            ("PtahSchemaPlan", Operation::Create, "alice", false),
            ("PtahSchemaPlanChunk", Operation::Delete, "alice", false),
            ("PtahSchemaPlanChunk", Operation::Delete, GARBAGE_COLLECTOR, true),
            ("PtahSchemaPlan", Operation::Delete, NAMESPACE_CONTROLLER, true),
            ("PtahMigrationPlan", Operation::Create, MGR, true),
            ("PtahMigrationPlan", Operation::Create, "alice", false),
            ("PtahMigrationPlan", Operation::Delete, "alice", false),
        ];
        for (kind, op, user, admitted) in cases {
            let (new, old) = match op {
                Operation::Delete => (None, Some(&p)),
                _ => (Some(&p), None),
            };
            assert_eq!(
                decide(kind, op, None, user, new, old),
                admitted,
                "{kind} by {user}"
            );
        }
        let msg = guard_decision(
            "PtahSchemaPlan",
            &Operation::Update,
            None,
            &user_in("alice", &[]),
            MGR,
            Some(&p),
            Some(&p),
        );
        assert!(matches!(msg, Verdict::Deny(m) if m.contains("alice may not update")));
        // No configured manager: nobody writes.
        assert_ne!(
            guard_decision(
                "PtahSchemaPlan",
                &Operation::Create,
                None,
                &user_in(MGR, &[]),
                "",
                Some(&p),
                None
            ),
            Verdict::Allow
        );
    }

    #[test]
    fn labelled_jobs_and_configmaps_only() {
        let mine = json!({"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}, "spec": {"a": 1}});
        let other = json!({"metadata": {"labels": {}}, "spec": {"a": 1}});
        assert!(decide(
            "ConfigMap",
            Operation::Create,
            None,
            "alice",
            Some(&other),
            None
        ));
        assert!(!decide(
            "ConfigMap",
            Operation::Create,
            None,
            "alice",
            Some(&mine),
            None
        ));
        // Neither forging the label on nor stripping it off.
        assert!(!decide(
            "Job",
            Operation::Update,
            None,
            "alice",
            Some(&mine),
            Some(&other)
        ));
        assert!(!decide(
            "Job",
            Operation::Update,
            None,
            "alice",
            Some(&other),
            Some(&mine)
        ));
        assert!(decide(
            "Job",
            Operation::Delete,
            None,
            TTL_CONTROLLER,
            None,
            Some(&mine)
        ));
        assert!(!decide(
            "ConfigMap",
            Operation::Delete,
            None,
            TTL_CONTROLLER,
            None,
            Some(&mine)
        ));
        assert!(decide(
            "Job",
            Operation::Update,
            Some("status"),
            JOB_CONTROLLER,
            Some(&mine),
            Some(&mine)
        ));
        let mut changed = mine.clone();
        changed["spec"]["a"] = json!(2);
        assert!(!decide(
            "Job",
            Operation::Update,
            None,
            JOB_CONTROLLER,
            Some(&changed),
            Some(&mine)
        ));
        assert!(!decide(
            "Job",
            Operation::Update,
            None,
            GARBAGE_COLLECTOR,
            Some(&changed),
            Some(&mine)
        ));
        let mut finalized = mine.clone();
        finalized["metadata"]["finalizers"] = json!([]);
        assert!(decide(
            "Job",
            Operation::Update,
            None,
            GARBAGE_COLLECTOR,
            Some(&finalized),
            Some(&mine)
        ));
    }

    /// Issue 33: a cluster administrator could not delete an operation Job.
    #[test]
    fn cluster_admins_may_delete_but_never_write() {
        let job = json!({"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}, "spec": {"a": 1}});
        let admin = user_in("kubernetes-admin", &["system:authenticated", CLUSTER_ADMIN_GROUP]);
        let verdict =
            |kind: &str, op: Operation, who: &UserInfo, new: Option<&Value>, old: Option<&Value>| {
                guard_decision(kind, &op, None, who, MGR, new, old)
            };
        for kind in [
            "Job",
            "ConfigMap",
            "PtahSchemaPlan",
            "PtahSchemaPlanChunk",
            "PtahMigrationPlan",
        ] {
            assert_eq!(
                verdict(kind, Operation::Delete, &admin, None, Some(&job)),
                Verdict::Allow,
                "{kind}"
            );
        }
        let mut changed = job.clone();
        changed["spec"]["a"] = json!(2);
        for (op, new, old) in [
            (Operation::Create, Some(&job), None),
            (Operation::Update, Some(&changed), Some(&job)),
        ] {
            assert!(
                matches!(verdict("Job", op, &admin, new, old), Verdict::Deny(m) if m.contains("kubernetes-admin may not")),
                "a cluster admin may not write a Job"
            );
        }
        // The group, not a name or another group, decides.
        let lookalike = user_in("system:masters", &["system:authenticated", "cluster-admins"]);
        let refused = verdict("Job", Operation::Delete, &lookalike, None, Some(&job));
        assert!(
            matches!(&refused, Verdict::Deny(m) if m.contains("system:masters may not delete")),
            "{refused:?}"
        );
    }
}
