//! The hardened Job of one data-plane operation.
//!
//! [`build`] turns a [`JobIntent`] (the claim the controller persisted, plus its execution
//! settings) into a `batch/v1` Job: deterministic name ([`job_name`]), the label and annotation
//! envelope ([`labels`]), an `install-runner` init container when the runner comes from an image
//! of its own, a fetch init container for database operations (`fetch-schema` pulling the
//! desired schema, `fetch-migrations` the migration directory), and the main `ptah` container
//! running `ptah-runner` with exactly the
//! environment of the data-plane contract ([`ptah_dataplane::env`]). [`compare`] checks a Job read
//! back from the API server against it. The crate is pure: it names Secrets and never reads them,
//! and never talks to a cluster.

#![warn(missing_docs)]

mod build;
mod check;
mod compare;
pub mod containers;
mod error;
mod intent;
pub mod labels;
mod names;
mod quantity;
mod snapshot;
pub mod volumes;

pub use build::build;
pub use check::MAX_TERMINATION_GRACE_SECONDS;
pub use compare::{Difference, DifferenceKind, IntentMismatch, compare};
pub use error::WorkloadError;
pub use intent::{
    DatabaseAccess, Deadlines, ExpectedSequence, Fetch, Images, JobIntent, ManagerIdentity, OperationInputs,
    PlanProjection, ResultDelivery, SourceAccess,
};
pub use labels::{
    COMPONENT_LABEL, CONTROLLER_IMAGE_ANNOTATION, CONTROLLER_REVISION_ANNOTATION,
    CONTROLLER_STATE_VERSION_ANNOTATION, EXECUTION_BINDING_ID_ANNOTATION, INPUT_FINGERPRINT_ANNOTATION,
    MANAGED_BY_LABEL, MANAGED_BY_VALUE, MIGRATION_COMPONENT, MIGRATION_LABEL, OPERATION_ID_ANNOTATION,
    OPERATION_ID_LABEL, OPERATION_LABEL, PLAN_CONTENT_DIGEST_ANNOTATION, PTAH_VERSION_ANNOTATION,
    RESULT_DELIVERY_ANNOTATION, RESULT_DELIVERY_DURABLE, RESULT_TTL_SECONDS, SAFE_TO_EVICT_ANNOTATION,
    SCHEMA_COMPONENT, SCHEMA_LABEL, is_reserved_key,
};
pub use names::{MAX_JOB_NAME_LEN, job_name, name_word};
pub use snapshot::{JOB_CONTROLLER_LABELS, SNAPSHOT_VERSION, admission_snapshot, template_digest};
