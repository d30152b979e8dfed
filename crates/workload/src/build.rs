//! From intent to Job: check the intent, then assemble Pod, containers and volumes.

use k8s_openapi::{
    api::{
        batch::v1::{Job, JobSpec},
        core::v1::{
            EnvVar, PodSecurityContext, PodSpec, PodTemplateSpec, SeccompProfile, Volume, VolumeMount,
        },
    },
    apimachinery::pkg::apis::meta::v1::ObjectMeta,
};
use ptah_api::shared::ConfigMapKeySelector;
use ptah_dataplane::{PROTOCOL_VERSION, env, scope};

use crate::{
    JobIntent, OperationInputs, WorkloadError,
    check::check,
    containers::{self as c, FetchKind, RUN_AS, secret, value},
    intent::{DatabaseAccess, Fetch, SourceAccess},
    labels, volumes as v,
};

/// Orders variables as the data-plane contract lists them, so the Job reads like the contract.
fn contract_order(mut vars: Vec<EnvVar>) -> Vec<EnvVar> {
    let rank = |name: &str| {
        env::VARS
            .iter()
            .position(|v| v.name == name)
            .unwrap_or(usize::MAX)
    };
    vars.sort_by_key(|e| rank(&e.name));
    vars
}

/// The database variables of the main container of a database operation.
fn database_env(intent: &JobIntent, db: &DatabaseAccess) -> Vec<EnvVar> {
    let mut out = vec![
        value(env::COORDINATION_DIGEST, &db.coordination_digest),
        value(env::EXPECTED_DATABASE_ENGINE, &db.engine),
        secret(env::DB_URL, &db.url_from),
    ];
    // Absent until the manager knows it: a read-only runner then reports the identity it found.
    if let Some(identity) = &db.expected_target_identity {
        out.push(value(env::EXPECTED_TARGET_IDENTITY_DIGEST, identity));
    }
    if let Some(t) = &db.connect_timeout {
        out.push(value(env::CONNECT_TIMEOUT, t));
    }
    if intent.operation.is_mutating() {
        let d = &intent.deadlines;
        // `check` refused a mutating intent without them.
        if let Some(t) = d.dispatch_not_after {
            out.push(value(env::DISPATCH_NOT_AFTER, t.to_string()));
        }
        if let Some(t) = d.execution_not_after {
            out.push(value(env::EXECUTION_NOT_AFTER, t.to_string()));
        }
        out.push(value(
            env::TERMINATION_GRACE_PERIOD_SECONDS,
            d.termination_grace_period_seconds.to_string(),
        ));
    }
    out
}

/// The main container's environment, its extra mounts, and the volumes behind them; plus the
/// fetch init container for database operations.
struct Plan {
    env: Vec<EnvVar>,
    mounts: Vec<VolumeMount>,
    volumes: Vec<Volume>,
    fetch: Option<(FetchKind, Fetch)>,
}

/// What a registry operation's main container gets: the reference, the registry access, and
/// the verification policy when it verifies (a Verify, or a Resolve that verifies).
fn registry_wiring(
    reference: &str,
    access: &SourceAccess,
    policy: Option<&ConfigMapKeySelector>,
) -> Result<c::Wiring, WorkloadError> {
    let mut wiring = c::registry_wiring(access, false)?;
    wiring.env.insert(0, value(env::REQUESTED_REFERENCE, reference));
    if let Some(policy) = policy {
        wiring.env.push(value(env::VERIFICATION_POLICY, v::POLICY_FILE));
        wiring
            .mounts
            .push(v::mount(v::POLICY_VOLUME, v::POLICY_DIR, true));
        wiring
            .volumes
            .push(v::config_map_file(v::POLICY_VOLUME, policy, "policy.yaml"));
    }
    Ok(wiring)
}

