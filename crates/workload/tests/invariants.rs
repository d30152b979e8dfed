//! One test per invariant of the operation Job, over every operation and registry access.

mod common;

use std::collections::BTreeMap;

use common::{ALL_OPS, MIGRATION_OPS, access_variants, intent, intent_with};
use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{Container, EnvVar, PodSpec},
};
use ptah_dataplane::{
    Operation,
    env::{self, Role},
};
use ptah_workload::{
    ExpectedSequence, JobIntent, OperationInputs, WorkloadError, build,
    containers::{
        FETCH_MIGRATIONS_CONTAINER, FETCH_SCHEMA_CONTAINER, INSTALL_RUNNER_CONTAINER, MAIN_CONTAINER,
    },
    volumes::{DOCKER_CONFIG_VOLUME, MIGRATIONS_DIR, PLAN_DIR},
};

fn pod(job: &Job) -> &PodSpec {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .expect("pod spec")
}

fn all_containers(job: &Job) -> Vec<&Container> {
    let p = pod(job);
    p.init_containers.iter().flatten().chain(&p.containers).collect()
}

fn main_container(job: &Job) -> &Container {
    let p = pod(job);
    assert_eq!(p.containers.len(), 1);
    assert_eq!(p.containers[0].name, MAIN_CONTAINER);
    &p.containers[0]
}

fn env_of(c: &Container) -> BTreeMap<&str, &EnvVar> {
    c.env.iter().flatten().map(|e| (e.name.as_str(), e)).collect()
}

fn value<'a>(c: &'a Container, name: &str) -> Option<&'a str> {
    env_of(c).get(name).and_then(|e| e.value.as_deref())
}

/// Every built Job of the test matrix: each operation with each registry access.
fn every_job() -> Vec<(Operation, Job)> {
    let mut out = Vec::new();
    for op in ALL_OPS {
        for access in access_variants() {
            out.push((op, build(&intent_with(op, access)).expect("builds")));
        }
    }
    out
}

#[test]
fn no_service_account_token_and_no_service_links() {
    for (op, job) in every_job() {
        let p = pod(&job);
        assert_eq!(p.automount_service_account_token, Some(false), "{op}");
        assert_eq!(p.enable_service_links, Some(false), "{op}");
    }
}

#[test]
fn the_pod_runs_as_65532_non_root_with_the_runtime_default_seccomp_profile() {
    for (op, job) in every_job() {
        let sc = pod(&job).security_context.as_ref().expect("pod security context");
        assert_eq!(sc.run_as_non_root, Some(true), "{op}");
        assert_eq!(
            (sc.run_as_user, sc.run_as_group, sc.fs_group),
            (Some(65532), Some(65532), Some(65532))
        );
        let seccomp = sc.seccomp_profile.as_ref().expect("seccomp");
        assert_eq!(seccomp.type_, "RuntimeDefault");
        for c in all_containers(&job) {
            let csc = c.security_context.as_ref().expect("container security context");
            assert_eq!(csc.run_as_user, Some(65532), "{op} {}", c.name);
            assert_ne!(csc.run_as_non_root, Some(false), "{op} {}", c.name);
            assert!(
                csc.seccomp_profile.is_none(),
                "the pod's profile applies to {}",
                c.name
            );
        }
    }
}

#[test]
fn every_container_has_a_read_only_root_no_escalation_and_no_capability() {
    for (op, job) in every_job() {
        for c in all_containers(&job) {
            let sc = c.security_context.as_ref().expect("security context");
            assert_eq!(sc.read_only_root_filesystem, Some(true), "{op} {}", c.name);
            assert_eq!(sc.allow_privilege_escalation, Some(false), "{op} {}", c.name);
            assert_ne!(sc.privileged, Some(true), "{op} {}", c.name);
            let caps = sc.capabilities.as_ref().expect("capabilities");
            assert_eq!(
                caps.drop.as_deref(),
                Some(&["ALL".to_owned()][..]),
                "{op} {}",
                c.name
            );
            assert!(caps.add.is_none(), "{op} {}", c.name);
            assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
            assert_eq!(c.resources, common::execution().resources, "{op} {}", c.name);
        }
    }
}

