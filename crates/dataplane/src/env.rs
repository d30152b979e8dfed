//! The environment contract: every variable the manager sets on the operation container, which
//! operations get it, which of those cannot run without it, and whether the runner keeps it for
//! itself or hands it to `ptah`.
//!
//! Credential routing follows DESIGN.md §1: database operations get database credentials only
//! (Plan also the dev database), registry operations get registry credentials only. The runner
//! strips every [`Role::Control`] variable before starting the child and passes only the
//! [`Role::Child`] and [`Role::Credential`] variables of its operation.

use crate::Operation;

/// What a variable is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Read by the runner only; never reaches the child.
    Control,
    /// Passed to the child unchanged (or turned into an argument by the runner).
    Child,
    /// A secret passed to the child; the runner redacts it in every output.
    Credential,
}

/// One environment variable of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Var {
    /// The variable name.
    pub name: &'static str,
    /// Its role.
    pub role: Role,
    /// The operations that get it.
    pub operations: &'static [Operation],
    /// The operations (a subset of `operations`) that cannot run without it. Per operation
    /// because some inputs bind only mutating work: a read-only Observe may run before the
    /// manager knows the target identity and reports it instead.
    pub required_by: &'static [Operation],
}

impl Var {
    /// True when `op` gets this variable.
    pub fn applies_to(&self, op: Operation) -> bool {
        self.operations.contains(&op)
    }

    /// True when `op` cannot run without this variable.
    pub fn is_required_by(&self, op: Operation) -> bool {
        self.required_by.contains(&op)
    }
}

use Operation::{
    Apply, MigrationApply as MApply, MigrationHistory as MHistory, Observe, Plan, Resolve, Verify,
};

const ALL_OPS: &[Operation] = &[Resolve, Verify, Observe, Plan, Apply, MHistory, MApply];
const DB_OPS: &[Operation] = &[Observe, Plan, Apply, MHistory, MApply];
const MUTATING: &[Operation] = &[Apply, MApply];
const REGISTRY_OPS: &[Operation] = &[Resolve, Verify];
/// `required_by` of a variable no operation needs.
const OPTIONAL: &[Operation] = &[];

const fn var(
    name: &'static str,
    role: Role,
    operations: &'static [Operation],
    required_by: &'static [Operation],
) -> Var {
    Var {
        name,
        role,
        operations,
        required_by,
    }
}

/// The most chunks a plan directory ([`PLAN_FILE`]) may hold: 16 ConfigMaps of at most 512 KiB
/// each hold the 8 MiB plan cap.
pub const MAX_PLAN_CHUNKS: usize = 16;

/// The file name of chunk `index` in a plan directory: `000.plan`, `001.plan`, …
pub fn plan_chunk_name(index: usize) -> String {
    format!("{index:03}.plan")
}