fn operation_plan(intent: &JobIntent) -> Result<Plan, WorkloadError> {
    let mut env_vars = vec![
        value(env::PROTOCOL_VERSION, PROTOCOL_VERSION.to_string()),
        value(env::OPERATION_ID, &intent.operation_id),
        value(env::TMPDIR, v::WORK_DIR),
    ];
    let mut mounts = Vec::new();
    let mut volumes = Vec::new();
    let mut fetch = None;
    match &intent.inputs {
        OperationInputs::Resolve {
            requested_reference,
            access,
            policy,
        } => {
            let wiring = registry_wiring(requested_reference, access, policy.as_ref())?;
            env_vars.extend(wiring.env);
            mounts.extend(wiring.mounts);
            volumes.extend(wiring.volumes);
        }
        OperationInputs::Verify {
            resolved_reference,
            requested_reference,
            access,
            policy,
        } => {
            let wiring = registry_wiring(resolved_reference, access, Some(policy))?;
            env_vars.push(value(env::AUTHORED_REFERENCE, requested_reference));
            env_vars.extend(wiring.env);
            mounts.extend(wiring.mounts);
            volumes.extend(wiring.volumes);
        }
        OperationInputs::Observe { db, fetch: f } => {
            env_vars.extend(database_env(intent, db));
            env_vars.push(value(env::SCHEMA_FROM, v::SCHEMA_FILE));
            fetch = Some((FetchKind::Schema, f.clone()));
        }
        OperationInputs::Plan {
            db,
            dev_url_from,
            fetch: f,
        } => {
            env_vars.extend(database_env(intent, db));
            env_vars.push(value(env::SCHEMA_FROM, v::SCHEMA_FILE));
            if let Some(dev) = dev_url_from {
                env_vars.push(secret(env::DEV_URL, dev));
            }
            // Omitted when empty: the contract reads an absent list as no entries.
            if !db.exclude.is_empty() {
                env_vars.push(value(env::EXCLUDE, scope::encode(&db.exclude)));
            }
            if !db.protected_tables.is_empty() {
                env_vars.push(value(env::PROTECTED_TABLES, scope::encode(&db.protected_tables)));
            }
            fetch = Some((FetchKind::Schema, f.clone()));
        }
        OperationInputs::Apply { db, fetch: f, plan } => {
            env_vars.extend(database_env(intent, db));
            env_vars.push(value(env::SCHEMA_FROM, v::SCHEMA_FILE));
            env_vars.push(value(env::EXPECTED_PLAN_CONTENT_DIGEST, &plan.content_digest));
            env_vars.push(value(env::PLAN_FILE, v::PLAN_DIR));
            env_vars.push(value(env::ALLOW_DESTRUCTIVE, plan.allow_destructive.to_string()));
            if plan.allow_table_copy {
                env_vars.push(value(env::ALLOW_TABLE_COPY, "true"));
            }
            if let Some(t) = &db.lock_timeout {
                env_vars.push(value(env::LOCK_TIMEOUT, t));
            }
            mounts.push(v::mount(v::PLAN_VOLUME, v::PLAN_DIR, true));
            volumes.push(v::plan(&plan.chunk_config_maps));
            fetch = Some((FetchKind::Schema, f.clone()));
        }
        OperationInputs::MigrationHistory { db, fetch: f } => {
            env_vars.extend(database_env(intent, db));
            env_vars.push(value(env::MIGRATIONS_DIR, v::MIGRATIONS_DIR));
            fetch = Some((FetchKind::Migrations, f.clone()));
        }
        OperationInputs::MigrationApply {
            db,
            fetch: f,
            sequence,
        } => {
            env_vars.extend(database_env(intent, db));
            env_vars.push(value(env::MIGRATIONS_DIR, v::MIGRATIONS_DIR));
            env_vars.push(value(env::EXPECTED_MIGRATION_SEQUENCE, &sequence.json));
            env_vars.push(value(env::EXPECTED_MIGRATION_SEQUENCE_DIGEST, &sequence.digest));
            if let Some(t) = &db.lock_timeout {
                env_vars.push(value(env::MIGRATION_LOCK_TIMEOUT, t));
            }
            fetch = Some((FetchKind::Migrations, f.clone()));
        }
    }
    if let Some(ca) = intent.inputs.database().and_then(|db| db.ca_from.as_ref()) {
        env_vars.push(value(env::DB_CA_FILE, v::DB_CA_FILE));
        mounts.push(v::mount(v::DB_CA_VOLUME, v::DB_CA_DIR, true));
        volumes.push(v::config_map_file(v::DB_CA_VOLUME, ca, "ca.pem"));
    }
    if let Some(delivery) = &intent.result_delivery {
        env_vars.extend([
            value(env::RESULT_DELIVERY, env::RESULT_DELIVERY_DURABLE),
            value(env::RESULT_ENDPOINT, &delivery.endpoint),
            value(env::RESULT_SERVER_NAME, &delivery.server_name),
            value(env::RESULT_CA_FILE, v::RESULT_CA_FILE),
            value(env::RESULT_TICKET_FILE, v::RESULT_TICKET_FILE),
            c::pod_field(env::POD_NAME, "metadata.name"),
            c::pod_field(env::POD_UID, "metadata.uid"),
        ]);
        // Only the main container (the runner) reads the ticket.
        mounts.push(v::mount(v::RESULT_VOLUME, v::RESULT_DIR, true));
        volumes.push(v::result_delivery(&delivery.config_map));
    }
    if let Some((kind, _)) = &fetch {
        // The main container reads what the fetch pulled and cannot change it.
        mounts.push(v::mount(kind.volume().0, v::SOURCE_DIR, true));
    }
    env_vars.push(value(env::HOME, v::WORK_DIR));
    Ok(Plan {
        env: contract_order(env_vars),
        mounts,
        volumes,
        fetch,
    })
}