/// What a container can reach: the database, a registry, both, or neither.
fn credentials(c: &Container, p: &PodSpec) -> (bool, bool) {
    let env = env_of(c);
    let db = [env::DB_URL, env::DEV_URL].iter().any(|n| env.contains_key(n));
    let docker_mount = c
        .volume_mounts
        .iter()
        .flatten()
        .any(|m| m.name == DOCKER_CONFIG_VOLUME);
    let registry = [
        env::REGISTRY_USERNAME,
        env::REGISTRY_PASSWORD,
        env::REGISTRY_TOKEN,
    ]
    .iter()
    .any(|n| env.contains_key(n))
        || docker_mount;
    // Any other Secret reference would be a credential this test does not know about.
    for e in env.values() {
        if let Some(from) = &e.value_from {
            assert!(
                from.secret_key_ref.is_none() || db || registry,
                "{}: {}",
                c.name,
                e.name
            );
            assert!(
                from.config_map_key_ref.is_none() && from.field_ref.is_none(),
                "{}",
                e.name
            );
        }
    }
    assert!(
        c.env_from.is_none(),
        "{}: envFrom could import any Secret",
        c.name
    );
    let secret_volumes: Vec<&str> = p
        .volumes
        .iter()
        .flatten()
        .filter(|v| v.secret.is_some())
        .map(|v| v.name.as_str())
        .collect();
    for m in c.volume_mounts.iter().flatten() {
        assert!(
            !secret_volumes.contains(&m.name.as_str()) || m.name == DOCKER_CONFIG_VOLUME,
            "{}: {}",
            c.name,
            m.name
        );
    }
    (db, registry)
}

#[test]
fn credentials_never_cross_between_containers() {
    for (op, job) in every_job() {
        let p = pod(&job);
        for c in all_containers(&job) {
            let (db, registry) = credentials(c, p);
            assert!(!(db && registry), "{op} {}: both families", c.name);
            match c.name.as_str() {
                INSTALL_RUNNER_CONTAINER => {
                    assert!(!db && !registry && c.env.is_none(), "{op}: install-runner");
                }
                FETCH_SCHEMA_CONTAINER | FETCH_MIGRATIONS_CONTAINER => {
                    assert!(op.uses_database(), "{op}: a registry operation needs no fetch");
                    assert!(!db, "{op}: {} sees the database", c.name);
                    let migration = MIGRATION_OPS.contains(&op);
                    assert_eq!(
                        c.name == FETCH_MIGRATIONS_CONTAINER,
                        migration,
                        "{op}: {} fetches the wrong kind",
                        c.name
                    );
                    // Only what the registry client reads, and where `ptah`, running without
                    // the runner here, writes its typed refusal: no other variable of the runner.
                    for e in c.env.iter().flatten().filter(|e| e.name != env::TERMINATION_LOG) {
                        let var = env::lookup(&e.name).map(|v| v.role);
                        assert!(
                            matches!(var, Some(Role::Child | Role::Credential)),
                            "{op} {}: {}",
                            c.name,
                            e.name
                        );
                    }
                }
                MAIN_CONTAINER if op.uses_registry() => assert!(!db, "{op}: main sees the database"),
                MAIN_CONTAINER => {
                    assert!(db, "{op}: main lacks the database");
                    assert!(!registry, "{op}: main sees the registry");
                    let dev = env_of(c).contains_key(env::DEV_URL);
                    assert_eq!(dev, op == Operation::Plan, "{op}: the dev URL is Plan's only");
                }
                other => panic!("{op}: unexpected container {other}"),
            }
        }
    }
}

#[test]
fn the_database_urls_come_only_from_secret_references() {
    for (op, job) in every_job() {
        for c in all_containers(&job) {
            for e in c.env.iter().flatten() {
                let credential = env::lookup(&e.name).is_some_and(|v| v.role == Role::Credential);
                if credential {
                    assert!(
                        e.value.is_none(),
                        "{op} {}: {} has a literal value",
                        c.name,
                        e.name
                    );
                    let from = e.value_from.as_ref().and_then(|f| f.secret_key_ref.as_ref());
                    assert!(
                        from.is_some(),
                        "{op} {}: {} is not a Secret reference",
                        c.name,
                        e.name
                    );
                }
            }
        }
    }
}