/// The protocol version the manager speaks (decimal).
pub const PROTOCOL_VERSION: &str = "PTAH_RUNNER_PROTOCOL_VERSION";
/// The operation id of the claim (≤ 256 bytes, no control characters).
pub const OPERATION_ID: &str = "PTAH_OPERATION_ID";
/// The target identity digest the operation is bound to (`sha256:<hex>`). Required by mutating
/// operations; optional for read-only database operations, because the manager never reads the
/// database Secret: it learns the identity from the first Observe's `targetIdentityDigest` and
/// sets it on every later operation. When set it must match the Pod's database URL.
pub const EXPECTED_TARGET_IDENTITY_DIGEST: &str = "PTAH_EXPECTED_TARGET_IDENTITY_DIGEST";
/// The coordination (realm lock) digest the runner echoes into the frame (`sha256:<hex>`).
pub const COORDINATION_DIGEST: &str = "PTAH_COORDINATION_DIGEST";
/// The engine family the manager expects: `postgresql` or `mysql`.
pub const EXPECTED_DATABASE_ENGINE: &str = "PTAH_EXPECTED_DATABASE_ENGINE";
/// RFC 3339: the child must not start after this instant.
pub const DISPATCH_NOT_AFTER: &str = "PTAH_DISPATCH_NOT_AFTER";
/// RFC 3339: the child is terminated at this instant.
pub const EXECUTION_NOT_AFTER: &str = "PTAH_EXECUTION_NOT_AFTER";
/// The Pod's termination grace period in seconds (2/3 for the child, 1/3 for the frame).
pub const TERMINATION_GRACE_PERIOD_SECONDS: &str = "PTAH_TERMINATION_GRACE_PERIOD_SECONDS";
/// The sha256 the plan file must have before Apply starts (`sha256:<hex>`).
pub const EXPECTED_PLAN_CONTENT_DIGEST: &str = "PTAH_EXPECTED_PLAN_CONTENT_DIGEST";
/// The target database URL (a Secret reference).
pub const DB_URL: &str = "PTAH_DB_URL";
/// The dev database URL for Plan.
pub const DEV_URL: &str = "PTAH_DEV_URL";
/// The PEM CA bundle the database URL's TLS mode checks the server against (a mounted file).
pub const DB_CA_FILE: &str = "PTAH_DB_CA_FILE";
/// How long connecting may take (e.g. `10s`).
pub const CONNECT_TIMEOUT: &str = "PTAH_CONNECT_TIMEOUT";
/// How long a schema Apply statement may wait for a table lock.
pub const LOCK_TIMEOUT: &str = "PTAH_LOCK_TIMEOUT";
/// How long a migration Apply waits for the migration lock.
pub const MIGRATION_LOCK_TIMEOUT: &str = "PTAH_MIGRATION_LOCK_TIMEOUT";
/// The desired schema (a file or directory) for Observe, Plan and Apply.
pub const SCHEMA_FROM: &str = "PTAH_SCHEMA_FROM";
/// Plan only: `spec.policy.exclude`, the objects the plan leaves out of management, as a JSON
/// array of glob patterns ([`crate::scope`]); absent, empty or `[]` means none. The runner turns
/// each entry into `--exclude` for both plan runs; the dry-run and Apply take the scope recorded in
/// the plan file, and Observe's raw drift read has no exclusions.
pub const EXCLUDE: &str = "PTAH_EXCLUDE";
/// Plan only: `spec.policy.protectedTables`, the tables no plan may touch, as a JSON array of
/// `table` or `schema.table` ([`crate::scope`]); absent, empty or `[]` means none. The runner
/// turns each entry into `--protected-table`; `ptah` refuses a plan touching one with its error
/// code `protected_table`, reported as `child_failed` with that `childCode`.
pub const PROTECTED_TABLES: &str = "PTAH_PROTECTED_TABLES";
/// The plan of an Apply: a file, or a directory of chunks [`plan_chunk_name`]`(0..n)` (the
/// projected volume of the plan's ConfigMaps) that the runner concatenates in order. The runner
/// verifies the bytes against [`EXPECTED_PLAN_CONTENT_DIGEST`] and hands `ptah` its own copy,
/// so the child never sees this variable.
pub const PLAN_FILE: &str = "PTAH_PLAN_FILE";
/// Whether an Apply may run destructive statements (`true`/`false`), from the approval.
pub const ALLOW_DESTRUCTIVE: &str = "PTAH_ALLOW_DESTRUCTIVE";
/// Whether a MySQL/MariaDB Apply may fall back to copying a table or blocking its writes
/// (`true`; absent means no), from `spec.policy.allowTableCopy`.
pub const ALLOW_TABLE_COPY: &str = "PTAH_ALLOW_TABLE_COPY";
/// The migration directory.
pub const MIGRATIONS_DIR: &str = "PTAH_MIGRATIONS_DIR";
/// The approved migration sequence a migration Apply must find: the JSON array
/// [`crate::expected_sequence`] writes. The runner checks it against
/// [`EXPECTED_MIGRATION_SEQUENCE_DIGEST`] and hands `ptah` its own checked copy as a file
/// (`--expect-sequence=@<file>`), so the child never sees this variable.
pub const EXPECTED_MIGRATION_SEQUENCE: &str = "PTAH_EXPECTED_MIGRATION_SEQUENCE";
/// The digest of the approved sequence (`sha256:<hex>`, [`crate::sequence_digest`]): the runner
/// refuses before the child when the sequence does not have it, and reports a run whose
/// `sequence_fingerprint` differs from it as `migration_sequence_mismatch`.
pub const EXPECTED_MIGRATION_SEQUENCE_DIGEST: &str = "PTAH_EXPECTED_MIGRATION_SEQUENCE_DIGEST";
/// The reference to resolve or verify (`oci://…`).
pub const REQUESTED_REFERENCE: &str = "PTAH_REQUESTED_REFERENCE";
/// The verification policy file of Verify, and of a Resolve that verifies what it resolved.
pub const VERIFICATION_POLICY: &str = "PTAH_VERIFICATION_POLICY";
/// Registry user name.
pub const REGISTRY_USERNAME: &str = "PTAH_REGISTRY_USERNAME";
/// Registry password.
pub const REGISTRY_PASSWORD: &str = "PTAH_REGISTRY_PASSWORD";
/// Registry bearer token.
pub const REGISTRY_TOKEN: &str = "PTAH_REGISTRY_TOKEN";
/// The directory holding the registry's Docker `config.json` (DockerConfigJSON credentials).
pub const DOCKER_CONFIG: &str = "DOCKER_CONFIG";
/// A CA bundle to trust for the registry.
pub const OCI_CA_FILE: &str = "PTAH_OCI_CA_FILE";
/// Talk plain HTTP to the registry (`true`/`false`).
pub const PLAIN_HTTP: &str = "PTAH_PLAIN_HTTP";
/// The child's home directory.
pub const HOME: &str = "HOME";
/// The reference as its author wrote it, for a Verify of its pinned form: the runner passes it as
/// `--requested-reference`, so `require_digest_pin` judges what the author pinned.
pub const AUTHORED_REFERENCE: &str = "PTAH_AUTHORED_REFERENCE";
/// How the registry credentials reached the container; its presence makes the runner and `ptah`
/// enforce the grant the Secret carries (`ptah_registrygrant`).
pub const REGISTRY_GRANT_MODE: &str = ptah_registrygrant::ENV_MODE;
/// The authority the registry Secret grants its credentials to (Secret key `registry`).
pub const REGISTRY_GRANT: &str = ptah_registrygrant::ENV_REGISTRY;
/// Whether the registry Secret lets its credentials travel over plain HTTP (key `allowPlainHTTP`).
pub const REGISTRY_PLAIN_HTTP_GRANT: &str = ptah_registrygrant::ENV_ALLOW_PLAIN_HTTP;
/// The digest of the one CA bundle the registry Secret grants (key `caSHA256`).
pub const REGISTRY_CA_SHA256_GRANT: &str = ptah_registrygrant::ENV_CA_SHA256;
/// The child's temporary directory.
pub const TMPDIR: &str = "TMPDIR";
/// The child's log filter.
pub const LOG: &str = "PTAH_LOG";
/// Where the runner writes its termination summary (tests; default `/dev/termination-log`).
pub const TERMINATION_LOG: &str = "PTAH_TERMINATION_LOG";

