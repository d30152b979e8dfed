//! The Lease protocol's constants: the epoch annotation, the labels every Lease carries, and the
//! bounds of a Lease's duration.

/// The annotation carrying the holder's epoch.
pub const EPOCH_ANNOTATION: &str = "operator.ptah.run/lease-epoch";
/// The label every Lease the operator writes carries.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// The value of [`MANAGED_BY_LABEL`].
pub const MANAGED_BY_VALUE: &str = "ptah-operator";
/// The label saying what a Lease coordinates.
pub const COORDINATION_LABEL: &str = "operator.ptah.run/coordination";
/// The shortest Lease duration, in seconds.
pub const MIN_DURATION_SECONDS: i64 = 5;
/// The longest Lease duration, in seconds: 24 h 1 min (the longest Job deadline plus grace).
pub const MAX_DURATION_SECONDS: i64 = 86_460;
