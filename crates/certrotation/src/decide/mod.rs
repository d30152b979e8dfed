//! The decision: from what the Secret holds (or its absence), the time and the configuration, the one
//! next step. Pure and total: any bytes give an action, never a panic.

use std::{fmt, time::Duration};

use jiff::Timestamp;

use crate::{
    Defect, RotationConfig, TlsFiles,
    inspect::{Inspection, inspect},
};

/// New certificates start this long before they are issued, so a node whose clock lags ours still
/// accepts them; the issue time of a certificate is therefore `not_before + BACKDATE`.
pub const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// Why a new CA is staged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaReason {
    /// The signing CA expires within the CA threshold.
    Expiring {
        /// When it expires.
        not_after: Timestamp,
    },
    /// `ca.key` is missing, unparseable or belongs to no CA in the bundle, so nothing can be re-signed.
    KeyUnusable(Defect),
    /// The signing CA is not valid yet (a clock went backwards, or it was not issued by us).
    NotYetValid,
}

/// Why the serving certificate is re-issued under the signing CA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServingReason {
    /// It expires within the serving threshold.
    Expiring {
        /// When it expires.
        not_after: Timestamp,
    },
    /// Its SANs differ from the configured ones.
    SansChanged,
    /// It is not valid yet.
    NotYetValid,
    /// A staged CA has been published long enough; switch the serving certificate to it.
    SignedByPreviousCa,
}

/// A step of a CA rotation that waits for the previous one to propagate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Re-issue the serving certificate under the newly published CA.
    SwitchServing,
    /// Drop the previous CA from the bundle.
    WithdrawOldCa,
}

/// What to do next; every action except `Wait` and `Keep` rewrites the Secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The Secret is absent: issue a CA and a serving certificate.
    Create,
    /// The Secret is unusable: issue a fresh CA and serving certificate; the bundle holds only the new CA.
    Recover(Defect),
    /// Publish a new CA next to the one that signed the served certificate; the served pair stays.
    StageCa(CaReason),
    /// Issue a new serving certificate under the signing CA; the bundle stays.
    ReissueServing(ServingReason),
    /// The serving certificate is signed by the signing CA and has propagated: the bundle keeps only that CA.
    WithdrawOldCa,
    /// A rotation step is due at `until`, once the previous one has propagated.
    Wait {
        /// The step that follows.
        step: Step,
        /// When it may be taken.
        until: Timestamp,
    },
    /// Healthy: nothing to do before `recheck_at`.
    Keep {
        /// When the earliest threshold is reached.
        recheck_at: Timestamp,
    },
}

impl Action {
    /// Whether carrying it out rewrites the Secret.
    pub fn writes(&self) -> bool {
        !matches!(self, Action::Wait { .. } | Action::Keep { .. })
    }

    /// Whether the new material starts from nothing (the bundle then holds only the new CA).
    pub fn starts_over(&self) -> bool {
        matches!(self, Action::Create | Action::Recover(_))
    }

    /// When the next pass is due by the material alone (`None`: right after a write, to see it land).
    pub fn due_at(&self) -> Option<Timestamp> {
        match self {
            Action::Wait { until, .. } => Some(*until),
            Action::Keep { recheck_at } => Some(*recheck_at),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Create => f.write_str("create: the Secret is absent"),
            Action::Recover(defect) => write!(f, "recover with a fresh CA: {defect}"),
            Action::StageCa(reason) => write!(f, "stage a new CA ({reason:?})"),
            Action::ReissueServing(reason) => write!(f, "re-issue the serving certificate ({reason:?})"),
            Action::WithdrawOldCa => f.write_str("withdraw the previous CA from the bundle"),
            Action::Wait { step, until } => write!(f, "wait until {until} before {step:?}"),
            Action::Keep { recheck_at } => write!(f, "healthy until {recheck_at}"),
        }
    }
}

/// Seconds of a duration, saturating (a 500-year validity must not wrap).
pub(crate) fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// A Unix second as a timestamp, clamped to jiff's range.
pub(crate) fn timestamp(s: i64) -> Timestamp {
    Timestamp::from_second(s).unwrap_or(if s < 0 { Timestamp::MIN } else { Timestamp::MAX })
}

fn serving_reason(found: &Inspection, now: i64, config: &RotationConfig) -> Option<ServingReason> {
    let leaf = &found.leaf;
    if leaf.not_after.saturating_sub(secs(config.cert_threshold())) <= now {
        Some(ServingReason::Expiring {
            not_after: timestamp(leaf.not_after),
        })
    } else if leaf.not_before > now {
        Some(ServingReason::NotYetValid)
    } else if leaf.sans != config.expected_sans() {
        Some(ServingReason::SansChanged)
    } else {
        None
    }
}

/// The next step for the Secret's contents (`None`: absent) at `now`.
///
/// Order matters: a defect of the served pair wins (nothing to keep), then the CA (a serving
/// certificate is never issued under a CA about to expire), then the serving certificate, then the
/// bundle's clean-up. Steps that rely on a freshly published CA wait `ca_switch_delay` after it.
pub fn decide(current: Option<&TlsFiles>, now: Timestamp, config: &RotationConfig) -> Action {
    let Some(files) = current else {
        return Action::Create;
    };
    let found = match inspect(files) {
        Ok(found) => found,
        Err(defect) => return Action::Recover(defect),
    };
    let now_s = now.as_second();
    let delay = secs(BACKDATE).saturating_add(secs(config.ca_switch_delay));
    let leaf = &found.leaf;
    if now_s >= leaf.not_after {
        return Action::Recover(Defect::ServingExpired);
    }
    let signing = match found.signing {
        Ok(index) => index,
        Err(defect) => return Action::StageCa(CaReason::KeyUnusable(defect)),
    };
    let Some(ca) = found.bundle.get(signing) else {
        return Action::Recover(Defect::CaKeyMatchesNoCa);
    };
    let ca_renew_at = ca.not_after.saturating_sub(secs(config.ca_threshold()));
    if now_s < ca.not_before {
        return Action::StageCa(CaReason::NotYetValid);
    }
    if ca_renew_at <= now_s {
        return Action::StageCa(CaReason::Expiring {
            not_after: timestamp(ca.not_after),
        });
    }
    let reason = serving_reason(&found, now_s, config);
    if leaf.issuer != signing {
        // The signing CA was staged by an earlier pass; the API server must have it before we serve under it.
        let at = ca.not_before.saturating_add(delay);
        return if now_s < at {
            Action::Wait {
                step: Step::SwitchServing,
                until: timestamp(at),
            }
        } else {
            Action::ReissueServing(reason.unwrap_or(ServingReason::SignedByPreviousCa))
        };
    }
    if let Some(reason) = reason {
        return Action::ReissueServing(reason);
    }
    if found.bundle.len() > 1 {
        // The manager must have loaded the new serving certificate before the old CA goes.
        let at = leaf.not_before.saturating_add(delay);
        return if now_s < at {
            Action::Wait {
                step: Step::WithdrawOldCa,
                until: timestamp(at),
            }
        } else {
            Action::WithdrawOldCa
        };
    }
    let leaf_renew_at = leaf.not_after.saturating_sub(secs(config.cert_threshold()));
    Action::Keep {
        recheck_at: timestamp(leaf_renew_at.min(ca_renew_at)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