#[test]
fn the_main_container_gets_exactly_the_contract_of_its_operation() {
    for (op, job) in every_job() {
        let main = main_container(&job);
        for e in main.env.iter().flatten() {
            let var =
                env::lookup(&e.name).unwrap_or_else(|| panic!("{op}: {} is outside the contract", e.name));
            assert!(var.applies_to(op), "{op}: {} is not for this operation", e.name);
        }
        for var in env::required_by(op) {
            assert!(
                env_of(main).contains_key(var.name),
                "{op}: required {} missing",
                var.name
            );
        }
        let args = main.args.as_deref().unwrap_or_default();
        assert_eq!(&args[..2], ["--operation", op.as_str()]);
        assert_eq!(
            main.command.as_deref(),
            Some(&["/runner/ptah-runner".to_owned()][..])
        );
        assert_eq!(value(main, env::PROTOCOL_VERSION), Some("1"));
        assert_eq!(value(main, env::OPERATION_ID), Some(common::OPERATION_ID));
    }
}

#[test]
fn a_resolve_gets_the_verification_policy_only_when_it_verifies() {
    let verifying = build(&intent(Operation::Resolve)).expect("a verifying Resolve builds");
    assert_eq!(
        value(main_container(&verifying), env::VERIFICATION_POLICY),
        value(
            main_container(&build(&intent(Operation::Verify)).expect("a Verify builds")),
            env::VERIFICATION_POLICY
        ),
        "the verifying Resolve reads the policy where a Verify does"
    );
    let mut plain = intent(Operation::Resolve);
    if let OperationInputs::Resolve { policy, .. } = &mut plain.inputs {
        *policy = None;
    }
    let job = build(&plain).expect("a Resolve without a policy builds");
    assert_eq!(value(main_container(&job), env::VERIFICATION_POLICY), None);
    let volumes = pod(&job).volumes.iter().flatten().count();
    assert_eq!(volumes + 1, pod(&verifying).volumes.iter().flatten().count());
}

#[test]
fn every_database_operation_has_exactly_one_fetch_and_registry_operations_none() {
    for (op, job) in every_job() {
        let fetches: Vec<&str> = pod(&job)
            .init_containers
            .iter()
            .flatten()
            .map(|c| c.name.as_str())
            .filter(|n| n.starts_with("fetch-"))
            .collect();
        let want: &[&str] = if MIGRATION_OPS.contains(&op) {
            &[FETCH_MIGRATIONS_CONTAINER]
        } else if op.uses_database() {
            &[FETCH_SCHEMA_CONTAINER]
        } else {
            &[]
        };
        assert_eq!(fetches, want, "{op}");
    }
}

#[test]
fn the_target_identity_is_set_only_when_known() {
    for op in [Operation::Observe, Operation::Plan, Operation::MigrationHistory] {
        let with = build(&intent(op)).expect("builds");
        assert_eq!(
            value(main_container(&with), env::EXPECTED_TARGET_IDENTITY_DIGEST),
            Some(common::TARGET_IDENTITY)
        );
        let mut i = intent(op);
        match &mut i.inputs {
            OperationInputs::Observe { db, .. }
            | OperationInputs::Plan { db, .. }
            | OperationInputs::Apply { db, .. }
            | OperationInputs::MigrationHistory { db, .. }
            | OperationInputs::MigrationApply { db, .. } => db.expected_target_identity = None,
            _ => unreachable!(),
        }
        let without = build(&i).expect("builds");
        assert!(!env_of(main_container(&without)).contains_key(env::EXPECTED_TARGET_IDENTITY_DIGEST));
    }
    for op in [Operation::Apply, Operation::MigrationApply] {
        let mut i = intent(op);
        match &mut i.inputs {
            OperationInputs::Apply { db, .. } | OperationInputs::MigrationApply { db, .. } => {
                db.expected_target_identity = None;
            }
            _ => unreachable!(),
        }
        assert_eq!(build(&i), Err(WorkloadError::MissingTargetIdentity(op)));
    }
}

