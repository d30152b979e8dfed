//! Writing `metav1.Condition`s: one per type, transition time kept while the status holds.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use ptah_api::conditions::{ConditionType, Reason};

/// The three condition statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`.
    Unknown,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::True => "True",
            Status::False => "False",
            Status::Unknown => "Unknown",
        }
    }

    /// `True` when `b`, else `False`.
    pub fn from_bool(b: bool) -> Self {
        if b { Status::True } else { Status::False }
    }
}

/// Sets one condition, keeping its `lastTransitionTime` when its status does not change.
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: ConditionType,
    status: Status,
    reason: Reason,
    message: impl Into<String>,
    generation: Option<i64>,
    now: Timestamp,
) {
    let message = bounded(message.into());
    let existing = conditions.iter().position(|c| c.type_ == type_.as_str());
    let transition = match existing.map(|i| &conditions[i]) {
        Some(c) if c.status == status.as_str() => c.last_transition_time.clone(),
        _ => Time(now),
    };
    let condition = Condition {
        type_: type_.as_str().to_owned(),
        status: status.as_str().to_owned(),
        reason: reason.as_str().to_owned(),
        message,
        observed_generation: generation,
        last_transition_time: transition,
    };
    match existing {
        Some(i) => conditions[i] = condition,
        None => conditions.push(condition),
    }
}

/// The condition of `type_`, if recorded.
pub fn get(conditions: &[Condition], type_: ConditionType) -> Option<&Condition> {
    conditions.iter().find(|c| c.type_ == type_.as_str())
}

/// True when the condition of `type_` has status `True`.
pub fn is_true(conditions: &[Condition], type_: ConditionType) -> bool {
    get(conditions, type_).is_some_and(|c| c.status == "True")
}

/// How kstatus should read a resource; each family derives it from the phase it records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posture {
    /// Work toward the desired state is under way, or waits on an approval that needs no spec
    /// change to arrive.
    Working,
    /// Nothing moves until a person or an input acts (Blocked, Failed).
    Stuck,
    /// Nothing to do: in sync, or suspended by the user.
    Settled,
}

/// Sets kstatus's `Reconciling` and `Stalled` from `posture`, consistent with `Ready`.
///
/// Their reason and message are those of the condition that explains the posture: `Progressing`
/// while an operation runs, else `Ready`. A periodic re-check of a generation already `Ready` is
/// not reconciling: kstatus would otherwise flap to InProgress on every interval.
pub fn set_kstatus(conditions: &mut Vec<Condition>, posture: Posture, generation: i64, now: Timestamp) {
    let ready = get(conditions, ConditionType::Ready);
    let ready_now = ready.is_some_and(|c| c.status == "True" && c.observed_generation == Some(generation));
    let progressing = get(conditions, ConditionType::Progressing).filter(|c| c.status == "True");
    let (posture, source) = match posture {
        Posture::Working if ready_now => (Posture::Settled, ready),
        Posture::Working => (posture, progressing.or(ready)),
        _ => (posture, ready),
    };
    let reason = source
        .and_then(|c| c.reason.parse::<Reason>().ok())
        .unwrap_or(Reason::Pending);
    let message = source.map(|c| c.message.clone()).unwrap_or_default();
    for (type_, on) in [
        (ConditionType::Reconciling, posture == Posture::Working),
        (ConditionType::Stalled, posture == Posture::Stuck),
    ] {
        let status = Status::from_bool(on);
        set(
            conditions,
            type_,
            status,
            reason,
            message.clone(),
            Some(generation),
            now,
        );
    }
}

/// Messages are bounded and free of control characters: they may quote API-server text.
fn bounded(message: String) -> String {
    const MAX: usize = 1024;
    let mut clean: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if clean.len() > MAX {
        let mut cut = MAX;
        while !clean.is_char_boundary(cut) {
            cut -= 1;
        }
        clean.truncate(cut);
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transition_time_survives_a_reason_change_but_not_a_status_change() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().expect("ts");
        let t1: Timestamp = "2026-01-01T00:01:00Z".parse().expect("ts");
        let mut cs = Vec::new();
        set(
            &mut cs,
            ConditionType::Ready,
            Status::False,
            Reason::Pending,
            "a",
            Some(1),
            t0,
        );
        set(
            &mut cs,
            ConditionType::Ready,
            Status::False,
            Reason::Waiting,
            "b",
            Some(1),
            t1,
        );
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].last_transition_time, Time(t0));
        assert_eq!(cs[0].reason, "Waiting");
        set(
            &mut cs,
            ConditionType::Ready,
            Status::True,
            Reason::InSync,
            "c\nd",
            Some(1),
            t1,
        );
        assert_eq!(cs[0].last_transition_time, Time(t1));
        assert_eq!(cs[0].message, "c d");
    }
}
