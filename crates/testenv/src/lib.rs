//! The development environment the tests run against: real PostgreSQL, MariaDB and OCI
//! registries ([`services`]), the pinned Kubernetes programs built from their Go modules
//! ([`k8s`]), a real Kubernetes on loopback ([`cluster`]) or kind ([`kind`]), and the
//! workspace's container images built without Docker ([`images`]).
//!
//! The `ptah-testenv` binary serves these as `cargo xtask services|k8s-bin|cluster|images`.

pub mod cluster;
pub mod disk;
pub mod images;
pub mod k8s;
pub mod kind;
pub mod scenario;
pub mod services;
pub mod step;
