//! A plan's rehearsal on the dev database (`spec.dev`, issue 37): what the Plan's runner reported,
//! as the status records it, and whether it lets the plan go on to approval and Apply.

use ptah_api::schema::{CurrentPlanStatus, PlanRehearsal, RehearsalOutcome};
use ptah_dataplane::{RehearsalOutcome as Reported, RehearsalResult};

use super::observed::Observed;

/// The status record of a reported rehearsal.
pub fn recorded(r: &RehearsalResult) -> PlanRehearsal {
    let millis = |m: u64| i64::try_from(m).unwrap_or(i64::MAX);
    PlanRehearsal {
        outcome: match r.outcome {
            Reported::Passed => RehearsalOutcome::Passed,
            Reported::Failed => RehearsalOutcome::Failed,
            Reported::Inconclusive => RehearsalOutcome::Inconclusive,
        },
        failed_statement: r.failed_statement.map(|n| i32::try_from(n).unwrap_or(i32::MAX)),
        message: r.reason.clone(),
        statement_millis: r.statement_millis.iter().copied().map(millis).collect(),
        total_millis: r
            .statement_millis
            .iter()
            .copied()
            .map(millis)
            .fold(0, i64::saturating_add),
        restored: r.restored,
    }
}

/// Why the plan may be neither approved nor applied, when its rehearsal says so: it failed, it
/// could not run, or `spec.dev` names a dev database and the plan was never rehearsed there.
pub fn blocks(o: &Observed<'_>, p: &CurrentPlanStatus) -> Option<String> {
    let why = |r: &PlanRehearsal| r.message.clone().unwrap_or_default();
    match &p.rehearsal {
        Some(r) => match r.outcome {
            RehearsalOutcome::Passed => None,
            RehearsalOutcome::Failed => Some(match r.failed_statement {
                Some(n) => format!(
                    "the rehearsal on the dev database failed at statement {n}: {}",
                    why(r)
                ),
                None => format!("the rehearsal on the dev database failed: {}", why(r)),
            }),
            RehearsalOutcome::Inconclusive => Some(format!(
                "the plan could not be rehearsed on the dev database: {}",
                why(r)
            )),
        },
        None if o.spec.dev.is_some() => {
            Some("spec.dev names a dev database and this plan was not rehearsed there".to_owned())
        }
        None => None,
    }
}
