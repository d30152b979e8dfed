//! The containers of an operation Pod and what each may see.
//!
//! Credential routing (DESIGN.md §1): registry credentials reach only the Resolve/Verify main
//! container and the fetch init container (`fetch-schema`, `fetch-migrations`); the database URL
//! reaches only the main container of a database operation (the dev URL only Plan's). No
//! container gets both.

use k8s_openapi::api::core::v1::{
    Capabilities, Container, EnvVar, EnvVarSource, ResourceRequirements, SecretKeySelector as KubeSecretKey,
    SecurityContext, Volume, VolumeMount,
};
use ptah_api::shared::{RegistryAuthMode, SecretKeySelector};
use ptah_dataplane::{MAX_PLAN_BYTES, env};

use crate::{WorkloadError, intent::SourceAccess, volumes as v};

/// The UID and GID every container runs as (the image's `nonroot` user).
pub const RUN_AS: i64 = 65532;
/// The init container that copies the runner into the shared volume.
pub const INSTALL_RUNNER_CONTAINER: &str = "install-runner";
/// The init container that pulls the schema artifact.
pub const FETCH_SCHEMA_CONTAINER: &str = "fetch-schema";
/// The init container that pulls the migration directory artifact.
pub const FETCH_MIGRATIONS_CONTAINER: &str = "fetch-migrations";
/// The main container: the runner supervising `ptah`.
pub const MAIN_CONTAINER: &str = "ptah";
/// `DOCKER_CONFIG`, read by `ptah`'s registry client (`ptah_artifact::auth`).
pub const DOCKER_CONFIG_ENV: &str = env::DOCKER_CONFIG;
/// Where the kubelet writes the termination message (the runner's summary goes there).
pub const TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// Environment variables, mounts and volumes a container needs for one purpose.
#[derive(Debug, Default)]
pub(crate) struct Wiring {
    pub env: Vec<EnvVar>,
    pub mounts: Vec<VolumeMount>,
    pub volumes: Vec<Volume>,
}

/// A plain environment variable.
pub(crate) fn value(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: Some(value.into()),
        value_from: None,
    }
}

