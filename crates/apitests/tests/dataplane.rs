//! T4 + isolation worker, suites `data-plane` and `data-plane-extended` (`cargo xtask e2e
//! --suite data-plane`): the operator's promise under real faults. An exact plan runs at most
//! once, against the database it was planned for; an uncertain outcome is settled by reading the
//! database, never by replaying the plan; no credential leaks on the way.
//!
//! Phase `assert` (`e2e_assert_…`, `dataplane::contract_live`) runs the control-plane contract
//! against a live helm release first. Each scenario runs the manager binary against the cluster
//! with the chart's RBAC, the locally built data-plane image, the TLS registry and a real
//! database, and asserts the Apply Jobs per plan, the database's own state, a leak scan of
//! everything the namespace said, and its own time (`dataplane::scenario`), each also appended
//! as one JSON line to `$PTAH_E2E_SCENARIOS_FILE`. Phase `fault` (`e2e_fault_<what it
//! proves>_<engine>`, suite `data-plane`, the default CI) holds the faults issue 35 names for it:
//! a registry outage, a connection reset, the node cut off, the Apply Pod deleted, the lock held
//! outside, two schemas in one realm, a Plan Pod deleted as soon as it delivered its result durably
//! (and the isolation node's network test). Phase `dataplane` (`e2e_dataplane_…`, suite
//! `data-plane-extended`, the matrix) holds the others.

mod common;
mod contract;
mod lifecycle;
mod migrations;

/// The scenarios and their support, under `tests/dataplane/`.
mod dataplane {
    pub mod by_hand;
    pub mod database;
    pub mod delivered;
    pub mod history;
    pub mod lost_pods;
    pub mod released;
    pub mod scenario;
    pub mod setup;

    mod advisory_lock;
    mod apply_pod_deleted;
    mod connection_reset;
    mod contract_live;
    mod credential_ddl;
    mod deadline_termination;
    mod drift_before_dispatch;
    mod drop_index_blocked;
    mod dsn_refused;
    mod executor_image_upgrade;
    mod external_postgresql;
    mod four_eyes;
    mod injector;
    mod isolation_cutoff;
    mod isolation_cutoff_migration;
    mod manager_restart;
    mod plan_size_bound;
    mod pod_metadata;
    mod privilege_changes;
    mod registry_outage;
    mod result_delivery;
    mod shared_realm;
    mod target_secret_changed;
    mod unapproved_deleted;
    mod watches;
}