#[test]
fn deadlines_bound_the_job_the_pod_and_mutating_children() {
    for (op, job) in every_job() {
        let i = intent(op);
        let spec = job.spec.as_ref().expect("spec");
        let d = i.deadlines.active_deadline_seconds;
        assert_eq!(spec.active_deadline_seconds, Some(d), "{op}");
        assert_eq!(pod(&job).active_deadline_seconds, Some(d), "{op}");
        let grace = i.deadlines.termination_grace_period_seconds;
        assert_eq!(pod(&job).termination_grace_period_seconds, Some(grace));
        assert!(
            spec.ttl_seconds_after_finished.is_none(),
            "{op}: TTL is set after the result is read"
        );
        assert_eq!(
            (spec.backoff_limit, spec.parallelism, spec.completions),
            (Some(0), Some(1), Some(1))
        );
        assert_eq!(spec.pod_replacement_policy.as_deref(), Some("Failed"));
        assert_eq!(pod(&job).restart_policy.as_deref(), Some("Never"));
        let main = main_container(&job);
        for name in [
            env::DISPATCH_NOT_AFTER,
            env::EXECUTION_NOT_AFTER,
            env::TERMINATION_GRACE_PERIOD_SECONDS,
        ] {
            assert_eq!(value(main, name).is_some(), op.is_mutating(), "{op}: {name}");
        }
        if op.is_mutating() {
            let dispatch: jiff::Timestamp = value(main, env::DISPATCH_NOT_AFTER)
                .expect("set")
                .parse()
                .expect("rfc3339");
            assert_eq!(Some(dispatch), i.deadlines.dispatch_not_after);
            assert_eq!(
                value(main, env::TERMINATION_GRACE_PERIOD_SECONDS),
                Some(grace.to_string().as_str())
            );
        }
    }
}

#[test]
fn an_apply_without_its_deadlines_is_refused() {
    for op in [Operation::Apply, Operation::MigrationApply] {
        let mut i = intent(op);
        i.deadlines.dispatch_not_after = None;
        assert_eq!(
            build(&i),
            Err(WorkloadError::MissingDeadline(env::DISPATCH_NOT_AFTER)),
            "{op}"
        );
        let mut i = intent(op);
        i.deadlines.execution_not_after = None;
        assert_eq!(
            build(&i),
            Err(WorkloadError::MissingDeadline(env::EXECUTION_NOT_AFTER)),
            "{op}"
        );
        let mut i = intent(op);
        i.deadlines.dispatch_not_after = Some(common::ts("2030-01-01T01:00:00Z"));
        assert!(
            matches!(build(&i), Err(WorkloadError::InvalidDeadline(_))),
            "{op}"
        );
    }
    for grace in [0, -1, 3601] {
        let mut i = intent(Operation::Observe);
        i.deadlines.termination_grace_period_seconds = grace;
        assert!(
            matches!(build(&i), Err(WorkloadError::InvalidDeadline(_))),
            "{grace}"
        );
    }
    let mut i = intent(Operation::Plan);
    i.deadlines.active_deadline_seconds = 0;
    assert!(matches!(build(&i), Err(WorkloadError::InvalidDeadline(_))));
}

#[test]
fn reserved_pod_metadata_keys_are_refused() {
    for (kind, key) in [
        ("label", "app.kubernetes.io/managed-by"),
        ("label", "operator.ptah.run/schema"),
        ("label", "job-name"),
        ("annotation", "cluster-autoscaler.kubernetes.io/safe-to-evict"),
        ("annotation", "operator.ptah.run/operation-id"),
        ("annotation", "batch.kubernetes.io/job-tracking"),
    ] {
        let mut i = intent(Operation::Observe);
        let meta = i.execution.pod_metadata.as_mut().expect("pod metadata");
        let map = if kind == "label" {
            &mut meta.labels
        } else {
            &mut meta.annotations
        };
        map.insert(key.to_owned(), "x".to_owned());
        assert_eq!(
            build(&i),
            Err(WorkloadError::ReservedPodMetadata {
                kind,
                key: key.to_owned()
            }),
            "{key}"
        );
    }
}

