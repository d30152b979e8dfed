//! What can stop the manager from establishing its execution binding.

/// Why [`crate::ensure`] refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The stored state was written by a newer manager; this one must not start (roll forward).
    #[error(
        "stored controller state version {stored} in {namespace}/{name} is newer than this manager's {ours}; \
         this manager must not run over it: deploy a release that understands version {stored}"
    )]
    StoredStateNewer {
        /// Namespace of the state ConfigMap.
        namespace: String,
        /// Name of the state ConfigMap.
        name: String,
        /// The version found.
        stored: i64,
        /// [`crate::CONTROLLER_STATE_VERSION`] of this build.
        ours: i64,
    },
    /// The stored state cannot be read; it is never overwritten silently.
    #[error(
        "controller state {namespace}/{name} is unreadable ({reason}); it is left untouched. Inspect it, then \
         delete the ConfigMap to start a fresh epoch (this retires every plan, approval and claim)"
    )]
    Corrupt {
        /// Namespace of the state ConfigMap.
        namespace: String,
        /// Name of the state ConfigMap.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The inputs this manager was started with are not a valid binding.
    #[error("invalid execution-binding input: {0}; fix the manager's configuration")]
    InvalidInputs(String),
    /// Other replicas kept changing the state between our read and our write.
    #[error(
        "controller state {namespace}/{name} changed under us {attempts} times; another manager with different \
         inputs is running: finish the rollout so one set of inputs remains"
    )]
    Contended {
        /// Namespace of the state ConfigMap.
        namespace: String,
        /// Name of the state ConfigMap.
        name: String,
        /// Writes attempted.
        attempts: u32,
    },
    /// The operating system's random source failed.
    #[error("cannot draw a random epoch: {0}")]
    Randomness(String),
    /// The state could not be serialized (a bug: the type is plain strings and integers).
    #[error("cannot serialize the controller state: {0}")]
    Encode(String),
    /// The API server refused or failed a request (RBAC, network, timeouts).
    #[error("controller state {namespace}/{name}: {action} failed: {source}")]
    Api {
        /// Namespace of the state ConfigMap.
        namespace: String,
        /// Name of the state ConfigMap.
        name: String,
        /// `get`, `create` or `replace`.
        action: &'static str,
        /// The client error.
        #[source]
        source: Box<kube::Error>,
    },
}