/// A variable the kubelet fills from the Pod's own metadata (downward API).
pub(crate) fn pod_field(name: &str, field_path: &str) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            field_ref: Some(k8s_openapi::api::core::v1::ObjectFieldSelector {
                api_version: Some("v1".to_owned()),
                field_path: field_path.to_owned(),
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// A variable the kubelet fills from a Secret key; the manager never sees the value.
pub(crate) fn secret(name: &str, from: &SecretKeySelector) -> EnvVar {
    secret_key(name, &from.name, &from.key, None)
}

fn secret_key(name: &str, secret: &str, key: &str, optional: Option<bool>) -> EnvVar {
    EnvVar {
        name: name.to_owned(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(KubeSecretKey {
                name: secret.to_owned(),
                key: key.to_owned(),
                optional,
            }),
            ..EnvVarSource::default()
        }),
    }
}

/// How a container reaches the registry. `runs_ptah_directly` is false for the runner, which
/// turns `PTAH_PLAIN_HTTP` into `--plain-http` itself; `DOCKER_CONFIG` is a contract variable of
/// Resolve and Verify, so both kinds of container get it unchanged.
pub(crate) fn registry_wiring(
    access: &SourceAccess,
    runs_ptah_directly: bool,
) -> Result<Wiring, WorkloadError> {
    let mut w = Wiring::default();
    if let Some(auth) = &access.registry_auth {
        // The grant keys sit in the credentials' own Secret and their names are fixed: the
        // author chooses the Secret, never which of its keys says where the credentials go.
        let mode = match auth.mode {
            RegistryAuthMode::Environment => ptah_registrygrant::MODE_ENVIRONMENT,
            RegistryAuthMode::DockerConfigJSON => ptah_registrygrant::MODE_DOCKER_CONFIG,
        };
        w.env.push(value(env::REGISTRY_GRANT_MODE, mode));
        for (name, key) in [
            (env::REGISTRY_GRANT, ptah_registrygrant::KEY_REGISTRY),
            (
                env::REGISTRY_PLAIN_HTTP_GRANT,
                ptah_registrygrant::KEY_ALLOW_PLAIN_HTTP,
            ),
            (env::REGISTRY_CA_SHA256_GRANT, ptah_registrygrant::KEY_CA_SHA256),
        ] {
            // Optional for the kubelet, so a Secret without the key is refused by the runner
            // with a reason that names the key, not left in CreateContainerConfigError.
            w.env.push(secret_key(name, &auth.name, key, Some(true)));
        }
        match auth.mode {
            RegistryAuthMode::Environment => {
                // Optional: a Secret holds either a username/password pair or a token, and the
                // registry client refuses any other combination itself.
                for (name, key) in [
                    (env::REGISTRY_USERNAME, &auth.username_key),
                    (env::REGISTRY_PASSWORD, &auth.password_key),
                    (env::REGISTRY_TOKEN, &auth.token_key),
                ] {
                    w.env.push(secret_key(name, &auth.name, key, Some(true)));
                }
            }
            RegistryAuthMode::DockerConfigJSON => {
                let key = auth
                    .docker_config_json_key
                    .as_deref()
                    .filter(|k| !k.is_empty())
                    .ok_or(WorkloadError::Empty {
                        field: "registry_auth.docker_config_json_key",
                    })?;
                w.volumes.push(v::docker_config(auth, key));
                w.mounts
                    .push(v::mount(v::DOCKER_CONFIG_VOLUME, v::DOCKER_CONFIG_HOME, true));
                w.env.push(value(env::DOCKER_CONFIG, v::DOCKER_CONFIG_DIR));
            }
        }
    }
    if let Some(ca) = &access.ca_from {
        w.volumes.push(v::config_map_file(v::CA_VOLUME, ca, "ca.pem"));
        w.mounts.push(v::mount(v::CA_VOLUME, v::CA_DIR, true));
        w.env.push(value(env::OCI_CA_FILE, v::CA_FILE));
    }
    if access.plain_http && !runs_ptah_directly {
        // `ptah` itself takes `--plain-http`; the runner turns this variable into that flag.
        w.env.push(value(env::PLAIN_HTTP, "true"));
    }
    Ok(w)
}

/// Every container's security context: no privilege, no capability, read-only root, non-root.
pub fn container_security_context() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        capabilities: Some(Capabilities {
            add: None,
            drop: Some(vec!["ALL".to_owned()]),
        }),
        run_as_non_root: Some(true),
        run_as_user: Some(RUN_AS),
        run_as_group: Some(RUN_AS),
        ..SecurityContext::default()
    }
}

fn non_empty<T>(items: Vec<T>) -> Option<Vec<T>> {
    // The API server drops empty lists; emitting none keeps the read-back comparable.
    (!items.is_empty()).then_some(items)
}

/// The common shape of every container.
fn container(
    name: &str,
    image: &str,
    command: &str,
    args: Vec<String>,
    env: Vec<EnvVar>,
    mounts: Vec<VolumeMount>,
    resources: Option<&ResourceRequirements>,
) -> Container {
    Container {
        name: name.to_owned(),
        image: Some(image.to_owned()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        command: Some(vec![command.to_owned()]),
        args: non_empty(args),
        env: non_empty(env),
        volume_mounts: non_empty(mounts),
        resources: resources.cloned(),
        security_context: Some(container_security_context()),
        termination_message_path: Some(TERMINATION_MESSAGE_PATH.to_owned()),
        termination_message_policy: Some("File".to_owned()),
        ..Container::default()
    }
}

/// `install-runner`: copies `ptah-runner` from the runner image into the `runner` volume.
pub(crate) fn install_runner(image: &str, resources: Option<&ResourceRequirements>) -> Container {
    container(
        INSTALL_RUNNER_CONTAINER,
        image,
        v::IMAGE_RUNNER_PATH,
        vec!["--install-to".to_owned(), v::RUNNER_PATH.to_owned()],
        Vec::new(),
        vec![v::mount(v::RUNNER_VOLUME, v::RUNNER_DIR, false)],
        resources,
    )
}

/// What a fetch init container pulls: the desired schema or the migration directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FetchKind {
    /// `fetch-schema`: `ptah oci pull --kind schema --out /source/schema`.
    Schema,
    /// `fetch-migrations`: `ptah migrations pull --out /source/migrations`.
    Migrations,
}