#[test]
fn the_label_and_annotation_envelope() {
    for op in ALL_OPS {
        let job = build(&intent(op)).expect("builds");
        let labels = job.metadata.labels.clone().unwrap_or_default();
        assert_eq!(labels.len(), 5, "{op}");
        assert_eq!(labels[ptah_workload::MANAGED_BY_LABEL], "ptah-operator");
        let (component, owner) = if MIGRATION_OPS.contains(&op) {
            (ptah_workload::MIGRATION_COMPONENT, ptah_workload::MIGRATION_LABEL)
        } else {
            (ptah_workload::SCHEMA_COMPONENT, ptah_workload::SCHEMA_LABEL)
        };
        assert_eq!(labels[ptah_workload::COMPONENT_LABEL], component, "{op}");
        assert_eq!(labels[owner], common::RESOURCE, "{op}");
        let name = job.metadata.name.as_deref().unwrap_or_default();
        assert!(
            name.starts_with(&format!("ptah-{}-", ptah_workload::name_word(op))),
            "{op}: {name}"
        );
        assert_eq!(labels[ptah_workload::OPERATION_LABEL], op.as_str());
        assert_eq!(labels[ptah_workload::OPERATION_ID_LABEL], "0123456789abcdef");
        let annotations = job.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            annotations.len(),
            if op == Operation::Apply { 8 } else { 7 },
            "{op}"
        );
        assert_eq!(
            annotations[ptah_workload::OPERATION_ID_ANNOTATION],
            common::OPERATION_ID
        );
        let template = job
            .spec
            .as_ref()
            .and_then(|s| s.template.metadata.as_ref())
            .expect("template");
        let pod_labels = template.labels.clone().unwrap_or_default();
        assert!(labels.iter().all(|(k, v)| pod_labels.get(k) == Some(v)), "{op}");
        assert_eq!(pod_labels.get("team").map(String::as_str), Some("payments"));
        let pod_annotations = template.annotations.clone().unwrap_or_default();
        let evict = pod_annotations.get(ptah_workload::SAFE_TO_EVICT_ANNOTATION);
        assert_eq!(
            evict.map(String::as_str),
            op.is_mutating().then_some("false"),
            "{op}"
        );
        let owners = job.metadata.owner_references.as_deref().unwrap_or_default();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].controller, Some(true));
    }
}

#[test]
fn writable_volumes_are_memory_backed_and_bounded() {
    for (op, job) in every_job() {
        for v in pod(&job).volumes.iter().flatten() {
            if let Some(dir) = &v.empty_dir {
                assert_eq!(dir.medium.as_deref(), Some("Memory"), "{op} {}", v.name);
                assert!(dir.size_limit.is_some(), "{op} {}", v.name);
            } else {
                assert!(
                    v.config_map.is_some() || v.secret.is_some() || v.projected.is_some(),
                    "{}",
                    v.name
                );
                assert!(v.host_path.is_none());
            }
        }
        for c in all_containers(&job) {
            for m in c.volume_mounts.iter().flatten() {
                let writable = m.read_only != Some(true);
                let scratch = [
                    "runner",
                    "work",
                    "schema-source",
                    "migrations-source",
                    "fetch-work",
                ]
                .contains(&m.name.as_str());
                assert!(!writable || scratch, "{op} {}: {} is writable", c.name, m.name);
            }
        }
    }
}

#[test]
fn an_apply_may_copy_a_table_only_when_the_policy_allows_it() {
    let job = build(&intent(Operation::Apply)).expect("builds");
    assert_eq!(value(main_container(&job), env::ALLOW_TABLE_COPY), None);
    let mut allowed = intent(Operation::Apply);
    if let OperationInputs::Apply { plan, .. } = &mut allowed.inputs {
        plan.allow_table_copy = true;
    }
    let job = build(&allowed).expect("builds");
    assert_eq!(value(main_container(&job), env::ALLOW_TABLE_COPY), Some("true"));
    for op in [Operation::Plan, Operation::Observe, Operation::MigrationApply] {
        let job = build(&intent(op)).expect("builds");
        assert_eq!(value(main_container(&job), env::ALLOW_TABLE_COPY), None, "{op:?}");
    }
}

