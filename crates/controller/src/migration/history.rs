//! Recording a History reading: its six verdicts (dirty, modified, out of order, ahead, nothing
//! pending, pending), the run a reading of the same database resolves, and the plan of what is
//! pending, published before the status that names it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ptah_api::{
    conditions::{ConditionType, Reason},
    migration::{MigrationHistoryStatus, MigrationOperationStatus, MigrationPhase, ResolvedRun},
    shared::{ImmutableObjectReference, Sha256Digest},
};
use ptah_dataplane::ResultPayload;

use super::{
    action::{Action, Event},
    cycle::next_cycle,
    observed::Observed,
    plan,
    record::{self, cond, edit, failed, phase},
};
use crate::conditions::Status;

fn versions(v: &[i64]) -> String {
    let mut text: Vec<String> = v.iter().take(8).map(i64::to_string).collect();
    if v.len() > 8 {
        text.push(format!("… ({} in all)", v.len()));
    }
    text.join(", ")
}

/// Records a History result.
pub fn read(o: &Observed<'_>, c: &MigrationOperationStatus, p: &ResultPayload) -> Action {
    let Some(h) = &p.migration_history else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the History result carries no reading",
        );
    };
    let Some(identity) = p.target_identity_digest.map(Sha256Digest::from) else {
        return failed(
            o,
            c,
            Reason::OperationFailed,
            "the History result reports no database identity",
        );
    };
    let mut s = edit(o);
    record::clear_claim(&mut s, c);
    s.history = Some(history_status(o, h, identity.clone()));
    s.next_reconciliation_time = Some(next_cycle(o));
    cond(
        o,
        &mut s,
        ConditionType::DatabaseReachable,
        Status::True,
        Reason::Observed,
        "the revision table was read",
    );
    cond(
        o,
        &mut s,
        ConditionType::ReconciliationFailed,
        Status::False,
        Reason::Observed,
        "",
    );
    let verifying = o.status.phase == Some(MigrationPhase::VerifyingHistory);
    let blocked = if h.dirty {
        Some((
            Reason::HistoryDirty,
            "a previous run left a dirty revision row; repair it by hand (ptah migrations repair)".to_owned(),
        ))
    } else if !h.modified_versions.is_empty() {
        Some((
            Reason::HistoryModified,
            format!(
                "applied migrations were modified afterwards: {}",
                versions(&h.modified_versions)
            ),
        ))
    } else if !h.out_of_order_versions.is_empty() {
        Some((
            Reason::HistoryOutOfOrder,
            format!(
                "pending migrations are older than the current version: {}",
                versions(&h.out_of_order_versions)
            ),
        ))
    } else if !h.ahead_versions.is_empty() {
        Some((
            Reason::HistoryAhead,
            format!(
                "the database has versions the artifact lacks: {}",
                versions(&h.ahead_versions)
            ),
        ))
    } else {
        None
    };
    if let Some((reason, m)) = blocked {
        s.plan = None;
        phase(o, &mut s, MigrationPhase::Blocked, false, reason, m.clone());
        cond(o, &mut s, ConditionType::Blocked, Status::True, reason, m.clone());
        cond(
            o,
            &mut s,
            ConditionType::Progressing,
            Status::False,
            reason,
            m.clone(),
        );
        let event =
            (o.status.phase != Some(MigrationPhase::Blocked)).then(|| Event::warning(reason.as_str(), m));
        return Action::WriteStatus {
            status: Box::new(s),
            event,
        };
    }
    cond(
        o,
        &mut s,
        ConditionType::Blocked,
        Status::False,
        Reason::HistoryMatched,
        "",
    );
    let pending = h.pending_sequence.as_deref().unwrap_or_default();
    if h.pending_count == 0 || pending.is_empty() {
        s.plan = None;
        let mut event = None;
        if let Some(resolved) = resolved_by_reading(o, &identity) {
            event = Some(Event::normal(
                "RunResolved",
                format!(
                    "a reading of the same database finds nothing pending; run {} is resolved",
                    resolved.operation_id.as_str()
                ),
            ));
            s.unresolved_run = None;
            s.resolved_run = Some(resolved);
        }
        let m = match h.current_version {
            Some(v) => format!("nothing is pending; the database is at version {v}"),
            None => "nothing is pending".to_owned(),
        };
        phase(
            o,
            &mut s,
            MigrationPhase::InSync,
            true,
            Reason::HistoryMatched,
            m.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::Progressing,
            Status::False,
            Reason::HistoryMatched,
            m.clone(),
        );
        cond(
            o,
            &mut s,
            ConditionType::ApprovalRequired,
            Status::False,
            Reason::HistoryMatched,
            "",
        );
        if verifying && event.is_none() {
            event = Some(Event::normal("InSync", m));
        }
        return Action::WriteStatus {
            status: Box::new(s),
            event,
        };
    }
    let m = format!("{} migration(s) pending", h.pending_count);
    if o.status.unresolved_run.is_some() {
        // Never planned while a run is unresolved: the gate blocks and says why.
        s.plan = None;
        s.phase = Some(MigrationPhase::Blocked);
        return Action::WriteStatus {
            status: Box::new(s),
            event: None,
        };
    }
    let history_fingerprint: Sha256Digest = h.history_fingerprint.into();
    let reading = plan::Reading {
        pending,
        history_fingerprint: &history_fingerprint,
        current_version: h.current_version.unwrap_or(0),
        target_identity: &identity,
        lint: h.pending_lint.as_ref(),
    };
    match plan::draft(o, c, &reading) {
        Err(why) => failed(o, c, Reason::ConfigurationError, &why),
        Ok(draft) => {
            s.plan = Some(ImmutableObjectReference {
                name: draft.name.clone(),
                uid: String::new(),
            });
            phase(
                o,
                &mut s,
                MigrationPhase::Planning,
                false,
                Reason::MigrationsPending,
                m.clone(),
            );
            cond(
                o,
                &mut s,
                ConditionType::Progressing,
                Status::True,
                Reason::MigrationsPending,
                m.clone(),
            );
            Action::PublishAndRecord {
                draft: Box::new(draft),
                status: Box::new(s),
                event: Some(Event::normal("PlanPublished", m)),
            }
        }
    }
}

/// The run a reading of the same database with nothing pending resolves, if any.
pub fn resolved_by_reading(o: &Observed<'_>, identity: &Sha256Digest) -> Option<ResolvedRun> {
    let run = o.status.unresolved_run.as_ref()?;
    (run.target_identity_digest.as_ref() == Some(identity)).then(|| ResolvedRun {
        operation_id: run.operation_id.clone(),
        acknowledgment_ref: None::<ImmutableObjectReference>,
        acknowledged_by: None,
        resolved_at: Time(o.now),
    })
}

/// The history record of a reading.
pub fn history_status(
    o: &Observed<'_>,
    h: &ptah_dataplane::MigrationHistoryResult,
    identity: Sha256Digest,
) -> MigrationHistoryStatus {
    let bounded = |v: &[i64]| v.iter().copied().take(64).collect::<Vec<_>>();
    MigrationHistoryStatus {
        observed_at: Time(o.now),
        contract_version: 1,
        current_version: h.current_version,
        checkpoint_version: None,
        applied_count: i32::try_from(h.applied_count).unwrap_or(i32::MAX),
        pending_count: i32::try_from(h.pending_count).unwrap_or(i32::MAX),
        fingerprint: h.history_fingerprint.into(),
        target_identity_digest: identity,
        dirty: h.dirty,
        modified_versions: bounded(&h.modified_versions),
        out_of_order_versions: bounded(&h.out_of_order_versions),
    }
}
