//! The stored controller state (`state.json` of the state ConfigMap), read at every manager start
//! from an object anyone with ConfigMap write access in the namespace can edit. Invariants:
//! - decoding is deterministic; a state from a newer manager is recognised as newer (its version
//!   is greater than this build's) whatever else it holds, and a corrupt one's reason is bounded;
//! - an accepted state satisfies the documented rules: `controllerStateVersion` in
//!   1..=CONTROLLER_STATE_VERSION, a non-empty `ptahVersion` of at most 128 bytes, an executor
//!   image pinned by digest, a positive runner protocol version;
//! - it encodes to canonical JSON that decodes back equal, and encoding is a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptah_controllerstate::{CONTROLLER_STATE_VERSION, Refusal, StoredState};
use ptah_fuzz::assert_refusal_message;

fuzz_target!(|data: &[u8]| {
    let Some(text) = ptah_fuzz::text(data) else { return };
    let decoded = StoredState::decode(text);
    assert_eq!(decoded, StoredState::decode(text), "decoding is deterministic");
    let state = match decoded {
        Ok(state) => state,
        Err(Refusal::Newer(version)) => {
            assert!(
                version > CONTROLLER_STATE_VERSION,
                "version {version} is not newer"
            );
            return;
        }
        Err(Refusal::Corrupt(reason)) => return assert_refusal_message(&reason, text.len()),
    };
    assert!((1..=CONTROLLER_STATE_VERSION).contains(&state.controller_state_version));
    assert!(!state.ptah_version.trim().is_empty() && state.ptah_version.len() <= 128);
    let pinned = ptah_api::shared::PinnedImage::parse(&state.executor_image);
    assert!(
        pinned.is_ok(),
        "executor image {:?} is not pinned",
        state.executor_image
    );
    assert!(state.executor_image.contains("@sha256:"));
    assert!(state.runner_protocol_version >= 1);
    let encoded = state.encode().expect("an accepted state encodes");
    let back = StoredState::decode(&encoded).expect("an encoded state decodes");
    assert_eq!(back, state, "encode → decode is the identity");
    assert_eq!(back.encode().ok(), Some(encoded), "encoding is a fixed point");
    assert_eq!(StoredState::new(&state.inputs(), state.epoch.clone()), state);
});