/// `durable`: the runner delivers its result to the manager's receiver over mutual TLS and
/// writes no frame (docs/security.md, "Durable result delivery"); absent: the log frame.
pub const RESULT_DELIVERY: &str = "PTAH_RESULT_DELIVERY";
/// The value of [`RESULT_DELIVERY`] that asks for durable delivery.
pub const RESULT_DELIVERY_DURABLE: &str = "durable";
/// The receiver's `host:port`.
pub const RESULT_ENDPOINT: &str = "PTAH_RESULT_ENDPOINT";
/// The DNS name the receiver's certificate carries.
pub const RESULT_SERVER_NAME: &str = "PTAH_RESULT_SERVER_NAME";
/// The result CA bundle (PEM) the receiver's certificate chains to.
pub const RESULT_CA_FILE: &str = "PTAH_RESULT_CA_FILE";
/// The enrolment ticket (JSON: the resource, the operation id and the one-time token), projected
/// from the operation's ConfigMap.
pub const RESULT_TICKET_FILE: &str = "PTAH_RESULT_TICKET_FILE";
/// The Pod's name (downward API).
pub const POD_NAME: &str = "PTAH_POD_NAME";
/// The Pod's UID (downward API).
pub const POD_UID: &str = "PTAH_POD_UID";

/// The whole contract.
pub const VARS: &[Var] = &[
    var(PROTOCOL_VERSION, Role::Control, ALL_OPS, ALL_OPS),
    var(OPERATION_ID, Role::Control, ALL_OPS, ALL_OPS),
    var(TERMINATION_LOG, Role::Control, ALL_OPS, OPTIONAL),
    var(EXPECTED_TARGET_IDENTITY_DIGEST, Role::Control, DB_OPS, MUTATING),
    var(COORDINATION_DIGEST, Role::Control, DB_OPS, DB_OPS),
    var(EXPECTED_DATABASE_ENGINE, Role::Control, DB_OPS, DB_OPS),
    var(DISPATCH_NOT_AFTER, Role::Control, MUTATING, MUTATING),
    var(EXECUTION_NOT_AFTER, Role::Control, MUTATING, MUTATING),
    var(
        TERMINATION_GRACE_PERIOD_SECONDS,
        Role::Control,
        MUTATING,
        MUTATING,
    ),
    var(EXPECTED_PLAN_CONTENT_DIGEST, Role::Control, &[Apply], &[Apply]),
    var(DB_URL, Role::Credential, DB_OPS, DB_OPS),
    var(DEV_URL, Role::Credential, &[Plan], OPTIONAL),
    var(DB_CA_FILE, Role::Child, DB_OPS, OPTIONAL),
    var(CONNECT_TIMEOUT, Role::Child, DB_OPS, OPTIONAL),
    var(LOCK_TIMEOUT, Role::Child, &[Apply], OPTIONAL),
    var(MIGRATION_LOCK_TIMEOUT, Role::Child, &[MApply], OPTIONAL),
    var(
        SCHEMA_FROM,
        Role::Child,
        &[Observe, Plan, Apply],
        &[Observe, Plan, Apply],
    ),
    var(EXCLUDE, Role::Control, &[Plan], OPTIONAL),
    var(PROTECTED_TABLES, Role::Control, &[Plan], OPTIONAL),
    var(PLAN_FILE, Role::Control, &[Apply], &[Apply]),
    var(ALLOW_DESTRUCTIVE, Role::Child, &[Apply], OPTIONAL),
    var(
        MIGRATIONS_DIR,
        Role::Child,
        &[MHistory, MApply],
        &[MHistory, MApply],
    ),
    var(EXPECTED_MIGRATION_SEQUENCE, Role::Control, &[MApply], &[MApply]),
    var(
        EXPECTED_MIGRATION_SEQUENCE_DIGEST,
        Role::Control,
        &[MApply],
        &[MApply],
    ),
    var(REQUESTED_REFERENCE, Role::Child, REGISTRY_OPS, REGISTRY_OPS),
    var(AUTHORED_REFERENCE, Role::Control, &[Verify], OPTIONAL),
    // A Resolve that is given the policy verifies what it resolved, in the same Pod.
    var(VERIFICATION_POLICY, Role::Child, REGISTRY_OPS, &[Verify]),
    var(REGISTRY_USERNAME, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(REGISTRY_PASSWORD, Role::Credential, REGISTRY_OPS, OPTIONAL),
    var(REGISTRY_TOKEN, Role::Credential, REGISTRY_OPS, OPTIONAL),
    var(DOCKER_CONFIG, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(OCI_CA_FILE, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(PLAIN_HTTP, Role::Child, REGISTRY_OPS, OPTIONAL),
    // The child checks the grant again itself: the same rule at its own connection.
    var(REGISTRY_GRANT_MODE, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(REGISTRY_GRANT, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(REGISTRY_PLAIN_HTTP_GRANT, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(REGISTRY_CA_SHA256_GRANT, Role::Child, REGISTRY_OPS, OPTIONAL),
    var(HOME, Role::Child, ALL_OPS, OPTIONAL),
    var(TMPDIR, Role::Child, ALL_OPS, OPTIONAL),
    var(LOG, Role::Child, ALL_OPS, OPTIONAL),
    var(RESULT_DELIVERY, Role::Control, ALL_OPS, OPTIONAL),
    var(RESULT_ENDPOINT, Role::Control, ALL_OPS, OPTIONAL),
    var(RESULT_SERVER_NAME, Role::Control, ALL_OPS, OPTIONAL),
    var(RESULT_CA_FILE, Role::Control, ALL_OPS, OPTIONAL),
    var(RESULT_TICKET_FILE, Role::Control, ALL_OPS, OPTIONAL),
    var(POD_NAME, Role::Control, ALL_OPS, OPTIONAL),
    var(POD_UID, Role::Control, ALL_OPS, OPTIONAL),
];

/// The variable of this name, if the contract has one.
pub fn lookup(name: &str) -> Option<&'static Var> {
    VARS.iter().find(|v| v.name == name)
}

/// The variables `op` gets, in contract order.
pub fn for_operation(op: Operation) -> impl Iterator<Item = &'static Var> {
    VARS.iter().filter(move |v| v.applies_to(op))
}

/// The variables `op` cannot run without, in contract order.
pub fn required_by(op: Operation) -> impl Iterator<Item = &'static Var> {
    VARS.iter().filter(move |v| v.is_required_by(op))
}

/// The variables the child of `op` may see: its child and credential variables.
pub fn child_vars(op: Operation) -> impl Iterator<Item = &'static Var> {
    for_operation(op).filter(|v| v.role != Role::Control)
}

/// The credential variables of `op`: the ones whose values must be redacted.
pub fn credentials(op: Operation) -> impl Iterator<Item = &'static Var> {
    for_operation(op).filter(|v| v.role == Role::Credential)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn names_are_unique() {
        let names: HashSet<&str> = VARS.iter().map(|v| v.name).collect();
        assert_eq!(names.len(), VARS.len());
    }

    #[test]
    fn credentials_never_cross_families() {
        for op in Operation::all() {
            let creds: Vec<&str> = credentials(op).map(|v| v.name).collect();
            if op.uses_registry() {
                assert!(!creds.contains(&DB_URL) && !creds.contains(&DEV_URL), "{op}");
            } else {
                assert!(creds.contains(&DB_URL), "{op}");
                assert!(!creds.iter().any(|c| c.starts_with("PTAH_REGISTRY")), "{op}");
                assert!(!for_operation(op).any(|v| v.name == REGISTRY_USERNAME), "{op}");
            }
        }
        let plan: Vec<&str> = credentials(Operation::Plan).map(|v| v.name).collect();
        assert!(plan.contains(&DEV_URL));
        assert!(!credentials(Operation::Apply).any(|v| v.name == DEV_URL));
    }

    #[test]
    fn control_variables_never_reach_the_child() {
        for op in Operation::all() {
            assert!(child_vars(op).all(|v| v.role != Role::Control));
            assert!(!child_vars(op).any(|v| v.name == PROTOCOL_VERSION || v.name == OPERATION_ID));
        }
    }

    #[test]
    fn mutating_operations_need_deadlines_and_grace() {
        for op in [Operation::Apply, Operation::MigrationApply] {
            for name in [
                DISPATCH_NOT_AFTER,
                EXECUTION_NOT_AFTER,
                TERMINATION_GRACE_PERIOD_SECONDS,
            ] {
                let v = lookup(name).expect("in the contract");
                assert!(v.applies_to(op) && v.is_required_by(op), "{name} for {op}");
            }
        }
    }

    #[test]
    fn a_variable_is_required_only_by_operations_that_get_it() {
        for v in VARS {
            assert!(v.required_by.iter().all(|op| v.applies_to(*op)), "{}", v.name);
        }
    }

    #[test]
    fn the_target_identity_binds_mutating_operations_and_is_learned_by_read_only_ones() {
        let v = lookup(EXPECTED_TARGET_IDENTITY_DIGEST).expect("in the contract");
        for op in Operation::all() {
            assert_eq!(v.applies_to(op), op.uses_database(), "{op}");
            assert_eq!(v.is_required_by(op), op.is_mutating(), "{op}");
            assert_eq!(
                required_by(op).any(|r| r.name == EXPECTED_TARGET_IDENTITY_DIGEST),
                op.is_mutating(),
                "{op}"
            );
        }
    }

    #[test]
    fn only_plan_gets_the_planning_scope_and_the_child_never_sees_it() {
        for name in [EXCLUDE, PROTECTED_TABLES] {
            let v = lookup(name).expect("in the contract");
            for op in Operation::all() {
                // Observe reads raw drift; Apply takes the scope recorded in its plan.
                assert_eq!(v.applies_to(op), op == Operation::Plan, "{name} {op}");
                assert!(!child_vars(op).any(|c| c.name == name), "{name} {op}");
            }
        }
    }

    #[test]
    fn the_docker_config_reaches_only_registry_operations() {
        let v = lookup(DOCKER_CONFIG).expect("in the contract");
        for op in Operation::all() {
            assert_eq!(
                child_vars(op).any(|c| c.name == DOCKER_CONFIG),
                op.uses_registry(),
                "{op}"
            );
        }
        assert!(v.required_by.is_empty());
    }

    #[test]
    fn the_approved_sequence_binds_only_a_migration_apply_and_stays_with_the_runner() {
        for name in [EXPECTED_MIGRATION_SEQUENCE, EXPECTED_MIGRATION_SEQUENCE_DIGEST] {
            let v = lookup(name).expect("in the contract");
            assert_eq!(v.role, Role::Control, "{name}");
            for op in Operation::all() {
                let mapply = op == Operation::MigrationApply;
                assert_eq!(
                    (v.applies_to(op), v.is_required_by(op)),
                    (mapply, mapply),
                    "{name} {op}"
                );
            }
        }
    }

    #[test]
    fn the_plan_location_is_the_runners_and_chunks_are_numbered_in_three_digits() {
        assert!(!child_vars(Operation::Apply).any(|v| v.name == PLAN_FILE));
        assert_eq!(plan_chunk_name(0), "000.plan");
        assert_eq!(plan_chunk_name(MAX_PLAN_CHUNKS - 1), "015.plan");
    }
}
