//! What a hook refuses, and what stops it from finishing.

/// Why a hook refused to go on. Every message names the object and says what a person can do.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    /// The admission configurations belong to another release (they are a cluster singleton).
    #[error(
        "another release of ptah-operator is installed: {kind} {name} belongs to release {other} \
         (this is {ours}); the admission configurations are a cluster singleton, so uninstall \
         {other} first or upgrade it instead of installing a second release"
    )]
    SecondRelease {
        /// Kind of the configuration found.
        kind: String,
        /// Its name.
        name: String,
        /// `<namespace>/<release>` owning it.
        other: String,
        /// `<namespace>/<release>` of this hook.
        ours: String,
    },
    /// The API server's minor is outside the window this chart supports.
    #[error(
        "the API server is Kubernetes {server}, outside the window this release supports \
         ({window}, from matrix/kubernetes.json); use a release built for that minor"
    )]
    UnsupportedMinor {
        /// The server's `major.minor`.
        server: String,
        /// The supported window, `1.35–1.37`.
        window: String,
    },
    /// Stored controller state is newer than this release understands (a downgrade).
    #[error(
        "{object} holds controllerStateVersion {stored}, newer than the {ours} this release \
         understands: a newer manager wrote it, and an older one would misread it; install that \
         newer release (or a later one) instead"
    )]
    StoredStateNewer {
        /// `<kind> <namespace>/<name>` holding it.
        object: String,
        /// The version found.
        stored: i64,
        /// The version of this build.
        ours: i64,
    },
    /// Stored controller state that no release wrote.
    #[error("{object} holds a malformed controllerStateVersion ({found}); refusing rather than guessing")]
    StoredStateMalformed {
        /// `<kind> <namespace>/<name>` holding it.
        object: String,
        /// What was found, bounded.
        found: String,
    },
    /// The live CRD has a newer schema version than the one shipped (a downgrade).
    #[error(
        "CustomResourceDefinition {crd} is at crd-schema-version {live}; this release ships {ours}, \
         which would lower it (a newer release installed it); downgrading CRDs could drop fields \
         stored objects hold"
    )]
    SchemaVersionLowered {
        /// The CRD's name.
        crd: String,
        /// The live version.
        live: u64,
        /// The shipped version.
        ours: u64,
    },
    /// Same schema version, different schema: one of the two builds forgot to bump the version.
    #[error(
        "CustomResourceDefinition {crd} is at crd-schema-version {version} with digest {live}, \
         but this release ships the same version with digest {ours}; two schemas under one \
         version are refused (the newer build must raise the version)"
    )]
    SameVersionDigestChanged {
        /// The CRD's name.
        crd: String,
        /// The shared version.
        version: u64,
        /// The live digest.
        live: String,
        /// The shipped digest.
        ours: String,
    },
    /// The shipped CRD stops serving a version objects are still stored in.
    #[error(
        "CustomResourceDefinition {crd} still has objects stored as {version} \
         (status.storedVersions), and this release does not serve it; migrate the stored objects \
         and remove {version} from status.storedVersions first"
    )]
    StoredVersionRemoved {
        /// The CRD's name.
        crd: String,
        /// The stored version no longer served.
        version: String,
    },
    /// An identity annotation that no release wrote.
    #[error("CustomResourceDefinition {crd} has a malformed {annotation} annotation ({found})")]
    MalformedIdentity {
        /// The CRD's name.
        crd: String,
        /// The annotation key.
        annotation: &'static str,
        /// Its value, bounded.
        found: String,
    },
    /// Teardown with `crds.keepOnUninstall: false` while objects of a kind remain.
    #[error(
        "crds.keepOnUninstall is false, but {count} {kind} object(s) remain; deleting the CRD would \
         delete them with their history; delete them while the operator runs, or keep the CRDs"
    )]
    ObjectsRemain {
        /// The kind.
        kind: String,
        /// How many remain.
        count: usize,
    },
    /// The new manager never took over the execution binding.
    #[error("{0}")]
    NotRetired(String),
}

/// Why a hook did not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A refusal: nothing was changed by this hook run. (Not a `source`: the message already
    /// holds it, and a cause chain would print it twice.)
    #[error("refused: {0}")]
    Refused(Refusal),
    /// An API request failed.
    #[error("{action} {object}: {source}")]
    Api {
        /// What was attempted (`list`, `update`, …).
        action: &'static str,
        /// What it was attempted on.
        object: String,
        /// The client error.
        source: Box<kube::Error>,
    },
    /// A wait ran out of time.
    #[error("timed out after {seconds} s waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// The budget.
        seconds: u64,
    },
    /// The shipped CRDs or the embedded matrix could not be read: a build defect.
    #[error("this build is broken: {0}")]
    Build(String),
    /// The controller state could not be read.
    #[error(transparent)]
    State(#[from] ptah_controllerstate::StateError),
}

impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Self {
        Error::Refused(refusal)
    }
}

impl Error {
    /// An API error on `object`.
    pub fn api(action: &'static str, object: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
        let object = object.into();
        move |source| Error::Api {
            action,
            object,
            source: Box::new(source),
        }
    }
}

/// At most 64 characters of untrusted text, for messages.
pub(crate) fn bounded(text: &str) -> String {
    let mut out: String = text.chars().take(64).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}