#[test]
fn an_apply_reads_its_plan_chunks_in_order_from_one_directory() {
    let job = build(&intent(Operation::Apply)).expect("builds");
    let main = main_container(&job);
    assert_eq!(value(main, env::PLAN_FILE), Some(PLAN_DIR));
    assert_eq!(
        value(main, env::EXPECTED_PLAN_CONTENT_DIGEST),
        Some(common::PLAN_DIGEST)
    );
    assert_eq!(value(main, env::ALLOW_DESTRUCTIVE), Some("false"));
    assert_eq!(value(main, env::SCHEMA_FROM), Some("/source/schema/schema.hcl"));
    let plan = pod(&job)
        .volumes
        .iter()
        .flatten()
        .find(|v| v.name == "plan")
        .expect("plan volume");
    let sources = plan
        .projected
        .as_ref()
        .and_then(|p| p.sources.clone())
        .unwrap_or_default();
    let files: Vec<(String, String, String, Option<i32>)> = sources
        .iter()
        .filter_map(|s| s.config_map.as_ref())
        .flat_map(|cm| {
            cm.items
                .iter()
                .flatten()
                .map(|i| (cm.name.clone(), i.key.clone(), i.path.clone(), i.mode))
        })
        .collect();
    assert_eq!(files.len(), 3);
    for (n, (name, key, path, mode)) in files.iter().enumerate() {
        assert_eq!(name, &format!("orders-plan-abc-{n:03}"));
        assert_eq!(
            (key.as_str(), path.as_str(), *mode),
            ("chunk", format!("{n:03}.plan").as_str(), Some(0o440))
        );
    }
    let mut i = intent(Operation::Apply);
    if let OperationInputs::Apply { plan, .. } = &mut i.inputs {
        plan.chunk_config_maps.clear();
    }
    assert!(matches!(build(&i), Err(WorkloadError::PlanChunks { got: 0, .. })));
}

#[test]
fn inconsistent_or_malformed_intents_are_refused() {
    let mut i: JobIntent = intent(Operation::Observe);
    i.operation = Operation::Plan;
    assert!(matches!(build(&i), Err(WorkloadError::InputsMismatch { .. })));
    let mut i = intent(Operation::Apply);
    i.operation = Operation::MigrationApply;
    assert_eq!(
        build(&i),
        Err(WorkloadError::InputsMismatch {
            operation: Operation::MigrationApply,
            inputs: Operation::Apply
        })
    );
    let mut i = intent(Operation::MigrationHistory);
    if let OperationInputs::MigrationHistory { fetch, .. } = &mut i.inputs {
        fetch.resolved_reference = "oci://registry.example:5000/migrations/orders:v1".to_owned();
    }
    assert!(matches!(build(&i), Err(WorkloadError::UnpinnedReference { .. })));
    let mut i = intent(Operation::Observe);
    i.operation_id = "op-1".to_owned();
    assert_eq!(
        build(&i),
        Err(WorkloadError::InvalidDigest {
            field: "operation_id"
        })
    );
    let mut i = intent(Operation::Plan);
    if let OperationInputs::Plan { fetch, .. } = &mut i.inputs {
        fetch.resolved_reference = "oci://registry.example/schemas/orders:v1".to_owned();
    }
    assert!(matches!(build(&i), Err(WorkloadError::UnpinnedReference { .. })));
    let mut i = intent(Operation::Verify);
    i.job_name = "x".repeat(64);
    assert!(matches!(build(&i), Err(WorkloadError::InvalidJobName(_))));
}

#[test]
fn building_is_deterministic() {
    for op in ALL_OPS {
        assert_eq!(build(&intent(op)), build(&intent(op)));
    }
}