/// Builds the Job of `intent`, or refuses the intent.
pub fn build(intent: &JobIntent) -> Result<Job, WorkloadError> {
    check(intent)?;
    let (pod_labels, pod_annotations) = labels::pod_metadata(intent)?;
    let exec = &intent.execution;
    let resources = exec.resources.as_ref();
    let plan = operation_plan(intent)?;

    // A runner of its own image is copied in by an init container; from the executor's image it
    // runs where it is, which spares every operation Pod one container start (about a second of
    // the kubelet noticing it ended, measured by `cargo xtask bench converge`).
    let installed = !intent.images.shared();
    let mut init = Vec::new();
    let mut volumes = Vec::new();
    if installed {
        init.push(c::install_runner(&intent.images.runner, resources));
        volumes.push(v::memory(v::RUNNER_VOLUME, v::RUNNER_SIZE));
    }
    volumes.push(v::memory(v::WORK_VOLUME, v::WORK_SIZE));
    if let Some((kind, fetch)) = &plan.fetch {
        let (container, fetch_volumes) = c::fetch(
            *kind,
            &intent.images.executor,
            &fetch.resolved_reference,
            &fetch.access,
            resources,
        )?;
        init.push(container);
        let (source, size) = kind.volume();
        volumes.push(v::memory(source, size));
        volumes.push(v::memory(v::FETCH_WORK_VOLUME, v::FETCH_WORK_SIZE));
        volumes.extend(fetch_volumes);
    }
    volumes.extend(plan.volumes);
    let main = c::main(
        &intent.images.executor,
        installed,
        intent.operation,
        plan.env,
        plan.mounts,
        resources,
    );

    let deadline = intent.deadlines.active_deadline_seconds;
    let pod = PodSpec {
        // The API server drops an empty list; none keeps the read-back comparable.
        init_containers: (!init.is_empty()).then_some(init),
        containers: vec![main],
        volumes: Some(volumes),
        restart_policy: Some("Never".to_owned()),
        active_deadline_seconds: Some(deadline),
        termination_grace_period_seconds: Some(intent.deadlines.termination_grace_period_seconds),
        // The Pod needs no Kubernetes access: no token, no service environment variables.
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(RUN_AS),
            run_as_group: Some(RUN_AS),
            fs_group: Some(RUN_AS),
            fs_group_change_policy: Some("OnRootMismatch".to_owned()),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".to_owned(),
                localhost_profile: None,
            }),
            ..PodSecurityContext::default()
        }),
        service_account_name: exec.service_account_name.clone(),
        image_pull_secrets: exec.image_pull_secrets.clone().filter(|s| !s.is_empty()),
        node_selector: exec.node_selector.clone().filter(|s| !s.is_empty()),
        tolerations: exec.tolerations.clone().filter(|s| !s.is_empty()),
        affinity: exec.affinity.clone(),
        runtime_class_name: exec.runtime_class_name.clone(),
        priority_class_name: exec.priority_class_name.clone(),
        ..PodSpec::default()
    };
    Ok(Job {
        metadata: ObjectMeta {
            name: Some(intent.job_name.clone()),
            namespace: Some(intent.namespace.clone()),
            labels: Some(labels::operator_labels(intent)),
            annotations: Some(labels::operator_annotations(intent)),
            owner_references: Some(vec![intent.owner.clone()]),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            parallelism: Some(1),
            completions: Some(1),
            pod_replacement_policy: Some("Failed".to_owned()),
            active_deadline_seconds: Some(deadline),
            // No ttlSecondsAfterFinished: the manager adds it once the result is read.
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    annotations: Some(pod_annotations),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..JobSpec::default()
        }),
        status: None,
    })
}
