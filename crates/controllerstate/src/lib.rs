//! The durable manager-state contract: versions and the execution-binding epoch.
//!
//! One ConfigMap, [`STATE_CONFIGMAP`] in the coordination namespace, holds the inputs every result
//! is bound to and the epoch they were first seen under. [`ensure`] runs once at manager start: it
//! keeps the epoch while the inputs are unchanged, rotates it to a fresh random one when any input
//! changes (a rollback to earlier values included, so nothing computed under the newer inputs
//! survives), and refuses to start over state written by a newer manager or over state it cannot
//! read. [`is_retired`] is the pure test every plan, approval and claim is held against.

mod epoch;
mod error;
mod state;
mod store;

use ptah_api::shared::{Epoch, ExecutionBindingStatus, IdentityError, PinnedImage};

pub use epoch::fresh_epoch;
pub use error::StateError;
pub use state::{Refusal, STATE_KEY, StoredState};
pub use store::{STATE_CONFIGMAP, ensure, load};

/// The version of the durable state this manager reads and writes.
pub const CONTROLLER_STATE_VERSION: i64 = 1;

/// The inputs an execution binding is made of; any change rotates the epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindingInputs {
    /// The durable state contract version, normally [`CONTROLLER_STATE_VERSION`].
    pub controller_state_version: i64,
    /// The Ptah executor version.
    pub ptah_version: String,
    /// The executor image, pinned by digest (`<name>@sha256:<64 hex>`).
    pub executor_image: String,
    /// The runner result-frame protocol version.
    pub runner_protocol_version: i64,
}

/// The current execution binding: the epoch and the inputs it stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionBinding {
    /// Random per transition of the inputs.
    pub epoch: Epoch,
    /// The inputs this epoch was minted for.
    pub inputs: BindingInputs,
}

impl ExecutionBinding {
    /// The binding as recorded in a resource's `status.executionBinding`.
    pub fn status(&self) -> Result<ExecutionBindingStatus, IdentityError> {
        Ok(ExecutionBindingStatus {
            epoch: Some(self.epoch.clone()),
            controller_state_version: Some(self.inputs.controller_state_version),
            ptah_version: Some(self.inputs.ptah_version.clone()),
            executor_image: Some(PinnedImage::parse(&self.inputs.executor_image)?),
            runner_protocol_version: Some(self.inputs.runner_protocol_version),
        })
    }
}

/// Whether something recorded under `recorded` was computed under another binding than `current`.
///
/// Only the epoch is compared: equal inputs under a different epoch are still retired, because a
/// rollback to identical values must not revive plans or approvals made before the roll-forward.
pub fn is_retired(recorded: &Epoch, current: &ExecutionBinding) -> bool {
    *recorded != current.epoch
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGE: &str =
        "registry.local/ptah@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn binding(epoch: &str) -> ExecutionBinding {
        ExecutionBinding {
            epoch: Epoch::parse(epoch).expect("epoch"),
            inputs: BindingInputs {
                controller_state_version: CONTROLLER_STATE_VERSION,
                ptah_version: "0.9.0".into(),
                executor_image: IMAGE.into(),
                runner_protocol_version: 5,
            },
        }
    }

    #[test]
    fn only_the_current_epoch_is_live() {
        let a = "v1-0123456789abcdef0123456789abcdef";
        let b = "v1-fedcba9876543210fedcba9876543210";
        let current = binding(a);
        assert!(!is_retired(&Epoch::parse(a).expect("a"), &current));
        assert!(is_retired(&Epoch::parse(b).expect("b"), &current));
    }

    #[test]
    fn the_status_block_carries_every_input() {
        let status = binding("v1-0123456789abcdef0123456789abcdef")
            .status()
            .expect("pinned image");
        assert_eq!(status.controller_state_version, Some(1));
        assert_eq!(status.runner_protocol_version, Some(5));
        assert_eq!(status.executor_image.map(String::from).as_deref(), Some(IMAGE));
        let mut unpinned = binding("v1-0123456789abcdef0123456789abcdef");
        unpinned.inputs.executor_image = "registry.local/ptah:0.9.0".into();
        let r = unpinned.status();
        assert!(
            matches!(&r, Err(IdentityError { kind: "digest-pinned image", value, .. })
                if value == "registry.local/ptah:0.9.0"),
            "{r:?}"
        );
    }
}