/// The main container of a migration operation: the pulled directory, no schema input; an Apply
/// also gets the approved sequence with its digest and the migration lock timeout.
#[test]
fn a_migration_job_reads_the_pulled_directory_and_an_apply_its_approved_sequence() {
    let expected = ExpectedSequence::from_steps(&common::sequence_steps()).expect("valid");
    for op in MIGRATION_OPS {
        let job = build(&intent(op)).expect("builds");
        let main = main_container(&job);
        let apply = op == Operation::MigrationApply;
        assert_eq!(value(main, env::MIGRATIONS_DIR), Some(MIGRATIONS_DIR), "{op}");
        assert_eq!(value(main, env::CONNECT_TIMEOUT), Some("10s"), "{op}");
        for name in [env::SCHEMA_FROM, env::LOCK_TIMEOUT, env::PLAN_FILE, env::DEV_URL] {
            assert!(!env_of(main).contains_key(name), "{op}: {name}");
        }
        assert_eq!(
            value(main, env::EXPECTED_MIGRATION_SEQUENCE),
            apply.then_some(expected.json.as_str()),
            "{op}"
        );
        assert_eq!(
            value(main, env::EXPECTED_MIGRATION_SEQUENCE_DIGEST),
            apply.then_some(expected.digest.as_str()),
            "{op}"
        );
        assert_eq!(
            value(main, env::MIGRATION_LOCK_TIMEOUT),
            apply.then_some("5s"),
            "{op}"
        );
        // What the runner will compute from the variable is what the Job names.
        if apply {
            let text = value(main, env::EXPECTED_MIGRATION_SEQUENCE).expect("set");
            let digest = ptah_dataplane::sequence_digest(text).expect("the runner accepts it");
            assert_eq!(
                Some(digest.to_string().as_str()),
                value(main, env::EXPECTED_MIGRATION_SEQUENCE_DIGEST)
            );
        }
        let fetch = pod(&job)
            .init_containers
            .iter()
            .flatten()
            .find(|c| c.name == FETCH_MIGRATIONS_CONTAINER)
            .expect("fetch-migrations");
        let args = fetch.args.as_deref().unwrap_or_default();
        assert_eq!(
            &args[..6],
            ["migrations", "pull", "--out", MIGRATIONS_DIR, "--format", "json"]
        );
        assert_eq!(&args[args.len() - 2..], ["--", common::MIGRATIONS_PINNED]);
        assert_eq!(
            fetch.command.as_deref(),
            Some(&["/usr/local/bin/ptah".to_owned()][..])
        );
        let source = |c: &Container| {
            c.volume_mounts
                .iter()
                .flatten()
                .find(|m| m.mount_path == "/source")
                .map(|m| (m.name.clone(), m.read_only))
        };
        assert_eq!(
            source(fetch),
            Some(("migrations-source".to_owned(), None)),
            "{op}"
        );
        assert_eq!(
            source(main),
            Some(("migrations-source".to_owned(), Some(true))),
            "{op}"
        );
    }
}

#[test]
fn a_migration_apply_with_a_sequence_the_runner_would_refuse_is_refused() {
    let expected = ExpectedSequence::from_steps(&common::sequence_steps()).expect("valid");
    let other = ExpectedSequence::from_steps(&common::sequence_steps()[..1]).expect("valid");
    let with = |sequence: ExpectedSequence| {
        let mut i = intent(Operation::MigrationApply);
        if let OperationInputs::MigrationApply { sequence: s, .. } = &mut i.inputs {
            *s = sequence;
        }
        build(&i)
    };
    let tampered = ExpectedSequence {
        json: other.json.clone(),
        digest: expected.digest.clone(),
    };
    assert_eq!(with(tampered), Err(WorkloadError::SequenceDigestMismatch));
    let unparsable = ExpectedSequence {
        json: format!("@{}", other.json),
        digest: other.digest.clone(),
    };
    assert!(matches!(with(unparsable), Err(WorkloadError::InvalidSequence(_))));
    let malformed = ExpectedSequence {
        json: other.json.clone(),
        digest: "sha256:1234".to_owned(),
    };
    assert_eq!(
        with(malformed),
        Err(WorkloadError::InvalidDigest {
            field: "sequence.digest"
        })
    );
    // Another spelling of the same sequence is the same sequence.
    let respelled = ExpectedSequence {
        json: serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(&other.json).expect("json"),
        )
        .expect("json"),
        digest: other.digest.clone(),
    };
    assert!(with(respelled).is_ok());
    let steps: Vec<ptah_dataplane::SequenceStep> = (1..=257)
        .map(|v| ptah_dataplane::SequenceStep {
            version: v,
            checksum: "ab".to_owned(),
            transaction: "file".to_owned(),
            description: None,
        })
        .collect();
    assert_eq!(
        ExpectedSequence::from_steps(&steps),
        Err(ptah_dataplane::SequenceError::TooLong(257))
    );
}

