//! Whether a published plan may be read: its `Ready` condition, written for its generation.

use ptah_api::PtahSchemaPlan;
use ptah_api::conditions::{ConditionType, Reason};

use crate::PlanStoreError;

/// Requires `Ready=True` (reason `Published`) written for the plan's current generation.
pub(crate) fn ready_for(plan: &PtahSchemaPlan) -> Result<(), PlanStoreError> {
    let name = plan.metadata.name.clone().unwrap_or_default();
    let not_ready = |why: &str| PlanStoreError::NotReady {
        name: name.clone(),
        why: why.to_owned(),
    };
    let status = plan.status.as_ref().ok_or_else(|| not_ready("no status"))?;
    let generation = plan.metadata.generation;
    if generation.is_none() || status.observed_generation != generation {
        return Err(not_ready(
            "status.observedGeneration is not the current generation",
        ));
    }
    let ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == ConditionType::Ready.as_str())
        .ok_or_else(|| not_ready("no Ready condition"))?;
    if ready.status != "True" || ready.reason != Reason::Published.as_str() {
        return Err(not_ready("Ready is not True/Published"));
    }
    if ready.observed_generation.is_some_and(|g| Some(g) != generation) {
        return Err(not_ready("the Ready condition is for another generation"));
    }
    Ok(())
}