impl FetchKind {
    /// The init container's name.
    pub(crate) fn container(self) -> &'static str {
        match self {
            FetchKind::Schema => FETCH_SCHEMA_CONTAINER,
            FetchKind::Migrations => FETCH_MIGRATIONS_CONTAINER,
        }
    }

    /// The volume the artifact is pulled into (mounted at [`v::SOURCE_DIR`]) and its size limit.
    pub(crate) fn volume(self) -> (&'static str, &'static str) {
        match self {
            FetchKind::Schema => (v::SCHEMA_SOURCE_VOLUME, v::SCHEMA_SOURCE_SIZE),
            FetchKind::Migrations => (v::MIGRATIONS_SOURCE_VOLUME, v::MIGRATIONS_SOURCE_SIZE),
        }
    }

    /// The `ptah` command up to its options: each kind's own pull, which refuses another kind.
    fn command(self) -> &'static [&'static str] {
        match self {
            FetchKind::Schema => &["oci", "pull", "--kind", "schema", "--out", v::SCHEMA_DIR],
            FetchKind::Migrations => &["migrations", "pull", "--out", v::MIGRATIONS_DIR],
        }
    }
}

/// The fetch init container of `kind`: `ptah` pulling the pinned artifact into its directory
/// under `/source`, with the registry credentials and nothing else.
pub(crate) fn fetch(
    kind: FetchKind,
    image: &str,
    reference: &str,
    access: &SourceAccess,
    resources: Option<&ResourceRequirements>,
) -> Result<(Container, Vec<Volume>), WorkloadError> {
    let wiring = registry_wiring(access, true)?;
    let mut args: Vec<String> = kind.command().iter().map(|a| (*a).to_owned()).collect();
    args.extend(["--format".to_owned(), "json".to_owned()]);
    for (flag, bytes) in [
        ("--max-total-bytes", v::FETCH_MAX_TOTAL_BYTES),
        ("--max-file-bytes", v::FETCH_MAX_FILE_BYTES),
        ("--max-manifest-bytes", v::FETCH_MAX_MANIFEST_BYTES),
    ] {
        args.extend([flag.to_owned(), bytes.to_string()]);
    }
    if access.plain_http {
        args.push("--plain-http".to_owned());
    }
    // After `--` the reference can never be read as an option.
    args.extend(["--".to_owned(), reference.to_owned()]);
    let mut envs = vec![
        value(env::HOME, v::FETCH_WORK_DIR),
        value(env::TMPDIR, v::FETCH_WORK_DIR),
        // `ptah` runs here without the runner: its typed refusal reaches the manager through the
        // kubelet's termination message instead of a frame.
        value(env::TERMINATION_LOG, TERMINATION_MESSAGE_PATH),
    ];
    envs.extend(wiring.env);
    let mut mounts = vec![
        v::mount(kind.volume().0, v::SOURCE_DIR, false),
        v::mount(v::FETCH_WORK_VOLUME, v::FETCH_WORK_DIR, false),
    ];
    mounts.extend(wiring.mounts);
    let c = container(
        kind.container(),
        image,
        v::IMAGE_PTAH_PATH,
        args,
        envs,
        mounts,
        resources,
    );
    Ok((c, wiring.volumes))
}

/// The main container: the runner supervising `ptah` for `op`, the copy `install-runner` made
/// when `installed`, else the image's own. `env` is ordered by the caller; mounts beyond runner
/// and work come from the operation.
pub(crate) fn main(
    image: &str,
    installed: bool,
    op: ptah_dataplane::Operation,
    env: Vec<EnvVar>,
    extra_mounts: Vec<VolumeMount>,
    resources: Option<&ResourceRequirements>,
) -> Container {
    let args = [
        "--operation",
        op.as_str(),
        "--ptah-binary",
        v::IMAGE_PTAH_PATH,
        "--work-dir",
        v::WORK_DIR,
        "--max-plan-bytes",
        &MAX_PLAN_BYTES.to_string(),
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let mut mounts = Vec::new();
    if installed {
        mounts.push(v::mount(v::RUNNER_VOLUME, v::RUNNER_DIR, true));
    }
    mounts.push(v::mount(v::WORK_VOLUME, v::WORK_DIR, false));
    mounts.extend(extra_mounts);
    let runner = if installed {
        v::RUNNER_PATH
    } else {
        v::IMAGE_RUNNER_PATH
    };
    let mut c = container(MAIN_CONTAINER, image, runner, args, env, mounts, resources);
    c.working_dir = Some(v::WORK_DIR.to_owned());
    c
}