/// `64Mi` as bytes (the only suffix the volume sizes use).
fn mebibytes(size: &str) -> u64 {
    size.strip_suffix("Mi")
        .and_then(|n| n.parse::<u64>().ok())
        .expect("a size in Mi")
        * 1024
        * 1024
}

#[test]
fn a_fetch_is_limited_below_the_volume_it_pulls_into() {
    let mut fetches = 0;
    for (op, job) in every_job() {
        let spec = pod(&job);
        for c in spec
            .init_containers
            .iter()
            .flatten()
            .filter(|c| c.name.starts_with("fetch-"))
        {
            fetches += 1;
            let args = c.args.clone().unwrap_or_default();
            let flag = |name: &str| -> u64 {
                let at = args
                    .iter()
                    .position(|a| a == name)
                    .unwrap_or_else(|| panic!("{op}: {name} in {args:?}"));
                args[at + 1].parse().expect("bytes")
            };
            let mount = c
                .volume_mounts
                .iter()
                .flatten()
                .find(|m| m.mount_path == "/source")
                .expect("source mount");
            let volume = spec
                .volumes
                .iter()
                .flatten()
                .find(|v| v.name == mount.name)
                .expect("source volume");
            let size = volume
                .empty_dir
                .as_ref()
                .and_then(|e| e.size_limit.as_ref())
                .expect("a size limit");
            let total = flag("--max-total-bytes");
            assert!(
                total < mebibytes(&size.0),
                "{op}: {total} bytes do not fit {}",
                size.0
            );
            assert!(flag("--max-file-bytes") <= total, "{op}");
            assert!(flag("--max-manifest-bytes") > 0, "{op}");
        }
    }
    assert!(fetches > 0, "no fetch container was checked");
}

#[test]
fn one_image_for_both_binaries_spares_the_install_runner_container() {
    for op in ALL_OPS {
        for access in access_variants() {
            let separate = build(&intent_with(op, access.clone())).expect("builds");
            let mut shared = intent_with(op, access);
            shared.images.runner = shared.images.executor.clone();
            let job = build(&shared).expect("builds");
            let p = pod(&job);
            let init: Vec<&str> = p
                .init_containers
                .iter()
                .flatten()
                .map(|c| c.name.as_str())
                .collect();
            assert!(!init.contains(&INSTALL_RUNNER_CONTAINER), "{op}: {init:?}");
            // No empty list: the API server would drop it and the read-back would differ.
            assert!(p.init_containers.as_ref().is_none_or(|i| !i.is_empty()), "{op}");
            assert!(
                p.volumes.iter().flatten().all(|v| v.name != "runner"),
                "{op}: a runner volume nothing fills"
            );
            let main = main_container(&job);
            assert_eq!(
                main.command.as_deref(),
                Some(&["/usr/local/bin/ptah-runner".to_owned()][..]),
                "{op}: the image's own runner"
            );
            assert!(
                main.volume_mounts.iter().flatten().all(|m| m.name != "runner"),
                "{op}"
            );
            // Otherwise the two-image Job's containers, in the same order.
            let rest: Vec<&str> = pod(&separate)
                .init_containers
                .iter()
                .flatten()
                .map(|c| c.name.as_str())
                .filter(|n| *n != INSTALL_RUNNER_CONTAINER)
                .collect();
            assert_eq!(init, rest, "{op}");
        }
    }
}
