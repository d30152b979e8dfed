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
