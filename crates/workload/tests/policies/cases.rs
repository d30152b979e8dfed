//! The refused cases: each breaks one rule of a built Job, names the policy and validation that
//! refuse it, and is admitted again once exactly those validations are dropped.

use k8s_openapi::api::{
    batch::v1::Job,
    core::v1::{Container, EnvVar, EnvVarSource, LocalObjectReference, PodSpec, SecretKeySelector},
};
use ptah_dataplane::Operation;

use crate::policies::owners::{Auth, Family};

/// The policies the cases are refused by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `<release>-operation-jobs`.
    Jobs,
    /// `<release>-schema-job-secrets`.
    SchemaSecrets,
    /// `<release>-migration-job-secrets`.
    MigrationSecrets,
}

/// A refused case: what it breaks, the Job it starts from (operation, owner family, the auth its
/// owner's spec names), the validations that refuse it (each by a text of its message), and the
/// edit that breaks it.
pub struct Case {
    pub what: &'static str,
    pub op: Operation,
    pub family: Family,
    pub auth: Auth,
    pub rules: Vec<(Policy, &'static str)>,
    pub edit: fn(&mut Job, &Context),
}

/// What an edit may need of the test.
pub struct Context {
    /// The manager's ServiceAccount.
    pub manager_sa: String,
}

pub const LABELS: &str = "carries the operation labels";
pub const SUSPENDED: &str = "not suspended";
pub const OWNER: &str = "exactly one owner reference";
pub const IMAGES: &str = "pins by digest";
pub const TOKEN: &str = "mounts no ServiceAccount token";
pub const ENV_FROM: &str = "takes no envFrom";
pub const VOLUMES: &str = "volumes are emptyDirs";
pub const VALUE_FROM: &str = "from values or from secretKeyRef";
pub const SECRETS_REACH: &str = "Secrets reach only the containers";
pub const ONE_SECRET: &str = "come from one Secret";
pub const GRANT_FROM_SECRET: &str = "comes from its Secret, never from a value";
pub const GRANT_MODE: &str = "turns the grant check on";
pub const PLAIN_NAMES: &str = "plain variables are the data-plane contract's";
pub const COMMANDS: &str = "runs exactly the commands the workload builds";
pub const DOCKER_MOUNT: &str = "Docker config Secret is mounted only";
pub const HOST: &str = "shares no host namespace";
pub const RESTRICTED: &str = "Pod Security restricted";
pub const OWNER_UID: &str = "of that name, by UID";
pub const DB_URLS: &str = "database URLs a Job reads";
pub const REGISTRY: &str = "registry credentials and grants a Job reads";
pub const DOCKER_CONFIG: &str = "Docker config a Job mounts";
pub const PULL: &str = "pull Secrets a Job names";

pub fn spec(job: &mut Job) -> &mut PodSpec {
    job.spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
        .expect("pod spec")
}

pub fn container<'a>(job: &'a mut Job, name: &str) -> &'a mut Container {
    let spec = spec(job);
    spec.containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

pub fn secret_env(name: &str, secret: &str, key: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.to_owned(),
                key: key.to_owned(),
                optional: None,
            }),
            ..EnvVarSource::default()
        }),
    }
}

pub fn env_mut<'a>(job: &'a mut Job, container_name: &str) -> &'a mut Vec<EnvVar> {
    container(job, container_name).env.get_or_insert_with(Vec::new)
}

pub fn secret_ref<'a>(job: &'a mut Job, container_name: &str, var: &str) -> &'a mut SecretKeySelector {
    env_mut(job, container_name)
        .iter_mut()
        .find(|e| e.name == var)
        .and_then(|e| e.value_from.as_mut())
        .and_then(|v| v.secret_key_ref.as_mut())
        .unwrap_or_else(|| panic!("no Secret variable {var} in {container_name}"))
}

/// Every Secret reference of variable `var`, in whichever containers hold it (at least one).
pub fn secret_refs<'a>(job: &'a mut Job, var: &str) -> Vec<&'a mut SecretKeySelector> {
    let spec = spec(job);
    let refs: Vec<_> = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
        .flat_map(|c| c.env.iter_mut().flatten())
        .filter(|e| e.name == var)
        .filter_map(|e| e.value_from.as_mut().and_then(|v| v.secret_key_ref.as_mut()))
        .collect();
    assert!(!refs.is_empty(), "no Secret variable {var}");
    refs
}

