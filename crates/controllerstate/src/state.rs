//! The stored document: its JSON shape, and reading it back strictly.

use ptah_api::shared::{Epoch, PinnedImage};
use serde::{Deserialize, Serialize};

use crate::{BindingInputs, CONTROLLER_STATE_VERSION, StateError};

/// The data key of the state ConfigMap that holds [`StoredState`] as canonical JSON.
pub const STATE_KEY: &str = "state.json";

/// The version field alone: read first, so a newer manager's state is recognised as newer even when
/// the rest of its shape is unknown to us.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VersionOnly {
    controller_state_version: i64,
}

/// The durable manager state, `state.json` of the state ConfigMap.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StoredState {
    /// The contract version the writer understood.
    pub controller_state_version: i64,
    /// The Ptah executor version.
    pub ptah_version: String,
    /// The digest-pinned executor image.
    pub executor_image: String,
    /// The runner result-frame protocol version.
    pub runner_protocol_version: i64,
    /// The epoch minted when these inputs were first stored.
    pub epoch: Epoch,
}

/// Why stored text was not accepted; mapped to a [`StateError`] naming the ConfigMap.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Written by a manager with a greater contract version.
    Newer(i64),
    /// Not a state document this manager wrote.
    Corrupt(String),
}

impl StoredState {
    /// The state recording `inputs` under `epoch`.
    pub fn new(inputs: &BindingInputs, epoch: Epoch) -> Self {
        StoredState {
            controller_state_version: inputs.controller_state_version,
            ptah_version: inputs.ptah_version.clone(),
            executor_image: inputs.executor_image.clone(),
            runner_protocol_version: inputs.runner_protocol_version,
            epoch,
        }
    }

    /// The inputs this state records.
    pub fn inputs(&self) -> BindingInputs {
        BindingInputs {
            controller_state_version: self.controller_state_version,
            ptah_version: self.ptah_version.clone(),
            executor_image: self.executor_image.clone(),
            runner_protocol_version: self.runner_protocol_version,
        }
    }

    /// Canonical JSON (sorted keys, no whitespace): equal states are equal bytes.
    pub fn encode(&self) -> Result<String, StateError> {
        let bytes = ptah_fingerprint::canonical_json(self).map_err(|e| StateError::Encode(e.to_string()))?;
        String::from_utf8(bytes).map_err(|e| StateError::Encode(e.to_string()))
    }

    /// Parses stored text: a newer version is recognised before the shape is checked. Pure (no
    /// API call); public so the fuzz target `controller_state` can reach it.
    pub fn decode(text: &str) -> Result<Self, Refusal> {
        let version: VersionOnly = serde_json::from_str(text).map_err(|e| {
            Refusal::Corrupt(format!("{STATE_KEY} has no integer controllerStateVersion: {e}"))
        })?;
        if version.controller_state_version > CONTROLLER_STATE_VERSION {
            return Err(Refusal::Newer(version.controller_state_version));
        }
        let state: StoredState = serde_json::from_str(text)
            .map_err(|e| Refusal::Corrupt(format!("{STATE_KEY} is not a version-1 state document: {e}")))?;
        validate(&state.inputs()).map_err(|e| Refusal::Corrupt(format!("{STATE_KEY} holds {e}")))?;
        Ok(state)
    }
}

/// Checks the inputs are a binding this manager can record and compare.
pub(crate) fn validate(inputs: &BindingInputs) -> Result<(), String> {
    if !(1..=CONTROLLER_STATE_VERSION).contains(&inputs.controller_state_version) {
        return Err(format!(
            "controllerStateVersion {} outside 1..={CONTROLLER_STATE_VERSION}",
            inputs.controller_state_version
        ));
    }
    if inputs.ptah_version.trim().is_empty() || inputs.ptah_version.len() > 128 {
        return Err(format!(
            "ptahVersion {:?} is empty or longer than 128 bytes",
            inputs.ptah_version
        ));
    }
    // The status field it is copied into is a PinnedImage: a tag could move under a recorded plan.
    PinnedImage::parse(&inputs.executor_image).map_err(|e| format!("executorImage: {e}"))?;
    if inputs.runner_protocol_version < 1 {
        return Err(format!(
            "runnerProtocolVersion {} is not positive",
            inputs.runner_protocol_version
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGE: &str =
        "registry.local/ptah@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const EPOCH: &str = "v1-0123456789abcdef0123456789abcdef";

    fn inputs() -> BindingInputs {
        BindingInputs {
            controller_state_version: 1,
            ptah_version: "0.9.0".into(),
            executor_image: IMAGE.into(),
            runner_protocol_version: 5,
        }
    }

    #[test]
    fn encodes_canonically_and_round_trips() {
        let state = StoredState::new(&inputs(), Epoch::parse(EPOCH).expect("epoch"));
        let text = state.encode().expect("encode");
        assert_eq!(
            text,
            format!(
                r#"{{"controllerStateVersion":1,"epoch":"{EPOCH}","executorImage":"{IMAGE}","ptahVersion":"0.9.0","runnerProtocolVersion":5}}"#
            )
        );
        assert_eq!(StoredState::decode(&text), Ok(state.clone()));
        assert_eq!(state.inputs(), inputs());
    }

    #[test]
    fn a_newer_version_is_recognised_whatever_else_it_holds() {
        let text = r#"{"controllerStateVersion":2,"somethingNew":{"x":1}}"#;
        assert_eq!(StoredState::decode(text), Err(Refusal::Newer(2)));
    }

    #[test]
    fn anything_else_is_corrupt() {
        let good = StoredState::new(&inputs(), Epoch::parse(EPOCH).expect("epoch"))
            .encode()
            .expect("encode");
        for bad in [
            "".to_owned(),
            "not json".to_owned(),
            r#"{"controllerStateVersion":"1"}"#.to_owned(),
            r#"{"controllerStateVersion":1}"#.to_owned(),
            good.replace(EPOCH, "v1-short"),
            good.replace(IMAGE, "registry.local/ptah:latest"),
            good.replace(r#""ptahVersion":"0.9.0""#, r#""ptahVersion":"""#),
            good.replace(r#""runnerProtocolVersion":5"#, r#""runnerProtocolVersion":0"#),
            good.replace(r#""controllerStateVersion":1"#, r#""controllerStateVersion":0"#),
            good.replace('}', r#","extra":true}"#),
        ] {
            assert!(
                matches!(StoredState::decode(&bad), Err(Refusal::Corrupt(_))),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn inputs_are_validated_like_stored_state() {
        assert_eq!(validate(&inputs()), Ok(()));
        let mut newer = inputs();
        newer.controller_state_version = CONTROLLER_STATE_VERSION + 1;
        assert_eq!(
            validate(&newer),
            Err(format!(
                "controllerStateVersion {} outside 1..={CONTROLLER_STATE_VERSION}",
                CONTROLLER_STATE_VERSION + 1
            ))
        );
        let mut tagged = inputs();
        tagged.executor_image = "ptah:dev".into();
        assert!(validate(&tagged).expect_err("tag").contains("executorImage"));
    }
}
