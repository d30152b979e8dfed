//! Custom resource types of `operator.ptah.run/v1alpha1`, their condition vocabulary, and the
//! generated CustomResourceDefinitions the chart ships.
//!
//! Each kind lives in its own module; types used by several kinds live in [`shared`]. The CEL
//! rules (`x-kubernetes-validations`) are declared next to the fields they guard.

// `#[kube(printcolumn(type_ = "string", ..), printcolumn(type_ = "string", ..))]` repeats
// argument names by design; clippy reads them as duplicated attributes.
#![allow(clippy::duplicated_attributes)]

pub mod conditions;
mod crd;
pub mod migration;
pub mod migrationapproval;
pub mod migrationplan;
pub mod realm;
pub mod resultrecord;
pub mod runacknowledgment;
pub mod schema;
pub mod schemaapproval;
pub mod schemaplan;
pub mod shared;

pub use crd::{
    CRD_SCHEMA_DIGEST_ANNOTATION, CRD_SCHEMA_VERSION, CRD_SCHEMA_VERSION_ANNOTATION, CrdError, crds,
};
pub use migration::{PtahMigration, PtahMigrationSpec, PtahMigrationStatus};
pub use migrationapproval::{PtahMigrationApproval, PtahMigrationApprovalSpec};
pub use migrationplan::{PtahMigrationPlan, PtahMigrationPlanSpec, PtahMigrationPlanStatus};
pub use realm::{PtahRealm, PtahRealmSpec};
pub use resultrecord::{PtahResultRecord, PtahResultRecordSpec};
pub use runacknowledgment::{PtahMigrationRunAcknowledgment, PtahMigrationRunAcknowledgmentSpec};
pub use schema::{PtahSchema, PtahSchemaSpec, PtahSchemaStatus};
pub use schemaapproval::{PtahSchemaApproval, PtahSchemaApprovalSpec};
pub use schemaplan::{
    PtahSchemaPlan, PtahSchemaPlanChunk, PtahSchemaPlanChunkSpec, PtahSchemaPlanSpec, PtahSchemaPlanStatus,
};

/// The API group of every kind.
pub const GROUP: &str = "operator.ptah.run";
/// The API version of every kind.
pub const VERSION: &str = "v1alpha1";
/// The label that makes a verification-policy ConfigMap wake the resources naming it when it is
/// recreated. The manager watches only ConfigMaps carrying it (metadata only); an unlabelled
/// policy is still read by name at every pass, and a change to it is seen at the next interval.
pub const VERIFICATION_POLICY_LABEL: &str = "operator.ptah.run/verification-policy";
/// The one field manager of every write the manager makes (status, finalizers, Jobs, Leases,
/// plans, the state ConfigMap).
pub const FIELD_MANAGER: &str = "ptah-operator";
/// The finalizer the manager puts on every PtahSchema and PtahMigration it reconciles: it keeps
/// the resource until nothing is in flight and nothing is owed. Only a manager whose
/// `watchNamespace` covers the resource removes it.
pub const FINALIZER: &str = "operator.ptah.run/finalizer";