/// Points every registry Secret reference of the Job (variables and the Docker config volume) at
/// `secret`, so the one-Secret rule still holds and only the owner's spec can tell.
pub fn move_registry(job: &mut Job, secret: &str) {
    let spec = spec(job);
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        for e in c.env.iter_mut().flatten() {
            if let Some(r) = e.value_from.as_mut().and_then(|v| v.secret_key_ref.as_mut())
                && e.name.starts_with("PTAH_REGISTRY_")
            {
                r.name = secret.to_owned();
            }
        }
    }
    for v in spec.volumes.iter_mut().flatten() {
        if let Some(s) = v.secret.as_mut() {
            s.secret_name = Some(secret.to_owned());
        }
    }
}

/// Removes every Secret-backed registry variable (the grants, in Docker config mode).
pub fn drop_registry_variables(job: &mut Job) {
    let spec = spec(job);
    for c in spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten())
    {
        if let Some(env) = c.env.as_mut() {
            env.retain(|e| !(e.name.starts_with("PTAH_REGISTRY_") && e.value_from.is_some()));
        }
    }
}

/// A Job whose controller owner names a PtahSchema that does not exist: no spec decides it.
pub fn ghost_owner(job: &mut Job) {
    let ghost = "ghost";
    if let Some(r) = job.metadata.owner_references.iter_mut().flatten().next() {
        r.name = ghost.to_owned();
        r.uid = "00000000-0000-4000-8000-00000000dead".to_owned();
    }
    let template = job.spec.as_mut().and_then(|s| s.template.metadata.as_mut());
    for labels in [
        job.metadata.labels.as_mut(),
        template.and_then(|m| m.labels.as_mut()),
    ]
    .into_iter()
    .flatten()
    {
        labels.insert("operator.ptah.run/schema".to_owned(), ghost.to_owned());
    }
}

/// The cases of the owner's spec, refused by the job-secrets policy of `family`.
pub fn owner_cases(family: Family) -> Vec<Case> {
    use Auth::{DockerConfig as Docker, Environment as Env};
    let (policy, registry_op, db_op): (Policy, Operation, Operation) = match family {
        Family::Schema => (Policy::SchemaSecrets, Operation::Resolve, Operation::Observe),
        Family::Migration => (
            Policy::MigrationSecrets,
            Operation::MigrationApply,
            Operation::MigrationHistory,
        ),
    };
    let rule = |text: &'static str| vec![(policy, text)];
    let mut cases = vec![
        Case {
            what: "the registry password from a foreign Secret",
            op: registry_op,
            family,
            auth: Env,
            rules: rule(REGISTRY),
            edit: |j, _| move_registry(j, "other-team-registry"),
        },
        Case {
            what: "a foreign key of the registry Secret",
            op: registry_op,
            family,
            auth: Env,
            rules: rule(REGISTRY),
            edit: |j, _| {
                for r in secret_refs(j, "PTAH_REGISTRY_PASSWORD") {
                    r.key = "admin-password".to_owned();
                }
            },
        },
        Case {
            what: "the database URL from a foreign Secret",
            op: db_op,
            family,
            auth: Env,
            rules: rule(DB_URLS),
            edit: |j, _| secret_ref(j, "ptah", "PTAH_DB_URL").name = "other-team-db".to_owned(),
        },
        Case {
            what: "the Docker config of a foreign Secret, without its grants",
            op: db_op,
            family,
            auth: Docker,
            rules: rule(DOCKER_CONFIG),
            // Without grant variables only the owner's spec can tell the Secret is foreign.
            edit: |j, _| {
                drop_registry_variables(j);
                move_registry(j, "other-team-docker");
            },
        },
        Case {
            what: "the Docker config and its grants from a foreign Secret",
            op: db_op,
            family,
            auth: Docker,
            rules: vec![(policy, DOCKER_CONFIG), (policy, REGISTRY)],
            edit: |j, _| move_registry(j, "other-team-docker"),
        },
        Case {
            what: "a pull Secret its spec does not name",
            op: db_op,
            family,
            auth: Env,
            rules: rule(PULL),
            edit: |j, _| {
                spec(j)
                    .image_pull_secrets
                    .get_or_insert_with(Vec::new)
                    .push(LocalObjectReference {
                        name: "other-team-pull".to_owned(),
                    })
            },
        },
        Case {
            what: "an owner of that name with another UID",
            op: db_op,
            family,
            auth: Env,
            rules: rule(OWNER_UID),
            edit: |j, _| {
                if let Some(r) = j.metadata.owner_references.iter_mut().flatten().next() {
                    r.uid = "00000000-0000-4000-8000-0000000000aa".to_owned();
                }
            },
        },
    ];
    if family == Family::Schema {
        cases.push(Case {
            what: "the dev URL from a foreign key",
            op: Operation::Plan,
            family,
            auth: Docker,
            rules: rule(DB_URLS),
            edit: |j, _| secret_ref(j, "ptah", "PTAH_DEV_URL").key = "admin-url".to_owned(),
        });
    }
    cases
}
